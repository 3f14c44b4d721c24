"""Executor plans that change what a GPU pass launches, on gpu(0) against cpu(0), captured into CUDA graphs.

- ``grad_req='add'``: each such gradient is added into its array by the backward step that makes
  it (:mod:`lazynd_sym.executor.accumulate`), so the addition is captured with that step and
  replayed with it: every replay must add once more, no more, no less.
- In-place plans: ``SoftmaxOutput`` writes its probabilities over its scores, so on a GPU the
  softmax kernels read and write one buffer, on each of their paths (rows in registers, a block a
  row read twice, rows cut into pieces, one thread a line for ``multi_output``); a reshape
  (``Reshape``, ``Flatten``, ``expand_dims``, ``squeeze``, ``reshape_like``) lies in its input's block.
- Loss heads whose gradient depends on the labels' values: ``SoftmaxOutput`` in every mode
  (several labels a sample, ignore labels, smoothing, each normalization, ``preserve_shape``,
  ``out_grad``), ``SVMOutput`` and ``MakeLoss``'s valid count: masks and device checks, no host
  read, so their backward passes are captured too.

Each test trains (or infers) several steps on new data and compares every output and gradient,
step by step, with the same executor on the CPU; the passes must be captured (none refused).  On a
GPU the steps after the captured one replay the graph.  On the CUDA emulator the capture is emulated
(tests/cuda_capture.py): the second step is captured, and a replay, which only a GPU runs, is not tried.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.ops import softmax_gpu

pytestmark = pytest.mark.gpu
S = sym


def _fill(ex, seed: int) -> None:
    """Every argument but data and labels from ``seed``: the same on both devices."""
    rng = np.random.default_rng(seed)
    for name in sorted(ex.arg_dict):
        array = ex.arg_dict[name]
        array[:] = rng.standard_normal(array.shape).astype(np.float32)
    for name in sorted(ex.grad_dict):
        if ex.grad_dict[name] is not None:
            ex.grad_dict[name][:] = 1.0  # what an 'add' gradient adds to


def _train(net, ctx, shapes: dict, grad_req: dict, steps: int, classes: int, lowest_label: int = 0) -> tuple:
    """``steps`` training steps on new data and labels each (from ``lowest_label`` to ``classes - 1``);
    per step, every output and gradient."""
    ex = net.simple_bind(ctx, grad_req=grad_req, **shapes)
    _fill(ex, 0)
    rng = np.random.default_rng(1)
    seen = []
    for _ in range(steps):
        ex.arg_dict["data"][:] = rng.standard_normal(shapes["data"]).astype(np.float32)
        ex.arg_dict["softmax_label"][:] = rng.integers(lowest_label, classes, shapes["softmax_label"]).astype(
            np.float32
        )
        ex.forward(is_train=True)
        ex.backward()
        outputs = [o.asnumpy() for o in ex.outputs]
        seen.append(outputs + [ex.grad_dict[name].asnumpy() for name in sorted(grad_req) if grad_req[name] != "null"])
    return ex, seen


def _assert_steps_agree(gpu: list, cpu: list, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    for k, (got, want) in enumerate(zip(gpu, cpu, strict=True)):
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"step {k}, array {i}: gpu(0) vs cpu(0)")


def _assert_captured(ex, *keys: str) -> None:
    assert ex._graphs is not None, "the executor has no graphs"
    assert ex._graphs.failures == {}, f"a pass was not captured: {ex._graphs.failures}"
    for key in keys:
        assert ex._graphs.captured(key), f"{key} was not captured"


def _in_place(ex, output: str, source: str) -> bool:
    """Whether ``ex``'s plan put ``output`` in the block of ``source`` (its debug_str says so)."""
    return any(f" {output} " in line and f"(in place of {source})" in line for line in ex.debug_str().splitlines())


# -- grad_req='add', added by the step that makes the gradient ------------------------------------
def _conv_head() -> sym.Symbol:
    x = S.Convolution(S.var("data"), kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv")
    x = S.Pooling(S.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    x = S.FullyConnected(S.Flatten(x), num_hidden=5, name="fc")
    return S.SoftmaxOutput(x, name="softmax")


def test_add_gradients_are_added_once_a_step_in_captured_and_replayed_passes(captured_steps):
    net = _conv_head()
    grad_req = {
        "data": "null",
        "softmax_label": "null",
        "conv_weight": "add",
        "conv_bias": "write",
        "fc_weight": "add",
        "fc_bias": "add",
    }
    shapes = {"data": (4, 2, 6, 6), "softmax_label": (4,)}
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, classes=5)
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, classes=5)
    added = {ex.arg_names[j] for j in ex._accumulation.arguments}
    assert added == {"conv_weight", "fc_weight", "fc_bias"}, "the backward steps do not add the 'add' gradients"
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu)


