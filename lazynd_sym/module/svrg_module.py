"""``mx.contrib.svrg_optimization.svrg_module.SVRGModule``: a Module trained with stochastic
variance reduced gradients (SVRG, Johnson and Zhang, 2013).

Every ``update_freq`` epochs the module takes a snapshot of its weights and the mean gradient
over the whole training set at that snapshot (:meth:`SVRGModule.update_full_grads`). Each batch's
gradient is then replaced, in place, by ``g(w) - g(w_snapshot) + full_gradient`` when
:meth:`SVRGModule.update` applies it (after ``backward`` the gradient arrays still hold the batch's
own gradient, as in MXNet), ``g(w_snapshot)`` coming from a second module that holds the snapshot.
Its ``fit`` resets the data at each epoch's start (and at each snapshot), not at its end, as
MXNet's does, so a seeded shuffling iterator gives MXNet's batch orders. As in MXNet, the full
gradient divides the sum over batches by their count less the last batch's padding share.

Unlike MXNet 1.9.1, each snapshot's full gradient starts from zero (MXNet adds the previous
snapshot's into the new sum) and the parameters' ``lr_mult``/``wd_mult`` apply (MXNet's SVRG
optimizer drops them).  Nor does ``init_optimizer`` zero the weights where MXNet 1.9.1 uses a
KVStore (given a KVStore object, or a name on several devices): it pulls its zeroed
``<name>_full`` keys into the executors' weights there, so its first epoch starts from zero
weights.

Examples
--------
>>> import lazynd as mx
>>> from lazynd.contrib.svrg_optimization.svrg_module import SVRGModule
>>> net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1), name="lro")
>>> mod = SVRGModule(net, label_names=["lro_label"], update_freq=2)
>>> it = mx.io.NDArrayIter(mx.nd.ones((8, 3)), mx.nd.ones((8,)), batch_size=4, label_name="lro_label")
>>> mod.fit(it, num_epoch=2, eval_metric="mse")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lazynd import io as mx_io
from lazynd import ndarray as nd
from lazynd.errors import DataError, LazyNDError

from .module import Module


class SVRGModule(Module):
    """A :class:`Module` whose updates use SVRG's variance-reduced gradients.

    ``update_freq`` is the number of epochs between full-gradient snapshots; :meth:`fit` takes
    them itself, a hand-written loop calls :meth:`update_full_grads` before its batches.
    """

    def __init__(
        self,
        symbol: Any,
        data_names: Sequence[str] = ("data",),
        label_names: Sequence[str] | None = ("softmax_label",),
        logger: Any = None,
        context: Any = None,
        work_load_list: Sequence[float] | None = None,
        fixed_param_names: Sequence[str] | None = None,
        state_names: Sequence[str] | None = None,
        group2ctxs: Any = None,
        compression_params: dict | None = None,
        update_freq: int = 1,
    ) -> None:
        if isinstance(update_freq, bool) or not isinstance(update_freq, int) or update_freq <= 0:
            raise LazyNDError(
                f"SVRGModule: update_freq must be a positive int (epochs between full gradients), got {update_freq!r}"
            )
        args = (symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names, state_names)
        super().__init__(*args, group2ctxs=group2ctxs, compression_params=compression_params)
        self.update_freq = update_freq
        # the snapshot weights and their gradients
        self._mod_aux = Module(*args, group2ctxs=group2ctxs, compression_params=compression_params)
        self._full_grads: list[list[Any]] | None = None

    def bind(
        self,
        data_shapes: Any,
        label_shapes: Any = None,
        for_training: bool = True,
        inputs_need_grad: bool = False,
        force_rebind: bool = False,
        shared_module: Any = None,
        grad_req: Any = "write",
    ) -> None:
        """Bind as :meth:`Module.bind`, and the snapshot module beside it when training."""
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, None, grad_req)

    def update_full_grads(self, train_data: mx_io.DataIter) -> None:
        """Snapshot the current weights and average their gradient over every batch of ``train_data``
        (reset first, and left at its end, as MXNet's: a loop resets it before its batches)."""
        if not self._mod_aux.binded:
            raise LazyNDError("SVRGModule.update_full_grads: bind the module for training first")
        arg_params, aux_params = self.get_params()
        # only here: set_params (fit's sync of each epoch's end included) leaves the snapshot alone
        self._mod_aux.init_params(None, arg_params, aux_params, force_init=True)
        snapshot = self._mod_aux._bound_group("update_full_grads")
        sums = [
            [nd.zeros(grad.shape, ctx=grad.context, dtype=grad.dtype) for grad in per_device]
            for per_device in snapshot.grad_arrays
        ]
        batches, pad = 0, 0
        train_data.reset()
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            for total, per_device in zip(sums, snapshot.grad_arrays, strict=True):
                for acc, grad in zip(total, per_device, strict=True):
                    acc += grad
            batches, pad = batches + 1, batch.pad or 0
        if batches == 0:
            raise DataError("SVRGModule.update_full_grads: train_data gave no batch")
        count = batches - pad / train_data.batch_size
        self._full_grads = [[acc / count for acc in total] for total in sums]

    def forward(self, data_batch: mx_io.DataBatch | list[mx_io.DataBatch], is_train: bool | None = None) -> None:
        """Run the batch forward, through the snapshot weights too when training after a snapshot."""
        super().forward(data_batch, is_train)
        if (self.for_training if is_train is None else is_train) and self._full_grads is not None:
            self._mod_aux.forward(data_batch, is_train=True)

    def backward(self, out_grads: Any = None) -> None:
        """Backward through the current weights, and the snapshot's after a snapshot; the gradient
        arrays hold the batch's own gradient ``g(w)`` until :meth:`update`, as in MXNet."""
        super().backward(out_grads)
        if self._full_grads is not None:
            self._mod_aux.backward(out_grads)

    def update(self) -> None:
        """Turn each gradient into ``g(w) - g(w_snapshot) + full_gradient`` in place, then apply it."""
        if self._full_grads is None:
            raise LazyNDError(
                "SVRGModule.update: no full gradient yet; call update_full_grads(train_data) first "
                "(fit does it every update_freq epochs)"
            )
        current = self._bound_group("update").grad_arrays
        snapshot = self._mod_aux._bound_group("update").grad_arrays
        for per_device, snapshot_per_device, full_per_device in zip(current, snapshot, self._full_grads, strict=True):
            for grad, snapshot_grad, full_grad in zip(per_device, snapshot_per_device, full_per_device, strict=True):
                grad[:] = grad - snapshot_grad + full_grad
        super().update()

    def _begin_epoch(self, epoch: int, train_data: mx_io.DataIter) -> None:
        # MXNet's SVRGModule.fit resets the data at each epoch's start, not at its end
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()

    def _end_epoch(self, epoch: int, train_data: mx_io.DataIter) -> None:
        """Leave ``train_data`` as the epoch left it: the next epoch resets it first, as in MXNet."""
