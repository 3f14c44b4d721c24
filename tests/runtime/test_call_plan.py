"""The runtime's call plans: one rule for what a call reads and writes, for nd and executors alike."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.backend import blas
from lazynd.engine.var import Var
from lazynd.ops import registry
from lazynd.runtime import VarAccess, generator_for, plan_for


@pytest.fixture()
def threaded_blas(monkeypatch: pytest.MonkeyPatch) -> Var:
    """A BLAS var as under a multi-threaded host BLAS, with fresh plans."""
    from lazynd.runtime import plan

    var = Var()
    monkeypatch.setattr(blas, "BLAS_VAR", var)
    monkeypatch.setattr(plan, "_plans", {})
    monkeypatch.setattr(plan, "_signatures", {})
    return var


def _conv_net() -> sym.Symbol:
    return sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=2, name="conv")


def test_an_imperative_gemm_heavy_call_writes_the_blas_var(threaded_blas: Var) -> None:
    x, w, b = mx.nd.ones((1, 1, 5, 5)), mx.nd.ones((2, 1, 3, 3)), mx.nd.zeros((2,))
    plan = plan_for(registry.get("Convolution"), [x, w, b], {"kernel": (3, 3), "num_filter": 2})
    assert plan.access.extra_writes(plan.ctx) == [threaded_blas]


def test_an_executor_pass_with_a_gemm_heavy_step_writes_the_blas_var(threaded_blas: Var) -> None:
    ex = _conv_net().simple_bind(mx.cpu(), data=(1, 1, 5, 5))
    for is_train in (True, False):
        assert threaded_blas in ex._forward_vars[is_train][1]
    assert threaded_blas in ex._backward_vars[1]
    out = ex.forward(is_train=True, data=mx.nd.ones((1, 1, 5, 5)))[0]
    ex.backward(mx.nd.ones(out.shape))
    mx.nd.waitall()
    assert not threaded_blas.writing and not threaded_blas.queue


def test_an_executor_without_gemm_heavy_steps_leaves_the_blas_var_alone(threaded_blas: Var) -> None:
    ex = sym.FullyConnected(sym.Variable("data"), num_hidden=3).simple_bind(mx.cpu(), data=(2, 4))
    assert threaded_blas not in ex._forward_vars[True][1]
    assert threaded_blas not in ex._backward_vars[1]


def test_an_executor_writes_the_generator_var_only_in_the_passes_that_draw() -> None:
    net = sym.Dropout(sym.FullyConnected(sym.Variable("data"), num_hidden=3), p=0.5)
    ex = net.simple_bind(mx.cpu(), data=(2, 4))
    access = VarAccess(registry.get("Dropout"), {"p": 0.5}, mx.cpu(), True)
    assert access.random and generator_for(mx.cpu()).var in access.extra_writes(mx.cpu())
    assert generator_for(mx.cpu()).var in ex._forward_vars[True][1]


@pytest.mark.parametrize("act_type, draws", [("leaky", False), ("elu", False), ("prelu", False), ("rrelu", True)])
def test_leaky_relu_writes_the_generator_var_only_for_rrelu(act_type: str, draws: bool) -> None:
    op = registry.get("LeakyReLU")
    access = VarAccess(op, op.parse({"act_type": act_type}), mx.cpu(), True)
    assert access.random is draws and access.plain is not draws
    ex = sym.LeakyReLU(sym.Variable("data"), act_type=act_type, name="act").simple_bind(mx.cpu(), data=(2, 3))
    writes = ex._forward_vars[True][1] + ex._backward_vars[1]
    assert (generator_for(mx.cpu()).var in writes) is draws


def test_an_executor_writes_the_auxiliary_states_it_updates_in_training_only() -> None:
    net = sym.BatchNorm(sym.Variable("data"), name="bn")
    ex = net.simple_bind(mx.cpu(), data=(4, 3))
    aux_vars = [a._var for a in ex.aux_arrays]
    assert all(v in ex._forward_vars[True][1] for v in aux_vars)
    assert not any(v in ex._forward_vars[False][1] for v in aux_vars)
    assert all(v in ex._forward_vars[False][0] for v in aux_vars)


def test_a_mutated_input_is_written_by_nd_and_executor_alike() -> None:
    access = VarAccess(
        registry.get("sgd_mom_update"), registry.get("sgd_mom_update").parse({"lr": 0.1}), mx.cpu(), False
    )
    assert access.written_inputs(["weight", "grad", "mom"], []) == ["mom"]
    w, g, m = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.zeros((3,))
    mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, out=w)
    np.testing.assert_allclose(m.asnumpy(), np.full(3, -0.1, np.float32), rtol=1e-6)


def test_a_one_parameter_call_of_ever_new_values_keeps_the_signatures_plans_bounded() -> None:
    # a decaying scalar (lr * 0.99 ** step) plans each value once; the table on the signature is bounded
    from lazynd.runtime import plan as plan_module

    x = mx.nd.ones((3,))
    for step in range(plan_module._MAX_SIGNATURE_PLANS + 50):
        np.testing.assert_allclose((x * (0.5 + step)).asnumpy(), np.full(3, 0.5 + step, np.float32))
    assert 0 < len(x.signature.plans) <= plan_module._MAX_SIGNATURE_PLANS


def test_one_parameter_plans_tell_the_parameters_type_apart() -> None:
    # 2 and 2.0 are equal keys to a dict: a plan keyed without the type could serve the other call
    x = mx.nd.array([1.5, 2.5, 3.5])
    op = registry.get("_mul_scalar")
    assert plan_for(op, [x], {"scalar": 2}) is not plan_for(op, [x], {"scalar": 2.0})
    assert plan_for(op, [x], {"scalar": 2.0}) is plan_for(op, [x], {"scalar": 2.0})


@pytest.mark.parametrize("kwargs", [{}, {"a_max": 5.0}], ids=["one-parameter", "several-parameters"])
def test_plans_tell_negative_zero_from_zero(kwargs: dict) -> None:
    # 0.0 and -0.0 are one key to a dict (equal, same hash), but x * -0.0 is -0.0: a plan made for
    # one must not serve the other
    x = mx.nd.array([1.0, 2.0])
    op = registry.get("clip" if kwargs else "_mul_scalar")
    name = "a_min" if kwargs else "scalar"
    for zero in (0.0, -0.0, np.float32(0.0), np.float32(-0.0)):
        plan = plan_for(op, [x], {name: zero, **kwargs})
        assert np.signbit(plan.attrs[name]) == np.signbit(zero)
    assert np.signbit((x * -0.0).asnumpy()).all()


@pytest.mark.parametrize(
    ("first", "second"),
    [((0.0, 0.0), (-0.0, -0.0)), ((1, 1), (True, True)), ((1, 1), (1.0, 1.0)), ((0.5, (1,)), (0.5, (True,)))],
    ids=["negative-zero", "bool", "float", "nested"],
)
def test_tuple_parameters_tell_members_types_and_signs_apart(first: tuple, second: tuple) -> None:
    # a tuple parameter is keyed by its members' types and signs too: (1,) == (True,) and
    # (0.0,) == (-0.0,) to a dict, but a parser may take one and refuse the other, and a kernel
    # may compute another sign of zero
    from lazynd.runtime.plan import _param_key

    assert _param_key(first) != _param_key(second)
    assert _param_key(first) == _param_key(tuple(first))


@pytest.mark.parametrize("in_tuple", [False, True], ids=["value", "tuple-member"])
def test_a_numpy_scalar_parameter_is_keyed_by_its_type_and_value(in_tuple: bool) -> None:
    # plain parameters are keyed by the bytes marshal writes for them, but marshal writes a NumPy
    # scalar as its bare bytes: float32 1.0 and int32 1065353216 are the same four
    x = mx.nd.ones((3,))
    op = registry.get("multi_sgd_update")
    plans = []
    for lr in (np.float32(1.0), np.int32(1065353216)):
        kwargs = {"lrs": (lr,) if in_tuple else lr, "wds": (0.0,), "num_weights": 1}
        if not in_tuple:
            op, kwargs = registry.get("clip"), {"a_min": lr, "a_max": 2.0e9}
        plans.append(plan_for(op, [x, x] if in_tuple else [x], kwargs))
    assert plans[0] is not plans[1]
    values = [p.attrs["lrs"][0] if in_tuple else p.attrs["a_min"] for p in plans]
    assert values == [1.0, 1065353216]


def test_plain_parameters_given_again_find_their_plan() -> None:
    x = mx.nd.ones((3,))
    op = registry.get("multi_sgd_update")
    kwargs = {"lrs": (0.1,), "wds": (0.0,), "rescale_grad": 0.5, "num_weights": 1}
    assert plan_for(op, [x, x], kwargs) is plan_for(op, [x, x], dict(kwargs))
    assert plan_for(op, [x, x], kwargs) is not plan_for(op, [x, x], {**kwargs, "rescale_grad": 0.25})


def test_an_update_with_negative_zero_rates_gets_its_own_plan() -> None:
    # w - lr * g on w = -0.0, g = 1: lr 0.0 keeps -0.0, lr -0.0 gives +0.0
    signs = []
    for lrs in ((0.0, 0.0), (-0.0, -0.0)):
        w = [mx.nd.array([-0.0]), mx.nd.array([-0.0])]
        g = [mx.nd.ones((1,)), mx.nd.ones((1,))]
        mx.nd.multi_sgd_update(w[0], g[0], w[1], g[1], out=w, lrs=lrs, wds=(0.0, 0.0), num_weights=2)
        signs.append([bool(np.signbit(a.asnumpy()[0])) for a in w])
    assert signs == [[True, True], [False, False]]


@pytest.mark.parametrize(
    "make",
    [lambda a: a + a, lambda a: a * 0.5, lambda a: mx.nd.cast(a, dtype="float16"), lambda a: mx.nd.sum(a, axis=1)],
    ids=["binary", "scalar", "cast", "reduce"],
)
def test_a_fresh_output_carries_the_signature_of_its_own_shape_dtype_and_context(make) -> None:
    # the plan hands its output's signature to the fresh array: it must be the one the array's own
    # shape, dtype and context intern to (a later call on it looks its plans up there)
    from lazynd.runtime.plan import signature_of

    out = make(mx.nd.ones((4, 300)))
    assert out.signature is signature_of(out.shape, out.data_array.dtype, out.context)
    assert out.signature.spec == (out.shape, out.data_array.dtype, "cpu", 0)


def test_a_short_training_mode_call_is_planned_on_its_signature_apart_from_prediction(
    threaded_blas: Var,
) -> None:
    # relu(x) under autograd, or its gradient, is planned like a + b: on the input's signature
    x = mx.nd.array([[-1.0, 2.0]])
    relu = registry.get("relu")
    train, predict = plan_for(relu, [x], {}, is_train=True), plan_for(relu, [x], {}, is_train=False)
    dropout = registry.get("Dropout")
    drop_train = plan_for(dropout, [x], {"p": 0.5}, is_train=True)
    drop_predict = plan_for(dropout, [x], {"p": 0.5}, is_train=False)
    from lazynd.runtime import plan

    assert plan.cached_plans() == 0  # none went to the table keyed by every parameter
    assert plan_for(relu, [x], {}, is_train=True) is train
    assert train is not predict and train.kctx.is_train and not predict.kctx.is_train
    assert drop_train is not drop_predict and drop_train.kctx.is_train and not drop_predict.kctx.is_train


@pytest.mark.parametrize("kwargs", [{}, {"keepdims": True}], ids=["one-parameter", "several-parameters"])
def test_plans_tell_the_types_of_a_tuples_members_apart(kwargs: dict) -> None:
    # (1,) == (True,): a plan of the first must not let the refused second through
    x = mx.nd.ones((2, 3))
    assert mx.nd.sum(x, axis=(1,), **kwargs).shape == ((2, 1) if kwargs else (2,))
    for _ in range(2):
        with pytest.raises(mx.LazyNDError, match="axis"):
            mx.nd.sum(x, axis=(True,), **kwargs)
    op = registry.get("clip")
    assert plan_for(op, [x], {"a_min": 0.0, "a_max": 1.0}) is plan_for(op, [x], {"a_min": 0.0, "a_max": 1.0})
    op = registry.get("sum")
    assert plan_for(op, [x], {"axis": (0, 1)}) is plan_for(op, [x], {"axis": (0, 1)})
    assert plan_for(op, [x], {"axis": (0, 1)}) is not plan_for(op, [x], {"axis": (0, 1.0)})


def test_a_three_input_call_is_planned_on_its_first_signature_apart_from_other_inputs(
    threaded_blas: Var,
) -> None:
    # FullyConnected(x, w, b, num_hidden=n), every layer of an imperative MLP, is planned like
    # a + b: on the data's signature, keyed by the weight's and bias's signatures
    from lazynd.runtime import plan

    fc = registry.get("FullyConnected")
    x = mx.nd.ones((2, 3))
    w3, b3 = mx.nd.ones((3, 3)), mx.nd.ones((3,))
    w4, b4 = mx.nd.ones((4, 3)), mx.nd.ones((4,))
    small = plan_for(fc, [x, w3, b3], {"num_hidden": 3})
    large = plan_for(fc, [x, w4, b4], {"num_hidden": 4})
    assert plan.cached_plans() == 0  # none went to the table keyed by every parameter
    assert plan_for(fc, [x, mx.nd.zeros((3, 3)), b3], {"num_hidden": 3}) is small
    assert small is not large and small.out_shapes == [(2, 3)] and large.out_shapes == [(2, 4)]
    assert mx.nd.FullyConnected(x, w4, b4, num_hidden=4).shape == (2, 4)
    with pytest.raises(mx.LazyNDError, match="FullyConnected"):
        mx.nd.FullyConnected(x, w3, b4, num_hidden=3)  # the bias's shape is checked, not taken from w's plan


def test_a_creation_call_with_its_context_is_planned_once_and_draws_anew_each_time() -> None:
    # the plan is shared, the generator is the one of each call's moment
    op, kwargs = registry.get("_random_uniform"), {"shape": (3, 4), "ctx": mx.cpu()}
    assert plan_for(op, [], kwargs) is plan_for(op, [], dict(kwargs))
    first, second = mx.nd.random.uniform(shape=(3, 4)), mx.nd.random.uniform(shape=(3, 4))
    assert not np.array_equal(first.asnumpy(), second.asnumpy())
    mx.random.seed(7)
    again = mx.nd.random.uniform(shape=(3, 4)).asnumpy()
    mx.random.seed(7)
    assert np.array_equal(mx.nd.random.uniform(shape=(3, 4)).asnumpy(), again)


def test_creation_plans_tell_parameters_and_contexts_apart() -> None:
    op = registry.get("_random_uniform")
    plans = {
        id(plan_for(op, [], {"shape": shape, "ctx": ctx, **extra}))
        for shape in ((2,), (3,))
        for ctx in (mx.cpu(0), mx.cpu_pinned(0))
        for extra in ({}, {"dtype": "float64"}, {"low": 1})
    }
    assert len(plans) == 12
    assert mx.nd.random.uniform(shape=(2, 2), dtype="float64").dtype == np.float64
    assert mx.nd.random.uniform(shape=(3,), ctx=mx.cpu_pinned(0)).context == mx.cpu_pinned(0)


def test_a_creation_call_without_a_context_follows_the_with_scope_each_call() -> None:
    op = registry.get("_zeros")
    assert plan_for(op, [], {"shape": (2,)}) is not plan_for(op, [], {"shape": (2,)})  # planned alone
    with mx.cpu_pinned(0):
        assert plan_for(op, [], {"shape": (2,)}).ctx == mx.cpu_pinned(0)
    assert plan_for(op, [], {"shape": (2,)}).ctx == mx.cpu(0)
    # ``ctx=None`` given (as MXNet's generated functions pass it) is no context either
    draw = registry.get("_random_uniform")
    assert plan_for(draw, [], {"shape": (2,), "ctx": None}).ctx == mx.cpu(0)
    with mx.cpu(3):
        assert plan_for(draw, [], {"shape": (2,), "ctx": None}).ctx == mx.cpu(3)
        assert mx.nd._random_uniform(shape=(2,), ctx=None).context == mx.cpu(3)
