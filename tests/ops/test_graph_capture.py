"""Operators whose executor passes a CUDA graph can capture: no host transfer and no call through
CuPy's cuBLAS bindings inside their GPU kernels, forward and backward.

On the CPU CUDA emulator with capture emulated (tests/cuda_capture.py): each operator's executor
runs a training forward and a backward eagerly, then again captured, on the same inputs; the
capture must be taken (no failure noted for either pass) and give the eager run's values, which
the same executor on the CPU gives too.  The operators still refused are refused here too, and
still compute the same after the refusal.  A GPU's capture is checked by the operator sweep's
``test_executor_graph_replays_follow_new_inputs`` (it warns of a refused pass).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from cuda_capture import emulate_capture
from sweep_cases import CASES, auto_case, missing_cupy_api
from test_operator_sweep import SWEPT
from test_operator_sweep import _bind as _sweep_bind
from test_operator_sweep import _feed as _sweep_feed

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError
from lazynd.testing import assert_almost_equal

pytestmark = pytest.mark.gpu

# operators whose GPU passes were refused on an H200 (products through CuPy's cuBLAS bindings, host
# transfers in kernels) and are captured now
CAPTURED = [
    "Convolution",
    "Convolution_v1",
    "Deconvolution",
    "GridGenerator",
    "SpatialTransformer",
    "_contrib_AdaptiveAvgPooling2D",
    "_contrib_BilinearResize2D",
    "_contrib_DeformableConvolution",
    "_contrib_ModulatedDeformableConvolution",
    "_contrib_interleaved_matmul_encdec_qk",
    "_contrib_interleaved_matmul_encdec_valatt",
    "_contrib_interleaved_matmul_selfatt_qk",
    "_contrib_interleaved_matmul_selfatt_valatt",
    "_linalg_gemm",
    "_linalg_gemm2",
    "softmax_cross_entropy",
    "gather_nd",
    "scatter_nd",
    "_scatter_set_nd",
    "shape_array",
    "ravel_multi_index",
    "unravel_index",
    "_histogram",
    "_adamw_update",
    "_mp_adamw_update",
    "_multi_adamw_update",
    "_multi_mp_adamw_update",
    "_linalg_extracttrian",
    "_linalg_maketrian",
    "_image_adjust_lighting",
    "preloaded_multi_sgd_update",
    "preloaded_multi_sgd_mom_update",
    "preloaded_multi_mp_sgd_update",
    "preloaded_multi_mp_sgd_mom_update",
    "_contrib_hawkesll",  # its range checks on the device (it read them back on the host at first)
    "CTCLoss",  # its recursions in a kernel of ours (kernels/ctc.cu), its checks on the device
]


@pytest.fixture
def gpu_capturing(monkeypatch, cublas_stand_in):
    if mx.num_gpus() == 0:
        pytest.skip("needs gpu(0): the CUDA emulator's (tests/cuda_capture.py emulates its capture)")
    emulate_capture(monkeypatch, cublas_stand_in)
    return mx.gpu(0)


def _case(name: str):
    return CASES.get(name) or auto_case(name)


def _inputs(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    case = _case(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [spec.make(rng) for spec in case.inputs], [spec.make(rng) for spec in case.aux]


def _bind(name: str, ctx: mx.Context):
    """The operator as a one-node executor on ``ctx`` with gradients for its float inputs, and the
    names of those inputs."""
    case = _case(name)
    inputs, aux = _inputs(name)
    names = [f"in{i}" for i in range(len(inputs))]
    net = getattr(sym, name)(*[sym.Variable(n) for n in names], **case.params)
    wanted = case.grad and not any(spec.integer for spec in case.inputs)
    grad_req = {
        n: "write" if wanted and not spec.integer else "null" for n, spec in zip(names, case.inputs, strict=True)
    }
    shapes = {n: v.shape for n, v in zip(names, inputs, strict=True)}
    types = {n: v.dtype for n, v in zip(names, inputs, strict=True)}
    ex = net.simple_bind(ctx, grad_req=grad_req, type_dict=types, **shapes)
    return ex, [n for n in names if grad_req[n] == "write"]


def _step(name: str, ex, wrt: list[str]) -> list[np.ndarray]:
    """The inputs fed (an update operator changes some), a training forward and (where there are
    gradients) a backward; the outputs and gradients."""
    inputs, aux = _inputs(name)
    for k, v in enumerate(inputs):
        ex.arg_dict[f"in{k}"][:] = v
    for array, v in zip(ex.aux_arrays, aux, strict=True):
        array[:] = v
    ex.forward(is_train=True)
    if wrt:
        rng = np.random.default_rng(0)
        heads = [mx.nd.array(rng.normal(size=o.shape), ctx=o.context, dtype=o.dtype) for o in ex.outputs]
        ex.backward(heads)
    return [o.asnumpy() for o in ex.outputs] + [ex.grad_dict[n].asnumpy() for n in wrt]


@pytest.mark.parametrize("name", CAPTURED)
def test_operator_passes_are_captured(name, gpu_capturing):
    ex, wrt = _bind(name, gpu_capturing)
    eager = _step(name, ex, wrt)
    captured = _step(name, ex, wrt)
    assert ex._graphs is not None, "the executor has no graphs"
    assert not ex._graphs.failures, f"{name}: a pass was not captured: {ex._graphs.failures}"
    assert ex._graphs.captured("forward_train")
    cpu_ex, _ = _bind(name, mx.cpu())
    on_cpu = _step(name, cpu_ex, wrt)
    case = _case(name)
    for k, (a, b, c) in enumerate(zip(eager, captured, on_cpu, strict=True)):
        np.testing.assert_array_equal(b, a, err_msg=f"{name} result {k}: captured vs eager")
        assert_almost_equal(b, c, case.rtol, case.atol, names=(f"{name} result {k} on the GPU", "on the CPU"))


# operators still refused on a GPU (the H200's refusals, reproduced here): their kernels read
# indices, counts or boxes back to the host, or upload tables.  They run eagerly; they also show
# that the emulated capture refuses what a real one does.  One made capturable moves to CAPTURED.
LEFT_EAGER = [
    "ROIPooling",
    "_contrib_DeformablePSROIPooling",
    "_contrib_MultiBoxDetection",
    "_contrib_MultiBoxPrior",
    "_contrib_MultiBoxTarget",
    "_contrib_MultiProposal",
    "_contrib_PSROIPooling",
    "_contrib_Proposal",
    "_contrib_ROIAlign",
    "_contrib_RROIAlign",
    "_contrib_allclose",
    "_contrib_bipartite_matching",
    "_contrib_box_encode",
    "_contrib_box_nms",
    "_contrib_count_sketch",
    "_contrib_index_copy",
    "_image_resize",
]


# refused in an inference pass too, through CuPy's cuBLAS bindings (xp.matmul, xp.dot); not among the
# operators the H200 runs list by name, so unchecked there
REFUSED_ELSEWHERE = ["_linalg_syrk", "_linalg_trmm", "multi_sum_sq"]


@pytest.mark.parametrize("name", SWEPT)
def test_every_swept_operator_is_captured_unless_listed(name, gpu_capturing):
    # a new operator whose GPU kernel reads a value back to the host, or multiplies through CuPy's
    # cuBLAS bindings, keeps every executor holding it from replaying CUDA graphs; found here, before
    # a GPU: its inference pass, eager then captured, must be captured unless it is listed above
    case = _case(name)
    if case.random or case.xfail:
        pytest.skip("draws random numbers (no graphs), or a known failure of the sweep")
    missing = missing_cupy_api(case)
    if missing:
        pytest.skip(f"the CUDA emulator's fake CuPy has no {missing}")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    inputs, aux = [spec.make(rng) for spec in case.inputs], [spec.make(rng) for spec in case.aux]
    with sym.name.NameManager():  # names of its own: other tests count on the default names' counters
        ex = _sweep_bind(name, case, inputs, gpu_capturing)
    for _ in range(2):
        _sweep_feed(ex, inputs, aux)
        ex.forward(is_train=False)
        for o in ex.outputs:
            o.asnumpy()
    refused = ex._graphs.failures.get("forward") if ex._graphs is not None else None
    listed = name in LEFT_EAGER or name in REFUSED_ELSEWHERE
    assert (refused is not None) == listed, refused or f"{name} is captured now: take it off its list"


@pytest.mark.parametrize("name", LEFT_EAGER)
def test_operators_left_eager_are_refused_and_still_agree(name, gpu_capturing):
    ex, wrt = _bind(name, gpu_capturing)
    eager = _step(name, ex, wrt)
    again = _step(name, ex, wrt)
    failures = " ".join(ex._graphs.failures.values())
    assert "transfers are disallowed" in failures or "cuBLAS" in failures, ex._graphs.failures
    for k, (a, b) in enumerate(zip(eager, again, strict=True)):
        np.testing.assert_array_equal(b, a, err_msg=f"{name} result {k}: the eager rerun after a refused capture")


def test_the_emulated_capture_refuses_cublas_bindings_and_transfers(gpu_capturing):
    import cupy
    from cuda_capture import _begin_capture, _end_capture

    x = cupy.ones((2, 2), dtype=np.float32)
    stream = cupy.cuda.Stream()
    _begin_capture(stream)
    try:
        for refused, message in [
            (lambda: cupy.matmul(x, x), "cuBLAS"),
            (lambda: x @ x, "cuBLAS"),
            (lambda: float(x[0, 0]), "D2H"),
            (lambda: x.get(), "D2H"),
            (lambda: cupy.nonzero(x), "D2H"),
            (lambda: x[x > 0], "D2H"),
            (lambda: cupy.asarray(np.ones(2)), "H2D"),
            (lambda: x[np.array([0, 1])], "H2D"),
        ]:
            with pytest.raises((RuntimeError, NotImplementedError), match=message):
                refused()
        from lazynd.backend.cuda import gemm

        out = cupy.empty((2, 2), dtype=np.float32)
        gemm.matmul(x, x, out)  # cuBLAS's C functions: captured
    finally:
        _end_capture(stream)
    np.testing.assert_array_equal(out.get(), np.full((2, 2), 2.0))


# -- what GPU kernels do where a host check would stop the capture ---------------------------------------
# a device check (lazynd/backend/cuda/checks.py) finds the value, the next wait raises it, once
def test_on_a_gpu_an_index_out_of_range_raises_at_the_next_wait(gpu_capturing):
    data = mx.nd.array(np.arange(12).reshape(3, 4), ctx=gpu_capturing)
    got = mx.nd.gather_nd(data, mx.nd.array([[1, 3, -4], [2, 0, 1]], ctx=gpu_capturing))
    with pytest.raises(
        OperatorError,
        match=r"gather_nd: index on axis 0 out of range: 3 at position 1 \(and 1 other value\(s\)\), "
        r"expected a value in \[-3, 2\]; "
        r"found by a check on gpu\(0\) and raised at this wait",
    ):
        got.asnumpy()
    # what the kernel computed meanwhile: 0 for the position out of range; the finding was raised once
    np.testing.assert_array_equal(got.asnumpy(), [6, 0, 0])
    scattered = mx.nd.scatter_nd(
        mx.nd.array([1, 2], ctx=gpu_capturing), mx.nd.array([[0, 5], [1, 1]], ctx=gpu_capturing), shape=(3, 4)
    )
    with pytest.raises(OperatorError, match=r"scatter_nd: index on axis 0 out of range: 5 at position 1"):
        mx.nd.waitall()
    want = np.zeros((3, 4))
    want[0, 1] = 1
    np.testing.assert_array_equal(scattered.asnumpy(), want)


def test_on_a_gpu_a_label_out_of_range_raises_at_the_next_wait(gpu_capturing):
    scores = mx.nd.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], ctx=gpu_capturing)
    good = mx.nd.softmax_cross_entropy(scores, mx.nd.array([2, 0], ctx=gpu_capturing)).asnumpy()
    assert np.isfinite(good).all()
    bad = mx.nd.softmax_cross_entropy(scores, mx.nd.array([2, 3], ctx=gpu_capturing))
    with pytest.raises(OperatorError, match=r"softmax_cross_entropy: label out of range: 3 at position 1, "):
        bad.asnumpy()
    assert np.isnan(bad.asnumpy()).all()


def test_on_a_gpu_ravel_multi_index_of_an_index_out_of_range_raises_at_the_next_wait(gpu_capturing):
    flat = mx.nd.ravel_multi_index(mx.nd.array([[7], [0]], ctx=gpu_capturing), shape=(7, 6))
    with pytest.raises(OperatorError, match=r"ravel_multi_index: index of dimension 0 out of range: 7 at position 0"):
        flat.asnumpy()
    assert flat.asnumpy().tolist() == [42]  # the number MXNet 1.9.1 computes, 7 * 6 + 0
    many = mx.nd.unravel_index(mx.nd.array([3, 50, 60, 1], ctx=gpu_capturing), shape=(7, 6))
    with pytest.raises(OperatorError, match=r"unravel_index: flat index out of range: 50 at position 1 \(and 1 "):
        many.asnumpy()


def test_a_device_check_reports_from_an_eager_and_a_captured_pass(gpu_capturing, monkeypatch):
    # the check's kernel is part of the pass: the captured run reports a bad label as the eager run did
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    net = sym.softmax_cross_entropy(sym.Variable("data"), sym.Variable("label"))
    exe = net.simple_bind(gpu_capturing, grad_req="null", data=(2, 3), label=(2,))
    exe.arg_dict["data"][:] = np.ones((2, 3), np.float32)
    for run, bad in enumerate((4, 9)):  # eager, then captured
        exe.arg_dict["label"][:] = np.array([0, bad], np.float32)
        out = exe.forward(is_train=False)[0]
        with pytest.raises(OperatorError, match=rf"label out of range: {bad} at position 1"):
            out.asnumpy()
        assert exe._graphs.captured("forward") == (run == 1), exe._graphs.failures
