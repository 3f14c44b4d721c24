"""Every array an operator writes is claimed as written, so later reads wait for the write.

An operator that updates an input in place (an optimizer's state, ``reset_arrays``) or its
auxiliary states in training (``BatchNorm``'s moving mean and variance) must push the write
of that array's var; otherwise a read through the array runs before the update lands (on a
GPU the read copies on another stream).  Each check makes the call wait for slow host work
on an array it reads, then reads the updated array at once: it must show the update.

The operators come from the registry (every one whose declarations say it writes an input
or an aux state), their sample calls from the operator sweep's table.
"""

from __future__ import annotations

import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.engine import get_engine
from lazynd.ops import registry
from lazynd.runtime.plan import plan_for

sys.path.insert(0, str(Path(__file__).parent.parent / "ops"))
from sweep_cases import CASES  # noqa: E402 - the sweep's sample calls (tests/ops)

# operators that write an input or an aux state but have no sample call in the sweep
NOT_SAMPLED = {
    "Custom": "its writes are those of the user's operator: test_custom_writes_are_ordered below",
    "reset_arrays": "no outputs: test_reset_arrays_writes_are_ordered below",
    "RNN": "no sample call (its parameters are required); it declares no written input or aux state",
}


def _writes_state(op: Any) -> bool:
    """Whether ``op`` declares an aux state or, with its sample call's (or default) parameters, a
    written input (an operator needing parameters that has no sample call counts as writing)."""
    try:
        attrs = op.parse(CASES[op.name].params if op.name in CASES else {})
        return bool(op.aux) or bool(op.mutated_inputs(attrs))
    except Exception:
        return op.name not in CASES


def _writing_operators() -> list[str]:
    names = []
    for name in registry.list_ops():
        op = registry.get(name)
        if name.startswith(("_backward", "_test_", "_sym_test_")) or name in NOT_SAMPLED or op.name != name:
            continue
        if name in CASES and _writes_state(op):
            names.append(name)
    return names


WRITING = _writing_operators()


def test_the_writing_operators_are_found():
    # the list is derived: a declaration the registry loses would silently drop its checks
    assert {"sgd_mom_update", "adam_update", "mp_sgd_mom_update", "multi_sgd_mom_update", "BatchNorm"} <= set(WRITING)
    assert len(WRITING) >= 30
    unsampled = [
        n
        for n in registry.list_ops()
        if n not in CASES
        and n not in NOT_SAMPLED
        and not n.startswith(("_backward", "_test_", "_sym_test_"))
        and registry.get(n).name == n
        and _writes_state(registry.get(n))
    ]
    assert not unsampled, f"operators that may write an input or aux state with no check here: {unsampled}"


def _values(name: str) -> list[np.ndarray]:
    case = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [spec.make(rng) for spec in case.inputs] + [spec.make(rng) for spec in case.aux]


def _written(name: str, n_arrays: int) -> tuple[list[int], int]:
    """The indices of the arrays a training call of ``name`` writes, and an index it only reads."""
    op = registry.get(name)
    attrs = op.parse(CASES[name].params)
    n_in = len(op.input_names(attrs))
    written = list(op.mutated_inputs(attrs)) + (list(range(n_in, n_arrays)) if op.aux else [])
    read_only = next(i for i in range(n_in) if i not in written and op.reads_value(attrs, i))
    return written, read_only


def _slow_write(array: mx.nd.NDArray) -> None:
    """Host work that takes a while, claimed as a write of ``array`` (its values stay as they are)."""
    get_engine().push(time.sleep, (0.2,), [], [array.var], name="slow_host_work")


def _expected(name: str, ctx: mx.Context, values: list[np.ndarray], out: bool) -> list[np.ndarray]:
    arrays = [mx.nd.array(v, ctx=ctx, dtype=v.dtype) for v in values]
    _call(name, arrays, out)
    mx.nd.waitall()
    return [a.asnumpy() for a in arrays]


def _call(name: str, arrays: list, out: bool, recording: bool = False) -> None:
    kwargs = dict(CASES[name].params)
    if out:
        kwargs["out"] = arrays[0]  # the update written into its weight, as an optimizer calls it
    with mx.autograd.record() if recording else mx.autograd.train_mode():
        getattr(mx.nd, name)(*arrays, **kwargs)


