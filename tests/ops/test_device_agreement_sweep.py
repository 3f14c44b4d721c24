"""Every swept operator gives on gpu(0) what it gives on cpu(0): forward values and, where it has a
gradient rule, the gradients autograd gives for the same head gradients.

The operator sweep (tests/ops/test_operator_sweep.py) holds an operator's GPU answer to a NumPy
reference where its case has one; for the others (about a third) nothing compared the GPU's values
with the CPU's, and no sweep test compared gradients across devices at all.  This test takes the
sweep's cases and values (tests/ops/sweep_cases.py: the one place that says which inputs an operator
takes), runs each on both devices and compares, with tolerances by dtype.  Output shapes and dtypes
must match exactly.

Operators that draw random numbers cannot agree value for value (NumPy's generator on the host,
CuPy's on the device): they are held to rules instead (:data:`RANDOM_RULES`): the same shapes and
dtypes on both devices, the same seed giving the same draw again on the GPU, and statistics of a
larger draw that agree across devices.  Operators the GPU refuses are listed in :data:`GPU_REFUSES`
with the reason, and must be refused with a :class:`lazynd.LazyNDError` naming the operator.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from sweep_cases import case_for, missing_cupy_api, sample_values, swept_operators
from sweep_inputs import Case, In

import lazynd as mx
from lazynd import autograd
from lazynd.errors import LazyNDError
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]

# (rtol, atol) by the dtype compared: float16 is computed in float32 on the GPU and rounded once;
# float32 sums may be taken in another order (cuBLAS's blocks, a kernel's tree, atomics)
TOLERANCE = {"float16": (2e-2, 2e-2), "float32": (1e-4, 1e-5), "float64": (1e-9, 1e-11)}

# operators the GPU refuses, and why (each must raise a LazyNDError naming it): none today
GPU_REFUSES: dict[str, str] = {}

SWEPT = swept_operators()
RANDOM = [n for n in SWEPT if case_for(n).random]
DETERMINISTIC = [n for n in SWEPT if not case_for(n).random]
BOTH = (mx.cpu(0), mx.gpu(0)) if mx.num_gpus() else ()


def _tolerance(case: Case, dtype: np.dtype) -> tuple[float, float]:
    rtol, atol = TOLERANCE.get(np.dtype(dtype).name, (0.0, 0.0))  # integers and booleans: exact
    return case.rtol or rtol, case.atol or atol


def _skip_without_cupy_api(case: Case) -> None:
    missing = missing_cupy_api(case)
    if missing:
        pytest.skip(f"this CuPy has no {missing} (the CUDA emulator's fake CuPy lacks it)")


def _differentiable(name: str, case: Case) -> list[int]:
    """The inputs whose gradients are compared: float inputs that are not indices or labels, of an
    operator with a gradient rule that writes none of its inputs (autograd refuses to record those:
    the optimizer updates, ``onehot_encode``)."""
    op = registry.get(name)
    if op.gradient is None or op.mutated_inputs(op.parse(case.params)):
        return []
    return [i for i, spec in enumerate(case.inputs) if not spec.integer and np.dtype(spec.dtype).kind == "f"]


def _run(name: str, case: Case, inputs: list, aux: list, ctx: mx.Context, params: dict | None = None) -> tuple:
    """On ``ctx``: the operator's outputs; its input gradients under autograd (inference mode), for
    the heads seeded 0; and every input and state after the call (the updates write some in place)."""
    arrays = [mx.nd.array(v, ctx=ctx, dtype=v.dtype) for v in inputs]
    aux_arrays = [mx.nd.array(v, ctx=ctx, dtype=v.dtype) for v in aux]
    params = dict(case.params if params is None else params)
    if not arrays and not aux_arrays:
        params["ctx"] = ctx
    wrt = [] if case.random else _differentiable(name, case)
    for i in wrt:
        arrays[i].attach_grad()
    with autograd.record(train_mode=False) if wrt else contextlib.nullcontext():
        out = getattr(mx.nd, name)(*arrays, *aux_arrays, **params)
    outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    if wrt and all(np.dtype(o.dtype).kind == "f" for o in outputs):
        rng = np.random.default_rng(0)
        heads = [mx.nd.array(rng.normal(size=o.shape), ctx=ctx, dtype=o.dtype) for o in outputs]
        autograd.backward(outputs, heads, train_mode=False)
    else:
        wrt = []
    values = [o.asnumpy() for o in outputs]
    return values, [arrays[i].grad.asnumpy() for i in wrt], [a.asnumpy() for a in arrays + aux_arrays]


def _run_on_gpu(name: str, case: Case, inputs: list, aux: list, params: dict | None = None) -> tuple | None:
    """:func:`_run` on gpu(0); None where the GPU refuses the operator as :data:`GPU_REFUSES` says it must."""
    try:
        result = _run(name, case, inputs, aux, mx.gpu(0), params)
    except LazyNDError as err:
        if name not in GPU_REFUSES:
            raise
        assert name in str(err), f"the GPU refused {name} without naming it: {err}"
        return None
    assert name not in GPU_REFUSES, f"{name}: GPU_REFUSES says the GPU refuses it, but it ran"
    return result


def _assert_agree(name: str, what: str, on_gpu: list, on_cpu: list, case: Case) -> None:
    assert len(on_gpu) == len(on_cpu), f"{name}: {len(on_gpu)} {what}s on gpu(0), {len(on_cpu)} on cpu(0)"
    for i, (got, want) in enumerate(zip(on_gpu, on_cpu, strict=True)):
        label = f"{name} {what} {i}"
        assert got.shape == want.shape, f"{label}: shape {got.shape} on gpu(0), {want.shape} on cpu(0)"
        assert got.dtype == want.dtype, f"{label}: dtype {got.dtype} on gpu(0), {want.dtype} on cpu(0)"
        rtol, atol = _tolerance(case, want.dtype)
        names = (f"{label} on gpu(0)", "on cpu(0)")
        assert_almost_equal(got, want, rtol, atol, names=names, equal_nan=True)


def test_every_swept_operator_is_compared_across_devices() -> None:
    # an operator is compared by value (DETERMINISTIC) or by rule (RANDOM_RULES), never neither
    assert sorted(RANDOM) == sorted(RANDOM_RULES), (
        f"random operators without a rule: {sorted(set(RANDOM) - set(RANDOM_RULES))}; "
        f"rules for operators that are gone or not random: {sorted(set(RANDOM_RULES) - set(RANDOM))}"
    )
    assert set(GPU_REFUSES) <= set(SWEPT), f"GPU_REFUSES lists unknown operators: {set(GPU_REFUSES) - set(SWEPT)}"


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_gpu_gives_the_cpus_values_and_gradients(name: str) -> None:
    case = case_for(name)
    _skip_without_cupy_api(case)
    inputs, aux = sample_values(name, case)
    on_cpu = _run(name, case, inputs, aux, mx.cpu(0))
    on_gpu = _run_on_gpu(name, case, inputs, aux)
    if on_gpu is None:
        return
    _assert_agree(name, "output", on_gpu[0], on_cpu[0], case)
    _assert_agree(name, "input gradient", on_gpu[1], on_cpu[1], case)
    _assert_agree(name, "input after the call", on_gpu[2], on_cpu[2], case)


# -- random operators: rules ------------------------------------------------------------------------
def _draws_agree(name: str, on_gpu: list, on_cpu: list) -> None:
    """Both devices' draws (of one distribution per row where the sampler takes parameters per row):
    means within six standard errors of each other, standard deviations within 30 per cent."""
    for got, want in zip(on_gpu, on_cpu, strict=True):
        rows_gpu, rows_cpu = got.reshape(got.shape[0], -1), want.reshape(want.shape[0], -1)
        for r, (g, c) in enumerate(zip(rows_gpu.astype(np.float64), rows_cpu.astype(np.float64), strict=True)):
            error = np.sqrt((g.var() + c.var()) / g.size) + 1e-9
            assert abs(g.mean() - c.mean()) <= 6 * error, (
                f"{name} row {r}: mean {g.mean():.4g} on gpu(0), {c.mean():.4g} on cpu(0) (standard error {error:.3g})"
            )
            assert 0.7 * c.std() - 1e-9 <= g.std() <= c.std() / 0.7 + 1e-9, (
                f"{name} row {r}: standard deviation {g.std():.4g} on gpu(0), {c.std():.4g} on cpu(0)"
            )


def _is_one_of(name: str, got: np.ndarray, candidates: list[np.ndarray]) -> None:
    assert any(np.array_equal(got, c) for c in candidates), f"{name}: gave none of the outcomes it may give"


def _larger(case: Case, shape: tuple[int, ...]) -> tuple[Case, dict]:
    """The case with ``shape`` as its draw's shape: as a parameter, or as the shape of its one input."""
    if "shape" in case.params:
        return case, {**case.params, "shape": shape}
    spec = case.inputs[0]
    return Case([In(shape, spec.low, spec.high)], case.params, random=True, gpu_needs=case.gpu_needs), case.params