# -- SoftmaxOutput over its scores, on every path of the GPU's softmax ------------------------------
# (path, rows, length of a row, the multiprocessors the GPU is said to have)
SOFTMAX_PATHS = [
    ("regs", 6, 10, None),
    ("rows", 4, 9000, 1),
    ("pieces", 2, 9000, 8),
]


@pytest.mark.parametrize(("path", "rows", "n", "multiprocessors"), SOFTMAX_PATHS, ids=[p[0] for p in SOFTMAX_PATHS])
def test_softmax_output_over_its_scores_agrees_on_every_kernel_path(
    captured_steps, monkeypatch, path, rows, n, multiprocessors
):
    if multiprocessors is not None:
        monkeypatch.setattr(softmax_gpu, "multiprocessor_count", lambda device_id: multiprocessors)
    assert softmax_gpu.forward_path(n, rows, multiprocessors or 132) == path
    net = S.SoftmaxOutput(S.FullyConnected(S.var("data"), num_hidden=n, name="fc"), name="softmax")
    grad_req = {"data": "null", "softmax_label": "null", "fc_weight": "write", "fc_bias": "write"}
    shapes = {"data": (rows, 3), "softmax_label": (rows,)}
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, classes=n)
    assert _in_place(ex, "softmax_output", "fc_output")
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, classes=n)
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu, rtol=1e-4, atol=1e-7)


def test_multi_output_softmax_over_its_scores_agrees(captured_steps):
    # softmax over axis 1 of (4, 5, 3): the GPU's one-thread-a-line kernel, its lines strided
    scores = S.Reshape(S.FullyConnected(S.var("data"), num_hidden=15, name="fc"), shape=(4, 5, 3), name="r")
    net = S.SoftmaxOutput(scores, multi_output=True, name="softmax")
    grad_req = {"data": "null", "softmax_label": "null", "fc_weight": "write", "fc_bias": "write"}
    shapes = {"data": (4, 3), "softmax_label": (4, 3)}
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, classes=5)
    assert _in_place(ex, "softmax_output", "r_output")
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, classes=5)
    # its gradient's route for several labels a sample checks the labels on the device and finds
    # them by masks: no host read (it read them back, and the backward pass ran eagerly)
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu)


# -- loss heads' gradients from the labels' values, without a host read ---------------------------------
def _scores(shape: tuple) -> sym.Symbol:
    """Scores of ``shape`` from a fully connected layer over (batch, 3) data."""
    per_sample = int(np.prod(shape[1:]))
    return S.Reshape(S.FullyConnected(S.var("data"), num_hidden=per_sample, name="fc"), shape=shape, name="r")


# (scores' shape, SoftmaxOutput's parameters, label shape, lowest label drawn): every route of its
# gradient, each normalization; -1 labels are ignored where use_ignore
SOFTMAX_OUTPUT_MODES = {
    "multi_output-ignore-valid": (
        (4, 5, 3),
        {"multi_output": True, "use_ignore": True, "ignore_label": -1, "normalization": "valid"},
        (4, 3),
        -1,
    ),
    "ignore-class-valid": ((6, 5), {"use_ignore": True, "ignore_label": 2, "normalization": "valid"}, (6,), 0),
    "ignore-null": ((6, 5), {"use_ignore": True, "ignore_label": -1, "grad_scale": 0.5}, (6,), -1),
    "smooth-batch": ((6, 5), {"smooth_alpha": 0.2, "normalization": "batch"}, (6,), 0),
    "multi_output-smooth-valid": (
        (4, 5, 3),
        {"multi_output": True, "smooth_alpha": 0.1, "normalization": "valid"},
        (4, 3),
        0,
    ),
    "preserve_shape-batch": ((4, 3, 5), {"preserve_shape": True, "normalization": "batch"}, (4, 3), 0),
    "preserve_shape-ignore-valid": (
        (4, 3, 5),
        {"preserve_shape": True, "use_ignore": True, "ignore_label": -1, "normalization": "valid"},
        (4, 3),
        -1,
    ),
}


