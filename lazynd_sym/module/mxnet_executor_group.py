"""MXNet 1.x's ``mx.module.executor_group.DataParallelExecutorGroup``, with its method signatures.

Modules users wrote on ``BaseModule`` (the ``Module``/``MutableModule`` copies of the detection
and segmentation code bases) build this group themselves and call it as MXNet's Module does:
``forward(data_batch, is_train)``, ``backward(out_grads)``, ``update_metric(metric, labels,
pre_sliced)``, ``get_params(arg_params, aux_params)``, ``get_output_shapes()``.  Our own Module
drives :class:`~lazynd_sym.module.executor_group.ModuleExecutorGroup` through its own methods;
this subclass only gives those steps MXNet's names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd.io import DataBatch

from .executor_group import ModuleExecutorGroup
from .params import reject_unknown_params

__all__ = ["DataParallelExecutorGroup"]


class DataParallelExecutorGroup(ModuleExecutorGroup):
    """A :class:`ModuleExecutorGroup` (same constructor) called with MXNet 1.x's methods.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> group = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], None, [("data", (4, 3))], [],
    ...                                   ["fc_weight", "fc_bias"], for_training=False, inputs_need_grad=False)
    >>> group.set_params({"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros(2)}, {})
    >>> group.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]))
    >>> group.get_output_shapes(), group.get_outputs()[0].asnumpy().tolist()
    ([('fc_output', (4, 2))], [[3.0, 3.0], [3.0, 3.0], [3.0, 3.0], [3.0, 3.0]])
    """

    def forward(self, data_batch: DataBatch | None = None, is_train: bool | None = None) -> None:  # type: ignore[override]
        """Load ``data_batch`` and run forward (``is_train`` defaults to ``for_training``); without a
        batch, run forward on the inputs already loaded."""
        is_train = self.for_training if is_train is None else bool(is_train)
        if data_batch is None:
            super().forward(is_train=is_train)
        else:
            self.forward_batch(data_batch, is_train)

    def backward(self, out_grads: Sequence[Any] | None = None) -> None:  # type: ignore[override]
        """Backward on every device, from the loss outputs or from ``out_grads`` (full batch, one per output)."""
        self.backward_with(out_grads)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:  # type: ignore[override]
        """Update ``eval_metric`` against the batch's ``labels`` (one list per device when ``pre_sliced``)."""
        self.update_metric_with(eval_metric, labels, pre_sliced)

    def get_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Write the parameters and auxiliary states, averaged over the devices, into the two dicts."""
        self.copy_params_to(arg_params, aux_params)

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any], allow_extra: bool = False) -> None:
        """Copy the values onto every device; a name the symbol lacks is an error unless ``allow_extra``."""
        if not allow_extra:
            reject_unknown_params("DataParallelExecutorGroup.set_params", self.symbol, arg_params, aux_params)
        super().set_params(arg_params, aux_params)

    def get_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, full-batch shape)`` of each output."""
        return list(self.output_shapes)

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0, end: int | None = None) -> list[Any]:
        """The outputs ``begin:end`` of the last forward, merged over the devices unless asked otherwise."""
        return super().get_outputs(merge_multi_context)[begin:end]