def _writes_into_its_first_input(name: str, values: list[np.ndarray]) -> bool:
    """Whether the call's one visible output has the first input's shape and dtype (a weight)."""
    op = registry.get(name)
    arrays = [mx.nd.array(v, dtype=v.dtype) for v in values]
    plan = plan_for(op, arrays, dict(CASES[name].params), True)
    first = (tuple(values[0].shape), np.dtype(values[0].dtype))
    return plan.n_visible == 1 and (plan.out_shapes[0], np.dtype(plan.out_types[0])) == first


@pytest.mark.parametrize("recording", [False, True], ids=["training", "recording"])
@pytest.mark.parametrize("out", [False, True], ids=["fresh output", "out=weight"])
@pytest.mark.parametrize("name", WRITING)
def test_an_imperative_call_claims_what_it_writes(name: str, out: bool, recording: bool, ctx: mx.Context) -> None:
    values = _values(name)
    if out and not _writes_into_its_first_input(name, values):
        pytest.skip("its output is no weight (several outputs, or another dtype): no out= to give")
    written, gate = _written(name, len(values))
    expected = _expected(name, ctx, values, out)
    for i in written:
        arrays = [mx.nd.array(v, ctx=ctx, dtype=v.dtype) for v in values]
        mx.nd.waitall()
        _slow_write(arrays[gate])
        _call(name, arrays, out, recording)
        np.testing.assert_array_equal(arrays[i].asnumpy(), expected[i], err_msg=f"{name}: input {i} read too early")


@pytest.mark.parametrize("name", WRITING)
def test_a_training_pass_of_an_executor_claims_what_it_writes(name: str, ctx: mx.Context) -> None:
    op = registry.get(name)
    values = _values(name)
    written, gate = _written(name, len(values))
    n_in = len(op.input_names(op.parse(CASES[name].params)))
    expected = _expected(name, ctx, values, False)
    names = [f"in{i}" for i in range(n_in)]
    net = getattr(sym, name)(*[sym.Variable(n) for n in names], **CASES[name].params)
    shapes = {n: v.shape for n, v in zip(names, values, strict=False)}
    types = {n: v.dtype for n, v in zip(names, values, strict=False)}
    ex = net.simple_bind(ctx, grad_req="null", type_dict=types, **shapes)
    held = [ex.arg_dict[n] for n in names] + list(ex.aux_arrays)
    for i in written:
        for array, v in zip(held, values, strict=True):
            array[:] = v
        mx.nd.waitall()
        _slow_write(held[gate])
        ex.forward(is_train=True)
        np.testing.assert_array_equal(held[i].asnumpy(), expected[i], err_msg=f"{name}: input {i} read too early")


def test_every_writing_call_plans_the_writes_of_its_arrays():
    # white-box: the plan's access names each written array's var among the call's writes
    for name in WRITING:
        values = _values(name)
        written, _ = _written(name, len(values))
        arrays = [mx.nd.array(v, dtype=v.dtype) for v in values]
        plan = plan_for(registry.get(name), arrays, dict(CASES[name].params), True)
        n_in = plan.n_in
        vars_written = plan.access.writes([a.var for a in arrays[:n_in]], [a.var for a in arrays[n_in:]], plan.ctx)
        assert all(any(v is arrays[i].var for v in vars_written) for i in written), name


def test_reset_arrays_writes_are_ordered(ctx: mx.Context) -> None:
    a, b = mx.nd.ones((3,), ctx=ctx), mx.nd.ones((2, 2), ctx=ctx)
    _slow_write(a)
    mx.nd.reset_arrays(a, b, num_arrays=2)
    np.testing.assert_array_equal(b.asnumpy(), np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(a.asnumpy(), np.zeros((3,), np.float32))


def test_a_random_draw_claims_the_generator(ctx: mx.Context) -> None:
    # white-box: a draw writes its context's generator var, so draws are ordered among themselves
    from lazynd.runtime.random_state import generator_for

    plan = plan_for(registry.get("_random_uniform"), [], {"shape": (2,), "ctx": ctx}, False)
    assert generator_for(ctx).var in plan.access.extra_writes(ctx)
    x = mx.nd.ones((4,), ctx=ctx)
    plan = plan_for(registry.get("Dropout"), [x], {"p": 0.5}, True)
    assert generator_for(ctx).var in plan.access.extra_writes(ctx)