def _statistics(name: str, case: Case, inputs: list, aux: list) -> None:
    """A larger draw on each device (2,000 numbers, or 1,000 per row of parameters: 8 KB): statistics that agree."""
    shape = (1000,) if name.startswith("_sample_") else (2000,)
    case, params = _larger(case, shape)
    inputs, aux = sample_values(name, case)
    mx.random.seed(11)
    want = _run(name, case, inputs, aux, mx.cpu(0), params)[0]
    got = _run(name, case, inputs, aux, mx.gpu(0), params)[0]
    _draws_agree(
        name,
        [g.reshape(1, -1) if g.ndim == 1 else g for g in got],
        [w.reshape(1, -1) if w.ndim == 1 else w for w in want],
    )


def _flipped(axis: int) -> Any:
    def rule(name: str, case: Case, inputs: list, aux: list) -> None:
        for ctx in BOTH:
            (got,) = _run(name, case, inputs, aux, ctx)[0]
            _is_one_of(f"{name} on {ctx}", got, [inputs[0], np.flip(inputs[0], axis)])

    return rule


def _brightness(name: str, case: Case, inputs: list, aux: list) -> None:
    # one factor from [min_factor, max_factor] scales every pixel
    for ctx in BOTH:
        (got,) = _run(name, case, inputs, aux, ctx)[0]
        factor = got / inputs[0]
        assert np.allclose(factor, factor.flat[0], rtol=1e-5), f"{name} on {ctx}: not one factor"
        assert case.params["min_factor"] <= factor.flat[0] <= case.params["max_factor"], f"{name} on {ctx}"