@pytest.mark.parametrize("mode", list(SOFTMAX_OUTPUT_MODES))
def test_softmax_output_gradient_in_every_mode_is_captured_and_agrees(captured_steps, mode):
    shape, params, label_shape, lowest = SOFTMAX_OUTPUT_MODES[mode]
    net = S.SoftmaxOutput(_scores(shape), name="softmax", **params)
    grad_req = {"data": "write", "softmax_label": "null", "fc_weight": "write", "fc_bias": "write"}
    shapes = {"data": (shape[0], 3), "softmax_label": label_shape}
    classes = shape[1] if params.get("multi_output") else shape[-1]
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, classes, lowest)
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, classes, lowest)
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu)


def test_softmax_output_with_out_grad_under_make_loss_valid_is_captured_and_agrees(captured_steps):
    # out_grad weighs SoftmaxOutput's gradient by its head gradient: here square's, from MakeLoss,
    # whose normalization='valid' counts the squares above valid_thresh (on the device)
    prob = S.SoftmaxOutput(_scores((4, 5, 3)), multi_output=True, use_ignore=True, out_grad=True, name="softmax")
    net = S.MakeLoss(S.square(prob), normalization="valid", valid_thresh=0.05, name="loss")
    grad_req = {"data": "write", "softmax_label": "null", "fc_weight": "write", "fc_bias": "write"}
    shapes = {"data": (4, 3), "softmax_label": (4, 3)}
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, 5, -1)
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, 5, -1)
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu)


def test_svm_output_gradient_is_captured_and_agrees(captured_steps):
    net = S.SVMOutput(_scores((6, 5)), margin=0.5, name="softmax")  # named so its label is softmax_label
    grad_req = {"data": "write", "softmax_label": "null", "fc_weight": "write", "fc_bias": "write"}
    shapes = {"data": (6, 3), "softmax_label": (6,)}
    ex, on_gpu = _train(net, mx.gpu(0), shapes, grad_req, captured_steps, 5)
    _, on_cpu = _train(net, mx.cpu(), shapes, grad_req, captured_steps, 5)
    _assert_captured(ex, "forward_train", "backward")
    _assert_steps_agree(on_gpu, on_cpu)


# -- reshapes in their input's block -----------------------------------------------------------------
RESHAPES = {
    "Reshape": lambda h: S.Reshape(h, shape=(-1,), name="r"),
    "expand_dims-Flatten": lambda h: S.Flatten(S.expand_dims(h, axis=1, name="e"), name="r"),
    "expand_dims-squeeze": lambda h: S.squeeze(S.expand_dims(h, axis=0, name="e"), axis=0, name="r"),
    "reshape_like": lambda h: S.reshape_like(h, S.var("like"), name="r"),
}


@pytest.mark.parametrize("reshape", list(RESHAPES))
def test_a_reshape_in_its_inputs_block_agrees_in_captured_inference(captured_steps, reshape):
    hidden = S.elemwise_add(S.var("x"), S.var("y"), name="h")  # read by the reshape only
    out = S.relu(RESHAPES[reshape](hidden) + 1, name="out")
    shapes = {"x": (2, 3), "y": (2, 3)}
    if "like" in out.list_arguments():
        shapes["like"] = (6,)
    results = {}
    for ctx in (mx.gpu(0), mx.cpu()):
        ex = out.simple_bind(ctx, grad_req="null", **shapes)
        ids = {ex._graph.entry_name(e): sid for e, sid in enumerate(ex._graph.attrs["storage_id"])}
        assert ids["r_output"] == ids["h_output"], "the reshape has a block of its own"
        rng = np.random.default_rng(2)
        seen = []
        for _ in range(captured_steps):
            ex.arg_dict["x"][:] = rng.standard_normal((2, 3)).astype(np.float32)
            ex.arg_dict["y"][:] = rng.standard_normal((2, 3)).astype(np.float32)
            seen.append([ex.forward(is_train=False)[0].asnumpy()])
        results[ctx.device_type] = (ex, seen)
    _assert_captured(results["gpu"][0], "forward")
    _assert_steps_agree(results["gpu"][1], results["cpu"][1], rtol=0, atol=0)
