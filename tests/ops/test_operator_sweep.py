"""Every registered operator through ``nd``, a bound executor and (where one calls it) an
arithmetic dunder, on every context, against its NumPy reference and a numerical gradient.

The sample calls live in tests/ops/sweep_cases.py (generated ones) and sweep_table_*.py (explicit
ones); a new operator must add one there or be listed in :data:`NOT_SWEPT` with the reason
(``test_every_operator_is_swept``).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from sweep_cases import (
    CASES,
    DUNDERS,
    NOT_SWEPT,
    Case,
    case_for,
    excluded,
    missing_cupy_api,
    sample_values,
    swept_operators,
)

import lazynd as mx
import lazynd_sym as sym
from lazynd.autograd import replay
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal, check_gradient

# operators whose autograd backward is not replayed, and why (lazynd.autograd.replay): none now;
# an operator whose rules hand back arrays made without an engine operation would go here
NOT_REPLAYED: dict[str, str] = {}


_excluded, _case, _values = excluded, case_for, sample_values


def _skip_without_cupy_api(case: Case, ctx: mx.Context) -> None:
    """Skip a GPU check whose operator calls a CuPy API this CuPy lacks (the emulator's)."""
    missing = missing_cupy_api(case) if ctx.device_type == "gpu" else None
    if missing:
        pytest.skip(f"this CuPy has no {missing} (the CUDA emulator's fake CuPy lacks it)")


SWEPT = swept_operators()


def _params() -> list:
    """The swept operators, a known bug marked strict xfail."""
    params = []
    for n in SWEPT:
        case = _case(n)
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        params.append(pytest.param(n, marks=marks, id=n))
    return params


def test_every_operator_is_swept():
    missing = [n for n in registry.list_ops() if not _excluded(n) and n not in NOT_SWEPT and _case(n) is None]
    assert not missing, f"operators without a sweep case (add one to a sweep_table_*.py, or to NOT_SWEPT): {missing}"
    # (an operator whose parameters all have defaults gets an automatic case even when it is not swept)
    stale = [n for n in NOT_SWEPT if not registry.exists(n) or n in CASES]
    assert not stale, f"NOT_SWEPT lists operators that are gone or now have a case: {stale}"


def _run_nd(name: str, case: Case, inputs: list, aux: list, ctx: mx.Context) -> list[np.ndarray]:
    arrays = [mx.nd.array(v, ctx=ctx, dtype=v.dtype) for v in inputs + aux]
    params = dict(case.params)
    if not arrays:
        params["ctx"] = ctx
    if case.random:
        mx.random.seed(7)
    out = getattr(mx.nd, name)(*arrays, **params)
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _bind(name: str, case: Case, inputs: list, ctx: mx.Context) -> Any:
    """The operator ``name`` as a one-node symbol (inputs ``in0``, ``in1``...) bound for ``inputs``'s shapes and dtypes."""
    names = [f"in{i}" for i in range(len(inputs))]
    net = getattr(sym, name)(*[sym.Variable(n) for n in names], **case.params)
    shapes = {n: v.shape for n, v in zip(names, inputs, strict=True)}
    types = {n: v.dtype for n, v in zip(names, inputs, strict=True)}
    return net.simple_bind(ctx, grad_req="null", type_dict=types or None, **shapes)


def _feed(ex: Any, inputs: list, aux: list) -> None:
    """Copy ``inputs`` and ``aux`` into an executor made by :func:`_bind`."""
    for i, v in enumerate(inputs):
        ex.arg_dict[f"in{i}"][:] = v
    for array, v in zip(ex.aux_arrays, aux, strict=True):
        array[:] = v


def _run_executor(name: str, case: Case, inputs: list, aux: list, ctx: mx.Context) -> list[np.ndarray]:
    ex = _bind(name, case, inputs, ctx)
    _feed(ex, inputs, aux)
    if case.random:
        mx.random.seed(7)
    ex.forward(is_train=False)
    return [o.asnumpy() for o in ex.outputs]


@pytest.mark.parametrize("name", _params())
def test_nd_executor_dunder_and_reference_agree(name, ctx):
    case = _case(name)
    _skip_without_cupy_api(case, ctx)
    inputs, aux = _values(name, case)
    via_nd = _run_nd(name, case, inputs, aux, ctx)
    via_executor = _run_executor(name, case, inputs, aux, ctx)
    assert len(via_nd) == len(via_executor), f"{name}: nd gave {len(via_nd)} outputs, the executor {len(via_executor)}"
    for i, (a, b) in enumerate(zip(via_nd, via_executor, strict=True)):
        assert_almost_equal(a, b, case.rtol, case.atol, names=(f"{name} output {i} via nd", "via executor"))
    if name in DUNDERS:
        arrays = [mx.nd.array(v, ctx=ctx) for v in inputs]
        got = DUNDERS[name](*arrays, **case.params).asnumpy()
        assert_almost_equal(got, via_nd[0], names=(f"{name} via its dunder", "via nd"))
    if case.reference is not None:
        expected = case.reference(*inputs)
        expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
        assert len(expected) == len(via_nd), f"{name}: {len(via_nd)} outputs, the reference gave {len(expected)}"
        for i, (got, want) in enumerate(zip(via_nd, expected, strict=True)):
            assert_almost_equal(got, np.asarray(want), case.rtol, case.atol, names=(f"{name} output {i}", "NumPy"))


GRADIENT = [n for n in SWEPT if _case(n).grad and registry.get(n).gradient is not None and _case(n).inputs]


@pytest.mark.parametrize("name", GRADIENT)
def test_gradient_matches_central_differences(name):
    case = _case(name)
    inputs, aux = _values(name, case)
    if case.xfail:
        pytest.xfail(case.xfail)
    # the float inputs the rule differentiates (never indices or labels: a step across an integer jumps)
    analytic = check_gradient(name, inputs, case.params, ctx=mx.cpu(), aux=aux, wrt=[])
    wrt = [i for i, spec in enumerate(case.inputs) if not spec.integer and analytic[i] is not None]
    check_gradient(name, inputs, case.params, ctx=mx.cpu(), aux=aux, wrt=wrt)


def _heads(name: str, case: Case, inputs: list, aux: list) -> list[np.ndarray]:
    """The head gradients :func:`check_gradient` draws (seed 0), one per visible output."""
    rng = np.random.default_rng(0)
    return [rng.normal(size=o.shape) for o in _run_nd(name, case, inputs, aux, mx.cpu())]


def _executor_gradients(name: str, case: Case, inputs: list, aux: list, wrt: list[int], ctx: mx.Context) -> list:
    """The gradients of ``inputs[wrt]`` from a bound executor's backward pass, in float64."""
    names = [f"in{i}" for i in range(len(inputs))]
    net = getattr(sym, name)(*[sym.Variable(n) for n in names], **case.params)
    grad_req = {n: "write" if i in wrt else "null" for i, n in enumerate(names)}
    shapes = {n: v.shape for n, v in zip(names, inputs, strict=True)}
    ex = net.simple_bind(ctx, grad_req=grad_req, type_dict=dict.fromkeys(names, np.float64), **shapes)
    for n, v in zip(names, inputs, strict=True):
        ex.arg_dict[n][:] = v
    for array, v in zip(ex.aux_arrays, aux, strict=True):
        array[:] = v
    ex.forward(is_train=False)
    ex.backward([mx.nd.array(h, ctx=ctx, dtype=np.float64) for h in _heads(name, case, inputs, aux)])
    return [ex.grad_dict[names[i]].asnumpy() for i in wrt]


@pytest.mark.parametrize("name", GRADIENT)
def test_autograd_gradient_matches_executor_and_central_differences(name, ctx):
    # mx.autograd records the nd call and runs the operator's rule on the engine: its gradient is
    # the executor's, and the central differences'
    case = _case(name)
    _skip_without_cupy_api(case, ctx)
    if case.xfail:
        pytest.xfail(case.xfail)
    inputs, aux = _values(name, case)
    by_rule = check_gradient(name, inputs, case.params, ctx=mx.cpu(), aux=aux, wrt=[])
    wrt = [i for i, spec in enumerate(case.inputs) if not spec.integer and by_rule[i] is not None]
    by_autograd = check_gradient(name, inputs, case.params, ctx=ctx, aux=aux, wrt=wrt, autograd=True)
    by_executor = _executor_gradients(name, case, inputs, aux, wrt, ctx)
    for i, want in zip(wrt, by_executor, strict=True):
        assert_almost_equal(by_autograd[i], want, 1e-7, 1e-9, names=(f"{name} d/d input {i} (autograd)", "executor"))


@pytest.mark.parametrize("name", GRADIENT)
def test_replayed_autograd_pass_matches_its_rules_run_again(name, ctx, monkeypatch):
    # the third backward of the same recorded call is one replayed operation where the rules'
    # work can be replayed (lazynd.autograd.replay): it gives, on new arrays with new head
    # gradients, what running the rules again gives
    case = _case(name)
    _skip_without_cupy_api(case, ctx)
    if case.xfail:
        pytest.xfail(case.xfail)
    inputs, aux = _values(name, case)
    monkeypatch.setattr(replay, "ENABLED", True)  # whatever LAZYND_AUTOGRAD_REPLAY says
    replay.forget_programs()

    def gradients(seed: int) -> list:
        return check_gradient(name, inputs, case.params, ctx=ctx, aux=aux, wrt=[], seed=seed, autograd=True)

    gradients(0)  # the graph noted
    gradients(0)  # captured
    replayed = gradients(1)
    kept = [p for p in replay._programs.values() if p is not replay.NOT_REPLAYABLE]
    assert bool(kept) != (name in NOT_REPLAYED), f"{name}: replayed {bool(kept)}, NOT_REPLAYED says otherwise"
    monkeypatch.setattr(replay, "ENABLED", False)
    for i, (a, b) in enumerate(zip(replayed, gradients(1), strict=True)):
        assert (a is None) == (b is None)
        if a is not None:
            assert_almost_equal(a, b, 1e-12, 1e-14, names=(f"{name} d/d input {i} (replayed)", "rules"))


@pytest.mark.parametrize("name", _params())
def test_cpu_pinned_arrays_compute_as_cpu_ones(name):
    # cpu_pinned is host memory run by the CPU's kernels (page-locked where CUDA gives it): every
    # operator, through nd and a bound executor, gives there what it gives on cpu(0)
    case = _case(name)
    inputs, aux = _values(name, case)
    on_cpu = _run_nd(name, case, inputs, aux, mx.cpu())
    for how, run in (("nd", _run_nd), ("executor", _run_executor)):
        on_pinned = run(name, case, inputs, aux, mx.cpu_pinned())
        assert len(on_pinned) == len(on_cpu)
        for i, (a, b) in enumerate(zip(on_pinned, on_cpu, strict=True)):
            assert_almost_equal(a, b, case.rtol, case.atol, names=(f"{name} output {i} on cpu_pinned via {how}", "cpu"))


def _captures_streams() -> bool:
    if mx.num_gpus() == 0:
        return False
    import cupy

    from lazynd.backend.cuda.graphs import capture_supported

    return capture_supported(cupy)


@pytest.mark.gpu
@pytest.mark.skipif(
    not _captures_streams(),
    reason="needs a GPU whose CuPy captures streams (none visible, or the CUDA emulator's CuPy)",
)
@pytest.mark.parametrize("name", _params())
def test_executor_graph_replays_follow_new_inputs(name, monkeypatch):
    """Every operator in an executor whose forward pass replays as a CUDA graph (``LAZYND_CUDA_GRAPHS``):
    three forwards on new inputs each (eager, captured, replayed) give what ``nd`` gives for those
    inputs.  A kernel that read a host value at the call would replay a stale one here.  An operator
    whose pass cannot be captured runs eagerly (the warning names why) and must still agree."""
    case = _case(name)
    if case.random:
        pytest.skip("draws random numbers: executors holding such operators replay no graphs")
    ctx = mx.gpu(0)
    _skip_without_cupy_api(case, ctx)
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    ex = _bind(name, case, _values(name, case)[0], ctx)
    for k in range(3):
        rng = np.random.default_rng(zlib.crc32(name.encode()) + k)
        inputs = [spec.make(rng) for spec in case.inputs]
        aux = [spec.make(rng) for spec in case.aux]
        _feed(ex, inputs, aux)
        ex.forward(is_train=False)
        got = [o.asnumpy() for o in ex.outputs]
        want = _run_nd(name, case, inputs, aux, ctx)
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            assert_almost_equal(
                b, a, case.rtol, case.atol, names=(f"{name} output {i}, forward {k} of a graphed executor", "via nd")
            )
    graphs = ex._graphs
    if graphs is not None and "forward" in graphs.failures:
        import warnings

        warnings.warn(f"{name}: its pass was not captured: {graphs.failures['forward']}", stacklevel=1)
