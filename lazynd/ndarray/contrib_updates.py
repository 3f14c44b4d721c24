"""The optimizer functions of MXNet 1.x's ``contrib`` modules, for ``mx.nd.contrib`` and ``mx.sym.contrib``.

``adamw_update``/``mp_adamw_update`` take ``rescale_grad`` as a number or an array of one element;
``multi_adamw_update``, ``multi_mp_adamw_update``, ``multi_lamb_update`` and ``multi_mp_lamb_update``
take lists of weights, gradients and states and interleave them for the operators
``_multi_adamw_update`` ... (see :mod:`lazynd.ops.contrib_optimizer_ops`).  One definition serves
both faces: each hands in how to find its operator functions and how to turn a number into a
``(1,)`` input.

Examples
--------
>>> import lazynd as mx
>>> w, g = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, -2.0])
>>> mean, var = mx.nd.zeros((2,)), mx.nd.zeros((2,))
>>> mx.nd.contrib.adamw_update(w, g, mean, var, rescale_grad=1.0, lr=0.1, eta=1.0, out=w).asnumpy().round(4)
array([ 0.6838, -0.6838], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["contrib_update_functions"]


def _interleave(*lists: Sequence[Any]) -> list[Any]:
    return [item for group in zip(*lists, strict=True) for item in group]


def contrib_update_functions(
    operator: Callable[[str], Callable[..., Any]], scale_input: Callable[[Any, Any], Any]
) -> dict[str, Callable[..., Any]]:
    """The contrib optimizer functions of one face.

    ``operator(name)`` is the face's function of the registered operator ``name``;
    ``scale_input(value, like)`` is ``rescale_grad`` as an input of shape ``(1,)`` (a number made
    into one on ``like``'s device, an array or symbol passed on).
    """

    def call(op_name: str, arrays: list[Any], out: Any, name: str | None, params: dict[str, Any]) -> Any:
        given = {"out": out, "name": name}
        return operator(op_name)(*arrays, **params, **{k: v for k, v in given.items() if v is not None})

    def adamw(op_name: str, arrays: list[Any], rescale_grad: Any, out: Any, name: Any, params: dict) -> Any:
        return call(op_name, [*arrays, scale_input(rescale_grad, arrays[0])], out, name, params)

    def multi_adamw(op_name: str, lists: tuple, rescale_grad: Any, size: int, out: Any, name: Any, params: dict) -> Any:
        arrays = [*_interleave(*lists), scale_input(rescale_grad, lists[0][0])]
        return call(op_name, arrays, out, name, {"num_weights": size or len(lists[0]), **params})

    def multi_lamb(
        op_name: str, lists: tuple, step_count: Any, lrs: Any, wds: Any, count: int, out: Any, params: dict
    ) -> Any:
        rates = {"step_count": step_count, "learning_rates": lrs, "wds": wds, "num_tensors": count or len(lists[0])}
        return call(op_name, _interleave(*lists), out, None, {**rates, **params})

    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, out=None, name=None, **kwargs):
        """AdamW of one weight (``_adamw_update``); skipped where ``rescale_grad`` is 0, inf or NaN."""
        return adamw(
            "_adamw_update", [weight, grad, mean, var], rescale_grad, out, name, {"lr": lr, "eta": eta, **kwargs}
        )

    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, out=None, name=None, **kwargs):
        """AdamW of a float16 weight through its float32 master copy ``weight32`` (``_mp_adamw_update``)."""
        arrays = [weight, grad, mean, var, weight32]
        return adamw("_mp_adamw_update", arrays, rescale_grad, out, name, {"lr": lr, "eta": eta, **kwargs})

    def multi_adamw_update(
        weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0, **kwargs
    ):
        """AdamW of a list of weights in one operation (``_multi_adamw_update``)."""
        rates = {"lrs": lrs, "wds": wds, "etas": etas, **kwargs}
        return multi_adamw("_multi_adamw_update", (weights, grads, mean, var), rescale_grad, size, out, name, rates)

    def multi_mp_adamw_update(
        weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None, size=0, **kwargs
    ):
        """Multi-precision AdamW of a list of weights in one operation (``_multi_mp_adamw_update``)."""
        lists = (weights, grads, mean, var, weights32)
        rates = {"lrs": lrs, "wds": wds, "etas": etas, **kwargs}
        return multi_adamw("_multi_mp_adamw_update", lists, rescale_grad, size, out, name, rates)

    def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0, **kwargs):
        """LAMB of a list of tensors in one operation (``_multi_lamb_update``)."""
        lists = (weights, grads, mean, var)
        return multi_lamb("_multi_lamb_update", lists, step_count, lrs, wds, num_tensors, out, kwargs)

    def multi_mp_lamb_update(
        weights, grads, mean, var, weights32, step_count, lrs, wds, out=None, num_tensors=0, **kwargs
    ):
        """Multi-precision LAMB of a list of tensors in one operation (``_multi_mp_lamb_update``)."""
        lists = (weights, grads, mean, var, weights32)
        return multi_lamb("_multi_mp_lamb_update", lists, step_count, lrs, wds, num_tensors, out, kwargs)

    return {
        "adamw_update": adamw_update,
        "mp_adamw_update": mp_adamw_update,
        "multi_adamw_update": multi_adamw_update,
        "multi_mp_adamw_update": multi_mp_adamw_update,
        "multi_lamb_update": multi_lamb_update,
        "multi_mp_lamb_update": multi_mp_lamb_update,
    }
