"""Checks of ``lazynd_sym`` symbols, as MXNet's ``test_utils`` has them; users reach them as ``mx.test_utils.<name>``.

``check_symbolic_forward`` and ``check_symbolic_backward`` compare a bound symbol's outputs and
gradients with expected arrays, ``check_numeric_gradient`` its backward with central
differences and ``check_consistency`` its results across devices and dtypes (``check_speed``,
which times it, is :mod:`lazynd.testing_speed`).  Each takes a ``Symbol`` and uses only its
methods, so ``lazynd`` never imports ``lazynd_sym`` here.  The checks of one operator are :mod:`lazynd.testing`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .context import Context
from .testing import assert_almost_equal, default_context
from .testing import check_consistency as check_op_consistency
from .testing_tolerances import default_numeric_eps, get_tolerance


def _named(sym: Any, values: Any, names: list[str], what: str) -> dict[str, np.ndarray]:
    """``values`` (a list in ``names`` order, or a dict) as a dict of NumPy arrays."""
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{what}: unknown name(s) {unknown}, the symbol has {names}")
        return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in values.items()}
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"{what}: {len(values)} arrays given, the symbol has {len(names)} ({names})")
    return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in zip(names, values, strict=False)}


def _dtype_for(value: np.ndarray, dtype: Any) -> Any:
    """``dtype``, or with MXNet's ``dtype="asnumpy"`` the array's own dtype."""
    return value.dtype if isinstance(dtype, str) and dtype == "asnumpy" else dtype


def _bind(sym: Any, location: dict, aux: dict, ctx: Context, dtype: Any, grad_req: Any = "write") -> Any:
    from . import ndarray as nd

    args = {k: nd.array(v, ctx=ctx, dtype=_dtype_for(v, dtype)) for k, v in location.items()}
    grads = {k: nd.zeros(v.shape, ctx=ctx, dtype=_dtype_for(v, dtype)) for k, v in location.items()}
    aux_nd = {k: nd.array(v, ctx=ctx, dtype=_dtype_for(v, dtype)) for k, v in aux.items()}
    return sym.bind(ctx, args, args_grad=grads, grad_req=grad_req, aux_states=aux_nd or None)


def _grad_reqs(names: Sequence[str], grad_req: Any) -> dict[str, str]:
    """MXNet's ``grad_req`` forms (a string, a list, a dict: missing names get ``'null'``) by name."""
    if isinstance(grad_req, str):
        return {name: grad_req for name in names}
    if isinstance(grad_req, dict):
        return {name: grad_req.get(name, "null") for name in names}
    return dict(zip(names, grad_req, strict=False))


