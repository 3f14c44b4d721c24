"""MXNet's ``check_consistency`` for symbols: one symbol bound on several devices and dtypes must
give the same outputs and gradients; users reach it as ``mx.test_utils.check_consistency``.

Like :mod:`lazynd.testing_symbolic` it uses only a ``Symbol``'s methods, so ``lazynd`` never
imports ``lazynd_sym`` here; given an operator name it hands over to :func:`lazynd.testing.check_consistency`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .testing import assert_almost_equal
from .testing import check_consistency as check_op_consistency

# MXNet's tolerances of check_consistency, by the dtype of the executor compared
_CONSISTENCY_TOL = {
    np.dtype(np.float16): 1e-1,
    np.dtype(np.float32): 1e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.uint8): 0,
    np.dtype(np.int32): 0,
}


def check_consistency(
    sym: Any,
    ctx_list: Sequence[Any] | None = None,
    scale: float = 1.0,
    grad_req: Any = "write",
    arg_params: dict | None = None,
    aux_params: dict | None = None,
    tol: Any = None,
    raise_on_err: bool = True,
    ground_truth: dict | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    use_uniform: bool = False,
    rand_type: Any = np.float64,
    **op_form: Any,
) -> Any:
    """MXNet's check that a symbol gives the same outputs and gradients on several devices and dtypes.

    ``ctx_list`` holds one dict per executor: ``{'ctx': mx.gpu(0), 'data': (2, 3),
    'type_dict': {'data': np.float16}}`` (keywords of ``simple_bind``); ``sym`` is one symbol
    or one per entry.  Arguments are drawn in name order from N(0, ``scale``), or with
    ``use_uniform`` from U(-0.92 ``scale``, 0.92 ``scale``), as ``rand_type`` (as MXNet 1.9 draws
    them: a seeded NumPy gives the same values), or taken from ``arg_params``; auxiliary states
    are zero (or ``aux_params``).  Every executor runs a test forward, then a
    training forward and a backward with its outputs as head gradients; each result is compared
    with the most precise executor's (or ``ground_truth``) at ``tol`` (a number, or a dict by
    dtype; MXNet's defaults), or at ``rtol``/``atol`` where given (MXNet 1.9's keywords); with
    ``equal_nan`` NaNs in the same places agree.  Returns the ground truth: outputs and gradients by name.

    With an operator name (``check_consistency('exp', [x])``) this is
    :func:`lazynd.testing.check_consistency`.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    >>> ctx_list = [{"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float64}},
    ...             {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float32}}]
    >>> sorted(check_consistency(net, ctx_list))
    ['data', 'fc_bias', 'fc_output', 'fc_weight']
    """
    if not (isinstance(sym, (list, tuple)) or hasattr(sym, "list_arguments")):  # an operator and its inputs
        return check_op_consistency(sym, ctx_list, rtol=rtol, atol=atol, **op_form)  # type: ignore[arg-type]
    if op_form:
        raise TypeError(f"check_consistency: unexpected keyword(s) {sorted(op_form)}")
    if ctx_list is None or len(ctx_list) < 2:
        raise ValueError("check_consistency: ctx_list needs at least two entries to compare")
    symbols = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(symbols) != len(ctx_list):
        raise ValueError(f"check_consistency: {len(symbols)} symbols for {len(ctx_list)} ctx_list entries")
    if tol is None:
        tol = _CONSISTENCY_TOL
    elif not isinstance(tol, dict):
        tol = {dtype: tol for dtype in _CONSISTENCY_TOL}
    executors = [s.simple_bind(grad_req=grad_req, **dict(spec)) for s, spec in zip(symbols, ctx_list, strict=True)]
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for name, arr in sorted(executors[0].arg_dict.items()):
        if name in arg_params:
            continue
        if use_uniform:
            drawn = np.random.uniform(low=-0.92 * scale, high=0.92 * scale, size=arr.shape)
        else:
            drawn = np.random.normal(size=arr.shape, scale=scale)
        arg_params[name] = drawn.astype(rand_type)
    for name in executors[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in executors:
        for name, arr in exe.arg_dict.items():
            arr[:] = np.asarray(arg_params[name]).astype(arr.dtype)
        for name, arr in exe.aux_dict.items():
            arr[:] = np.broadcast_to(np.asarray(aux_params[name], dtype=arr.dtype), arr.shape)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in executors]
    truth_index = max(range(len(executors)), key=lambda i: dtypes[i].itemsize)

    def compare(kind: str, results: list[dict]) -> None:
        truth = ground_truth if ground_truth is not None else results[truth_index]
        for i, (exe_results, dtype) in enumerate(zip(results, dtypes, strict=True)):
            if i == truth_index and ground_truth is None:
                continue
            for name, value in exe_results.items():
                if name not in truth:
                    continue
                bound = tol.get(dtype, 1e-3)
                try:
                    assert_almost_equal(
                        value,
                        truth[name],
                        rtol=bound if rtol is None else rtol,
                        atol=bound if atol is None else atol,
                        names=(f"{kind} {name} of {ctx_list[i]}", "truth"),
                        equal_nan=equal_nan,
                    )
                except AssertionError as err:
                    if raise_on_err:
                        raise
                    print(err)

    # outputs by the first symbol's names, position by position (the symbols may differ in names)
    output_names = symbols[0].list_outputs()

    def outputs_of(exe: Any) -> dict[str, np.ndarray]:
        return {n: o.asnumpy() for n, o in zip(output_names, exe.outputs, strict=True)}

    for exe in executors:
        exe.forward(is_train=False)
    results = [outputs_of(exe) for exe in executors]
    compare("test forward", results)
    if grad_req != "null":
        for exe in executors:
            exe.forward(is_train=True)
            exe.backward(exe.outputs)
        grads = [{n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None} for exe in executors]
        results = [{**outputs_of(exe), **g} for exe, g in zip(executors, grads, strict=True)]
        compare("train", results)
    return ground_truth if ground_truth is not None else results[truth_index]


__all__ = ["check_consistency"]
