"""Checks of ``lazynd_sym`` symbols, as MXNet's ``test_utils`` has them; users reach them as ``mx.test_utils.<name>``.

``check_symbolic_forward`` and ``check_symbolic_backward`` compare a bound symbol's outputs and
gradients with expected arrays, ``check_numeric_gradient`` its backward with central
differences (``check_consistency``, its results across devices and dtypes, is
:mod:`lazynd.testing_consistency`; ``check_speed``, which times it, :mod:`lazynd.testing_speed`).  Each takes a ``Symbol`` and uses only its
methods, so ``lazynd`` never imports ``lazynd_sym`` here.  The checks of one operator are :mod:`lazynd.testing`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .context import Context
from .errors import OperatorError
from .testing import assert_almost_equal, default_context
from .testing_tolerances import default_numeric_eps, get_tolerance


def _named(sym: Any, values: Any, names: list[str], what: str, leading: bool = False) -> dict[str, np.ndarray]:
    """``values`` (a list in ``names`` order, or a dict) as a dict of NumPy arrays; with ``leading``
    a list may be shorter than ``names`` and names the first ones (MXNet's expected gradients)."""
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{what}: unknown name(s) {unknown}, the symbol has {names}")
        return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in values.items()}
    values = list(values)
    if len(values) > len(names) or (len(values) < len(names) and not leading):
        raise ValueError(f"{what}: {len(values)} arrays given, the symbol has {len(names)} ({names})")
    return {k: np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v) for k, v in zip(names, values, strict=False)}


def _refuse_sparse(where: str, argument: str, stypes: Any) -> None:
    """Only dense gradients exist in lazynd: MXNet's storage-type dicts may name ``'default'`` only."""
    sparse = {k: v for k, v in (stypes or {}).items() if v != "default"}
    if sparse:
        raise OperatorError(f"{where}: {argument} {sparse} is not supported; lazynd has dense storage only ('default')")


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
    """Bind ``sym`` to ``location`` (list or dict of arrays), run forward, compare with ``expected``
    (a list of fewer arrays than outputs checks the leading outputs, as MXNet's).

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
    # fewer expected arrays check the leading outputs, as MXNet's; more name outputs that do not exist
    if len(expected_list) > len(outputs):
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
    grad_stypes: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, Any]:
    """Run forward and backward with head gradients ``out_grads``; compare argument gradients with ``expected``.

    ``expected`` is a list in ``sym.list_arguments()`` order (a shorter list gives the leading
    arguments' gradients, as MXNet's) or a dict (names left out are not checked, nor are
    arguments whose ``grad_req`` is ``'null'``, which get no gradient).  Returns the gradient
    NDArrays by name (as MXNet does); tolerances left as None come from MXNet's tables by dtype.

    Examples
    --------
    >>> import numpy as np, lazynd_sym as sym
    >>> x = sym.Variable("x")
    >>> grads = check_symbolic_backward(sym.exp(x), [np.zeros(2)], [np.ones(2)], [np.ones(2)])
    """
    _refuse_sparse("check_symbolic_backward", "grad_stypes", grad_stypes)
    from . import ndarray as nd

    ctx = ctx or default_context()
    names = sym.list_arguments()
    location = _named(sym, location, names, "location")
    aux = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    want = _named(sym, expected, names, "expected", leading=True)
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
    grad_stype_dict: Any = None,
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
    _refuse_sparse("check_numeric_gradient", "grad_stype_dict", grad_stype_dict)
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


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether two symbols' graphs have the same operator at every node of their JSON, in order
    (names and parameters may differ).  MXNet 1.9.1 compares only the shorter graph's nodes; here a
    graph with more nodes is a different structure."""
    ops1 = [node["op"] for node in json.loads(sym1.tojson())["nodes"]]
    ops2 = [node["op"] for node in json.loads(sym2.tojson())["nodes"]]
    return ops1 == ops2