def check_symbolic_forward(
    sym: Any,
    location: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    ctx: Context | None = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> list[Any]:
    """Bind ``sym`` to ``location`` (list or dict of arrays), run forward, compare with ``expected``.

    Returns the executor's outputs (NDArrays, as MXNet's does); tolerances left as None come
    from MXNet's tables by dtype.

    The arrays are bound in ``dtype``; MXNet's ``dtype="asnumpy"`` keeps each one's own (here and
    in :func:`check_symbolic_backward` and :func:`check_numeric_gradient`).

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> x = sym.Variable("x")
    >>> outputs = check_symbolic_forward(sym.exp(x), [np.zeros(2)], [np.ones(2)])
    """
    ctx = ctx or default_context()
    location = _named(sym, location, sym.list_arguments(), "location")
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    exe = _bind(sym, location, aux, ctx, dtype, grad_req="null")
    exe.forward(is_train=False)
    outputs = [o.asnumpy() for o in exe.outputs]
    expected_list = [expected[k] for k in sym.list_outputs()] if isinstance(expected, dict) else list(expected)
    if len(expected_list) != len(outputs):
        raise AssertionError(f"the symbol has {len(outputs)} output(s), {len(expected_list)} expected arrays given")
    for name, got, want in zip(sym.list_outputs(), outputs, expected_list, strict=False):
        assert_almost_equal(
            got, np.asarray(want), rtol, atol, names=(f"output {name}", "expected"), equal_nan=equal_nan
        )
    return list(exe.outputs)


def check_symbolic_backward(
    sym: Any,
    location: Any,
    out_grads: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    grad_req: Any = "write",
    ctx: Context | None = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, Any]:
    """Run forward and backward with head gradients ``out_grads``; compare argument gradients with ``expected``.

    ``expected`` is a list in ``sym.list_arguments()`` order or a dict (names left
    out are not checked, nor are arguments whose ``grad_req`` is ``'null'``, which get
    no gradient).  Returns the gradient NDArrays by name (as MXNet does); tolerances left as
    None come from MXNet's tables by dtype.

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> x = sym.Variable("x")
    >>> grads = check_symbolic_backward(sym.exp(x), [np.zeros(2)], [np.ones(2)], [np.ones(2)])
    """
    from . import ndarray as nd

    ctx = ctx or default_context()
    names = sym.list_arguments()
    location = _named(sym, location, names, "location")
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    want = _named(sym, expected, names, "expected")
    exe = _bind(sym, location, aux, ctx, dtype, grad_req=grad_req)
    exe.forward(is_train=True)
    heads = _named(sym, out_grads, sym.list_outputs(), "out_grads")
    exe.backward([nd.array(heads[k], ctx=ctx, dtype=_dtype_for(heads[k], dtype)) for k in sym.list_outputs()])
    grad_arrays = {k: g for k, g in zip(names, exe.grad_arrays, strict=False) if g is not None}
    grads = {k: g.asnumpy() for k, g in grad_arrays.items()}
    reqs = _grad_reqs(names, grad_req)
    for name, value in want.items():
        if reqs.get(name) == "null":
            continue
        if name not in grads:
            raise AssertionError(f"no gradient was computed for argument '{name}'")
        assert_almost_equal(
            grads[name], value, rtol, atol, names=(f"gradient of {name}", "expected"), equal_nan=equal_nan
        )
    return grad_arrays


def _grad_requests(grad_nodes: Any, names: list[str]) -> dict[str, str]:
    """``grad_nodes`` of :func:`check_numeric_gradient` (None, names, or a dict of grad_req) as grad_req by name."""
    if grad_nodes is None:
        return dict.fromkeys(names, "write")
    requests = dict(grad_nodes) if isinstance(grad_nodes, dict) else dict.fromkeys(grad_nodes, "write")
    unknown = [n for n in requests if n not in names]
    if unknown:
        raise ValueError(f"grad_nodes: unknown argument(s) {unknown}, the symbol has {names}")
    for name, req in requests.items():
        if req not in ("write", "add", "null"):
            raise ValueError(f"grad_nodes: grad_req {req!r} for argument '{name}', expected 'write', 'add' or 'null'")
    return requests


def check_numeric_gradient(
    sym: Any,
    location: Any,
    aux_states: Any = None,
    numeric_eps: Any = None,
    rtol: float = 1e-2,
    atol: float | None = None,
    grad_nodes: Sequence[str] | dict[str, str] | None = None,
    use_forward_train: bool = True,
    ctx: Context | None = None,
    dtype: Any = np.float64,
    check_eps: float | None = None,
) -> None:
    """Compare ``sym``'s backward with central differences of ``sum(outputs * random_heads)``.

    Runs in float64 by default (MXNet used float32 and a larger ``numeric_eps``).
    ``grad_nodes`` restricts the check to some arguments (default: all); as in MXNet it may
    be a dict of ``grad_req`` by argument: ``'write'`` and ``'add'`` (onto random initial
    gradients) are checked against central differences, ``'null'`` must leave the gradient
    untouched.  ``numeric_eps`` left as None is MXNet's step for the bound dtype (2**-14 for float64,
    2**-9 for float32, 2**-6 for float16: a step finer than the dtype resolves reads zero differences);
    a dict maps dtypes to steps.  ``check_eps`` is MXNet 0.9's name for the relative tolerance (it overrides ``rtol``).

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> check_numeric_gradient(sym.exp(sym.Variable("x")), [np.random.rand(2, 3)])
    """
    from . import ndarray as nd

    if check_eps is not None:
        rtol = check_eps
    ctx = ctx or default_context()
    names = sym.list_arguments()
    location = _named(sym, location, names, "location")
    location = {k: v.astype(_dtype_for(v, dtype)) for k, v in location.items()}
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    requests = _grad_requests(grad_nodes, names)
    nodes = list(requests)
    # as MXNet: a dict binds every argument it does not name with grad_req 'null'
    bound_req = {n: requests.get(n, "null") for n in names} if isinstance(grad_nodes, dict) else "write"
    exe = _bind(sym, location, aux, ctx, dtype, grad_req=bound_req)
    rng = np.random.default_rng(0)
    initial = {k: rng.normal(size=g.shape) for k, g in zip(names, exe.grad_arrays, strict=False) if g is not None}
    for k, g in zip(names, exe.grad_arrays, strict=False):
        if g is not None:
            g[:] = initial[k]
    exe.forward(is_train=use_forward_train)
    heads = [rng.normal(size=o.shape) for o in exe.outputs]
    exe.backward([nd.array(h, ctx=ctx, dtype=_dtype_for(h, dtype)) for h in heads])
    numeric_eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    analytic = {k: g.asnumpy() for k, g in zip(names, exe.grad_arrays, strict=False) if g is not None}
    for name, req in requests.items():
        if req == "null":
            # no gradient may be written into the array of an argument bound with grad_req 'null'
            got = analytic.get(name, initial.get(name))
            if got is not None:
                assert_almost_equal(got, initial[name], 0, 0, names=(f"gradient of {name} ('null')", "initial"))
        elif req == "add" and name in analytic:
            analytic[name] = analytic[name] - initial[name]
    nodes = [n for n in nodes if requests[n] != "null"]

    def objective() -> float:
        # aux states change in training forwards; restore them so every evaluation sees the same ones
        for k, v in aux.items():
            exe.aux_dict[k][:] = v
        exe.forward(is_train=use_forward_train)
        return float(sum(np.sum(o.asnumpy() * h) for o, h in zip(exe.outputs, heads, strict=False)))

    for name in nodes:
        if name not in analytic:
            raise AssertionError(f"no gradient was computed for argument '{name}'")
        values = location[name].copy()
        flat = values.reshape(-1)
        numeric = np.zeros(values.size)
        for j in range(flat.size):
            saved = flat[j]
            flat[j] = saved + numeric_eps
            exe.arg_dict[name][:] = values
            plus = objective()
            flat[j] = saved - numeric_eps
            exe.arg_dict[name][:] = values
            minus = objective()
            flat[j] = saved
            numeric[j] = (plus - minus) / (2 * numeric_eps)
        exe.arg_dict[name][:] = values
        assert_almost_equal(
            analytic[name],
            numeric.reshape(values.shape),
            rtol,
            atol if atol is not None else 1e-4,
            names=(f"gradient of {name} (backward)", "numeric"),
        )


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


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether two symbols' graphs have the same operator at every node of their JSON, in order
    (names and parameters may differ).  MXNet 1.9.1 compares only the shorter graph's nodes; here a
    graph with more nodes is a different structure."""
    ops1 = [node["op"] for node in json.loads(sym1.tojson())["nodes"]]
    ops2 = [node["op"] for node in json.loads(sym2.tojson())["nodes"]]
    return ops1 == ops2