def _permutes_rows(name: str, case: Case, inputs: list, aux: list) -> None:
    for ctx in BOTH:
        (got,) = _run(name, case, inputs, aux, ctx)[0]
        rows = sorted(map(tuple, got.tolist()))
        assert rows == sorted(map(tuple, inputs[0].tolist())), f"{name} on {ctx}: not a permutation of the rows"


def _multinomial(name: str, case: Case, inputs: list, aux: list) -> None:
    # each sample is a category of its row; the probability handed back is log p of that category
    probabilities = inputs[0]
    for ctx in BOTH:
        samples, log_p = _run(name, case, inputs, aux, ctx)[0]
        assert samples.shape == log_p.shape == (2, 4) and samples.dtype == np.int32, f"{name} on {ctx}"
        assert ((samples >= 0) & (samples < probabilities.shape[1])).all(), f"{name} on {ctx}: {samples}"
        want = np.log(np.take_along_axis(probabilities, samples.astype(np.int64), axis=1))
        assert_almost_equal(log_p, want, 1e-5, 1e-6, names=(f"{name} log-probability on {ctx}", "log p"))


def _same_shape_and_finite(name: str, case: Case, inputs: list, aux: list) -> None:
    # an image's colour jittered by a drawn factor: shapes, dtypes and finite values on both devices
    # (the values of each factor's adjustment are compared by the deterministic operators' tests)
    on_cpu, on_gpu = (_run(name, case, inputs, aux, ctx)[0] for ctx in BOTH)
    for got, want in zip(on_gpu, on_cpu, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype, f"{name}: {got.shape} {got.dtype}, {want.shape}"
        assert np.isfinite(got).all() and np.isfinite(want).all(), name


# each random operator's rule, by name
RANDOM_RULES: dict[str, Any] = {
    **{n: _statistics for n in RANDOM if n.startswith(("_random_", "_sample_")) and n != "_sample_multinomial"},
    "_sample_multinomial": _multinomial,
    "_shuffle": _permutes_rows,
    "_image_random_flip_left_right": _flipped(1),
    "_image_random_flip_top_bottom": _flipped(0),
    "_image_random_brightness": _brightness,
    "_image_random_contrast": _same_shape_and_finite,
    "_image_random_saturation": _same_shape_and_finite,
    "_image_random_hue": _same_shape_and_finite,
    "_image_random_color_jitter": _same_shape_and_finite,
    "_image_random_lighting": _same_shape_and_finite,
}


@pytest.mark.parametrize("name", RANDOM)
def test_random_operator_follows_its_rule_on_both_devices(name: str) -> None:
    case = case_for(name)
    _skip_without_cupy_api(case)
    inputs, aux = sample_values(name, case)
    mx.random.seed(7)
    first = _run_on_gpu(name, case, inputs, aux)
    if first is None:
        return
    mx.random.seed(7)
    again = _run(name, case, inputs, aux, mx.gpu(0))
    for i, (a, b) in enumerate(zip(first[0], again[0], strict=True)):
        np.testing.assert_array_equal(a, b, err_msg=f"{name} output {i}: the same seed drew differently on gpu(0)")
    on_cpu = _run(name, case, inputs, aux, mx.cpu(0))
    for i, (got, want) in enumerate(zip(first[0], on_cpu[0], strict=True)):
        assert (got.shape, got.dtype) == (want.shape, want.dtype), (
            f"{name} output {i}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
        )
    RANDOM_RULES[name](name, case, inputs, aux)


def test_dropout_in_training_keeps_the_same_share_scaled_alike_on_both_devices() -> None:
    # Dropout draws its mask in training: kept entries are x / (1 - p), the others 0, and the share
    # kept (2,000 entries) agrees across devices within six standard errors
    x = np.random.default_rng(3).uniform(0.5, 1.5, (2000,)).astype(np.float32)
    kept = {}
    for ctx in BOTH:
        mx.random.seed(5)
        got = mx.nd.Dropout(mx.nd.array(x, ctx=ctx), p=0.3, mode="always").asnumpy()
        mask = got != 0
        assert_almost_equal(got[mask], x[mask] / 0.7, 1e-6, 1e-6, names=(f"Dropout's kept entries on {ctx}", "x / 0.7"))
        kept[ctx.device_type] = mask.mean()
    assert abs(kept["gpu"] - kept["cpu"]) <= 6 * np.sqrt(2 * 0.7 * 0.3 / x.size), kept
