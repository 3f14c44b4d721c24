"""mx.nd.contrib / mx.sym.contrib interleaved_matmul_{selfatt,encdec}_{qk,valatt}: MXNet's
interleaved multi-head layout, forward and gradients, against MXNet 1.9.1 and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

HEADS, HEAD_DIM, SEQ, K_SEQ, BATCH = 2, 3, 4, 5, 2


def wave(*shape: int, phase: float = 0.0) -> np.ndarray:
    return np.sin(np.arange(np.prod(shape)) * 0.7 + phase).reshape(shape).astype("float32")


INPUTS = {
    "qkv": wave(SEQ, BATCH, HEADS * HEAD_DIM * 3),
    "q": wave(SEQ, BATCH, HEADS * HEAD_DIM, phase=1),
    "kv": wave(K_SEQ, BATCH, HEADS * HEAD_DIM * 2, phase=2),
    "att": wave(BATCH * HEADS, SEQ, SEQ, phase=3),
    "att2": wave(BATCH * HEADS, SEQ, K_SEQ, phase=4),
}
CALLS = {
    "selfatt_qk": ["qkv"],
    "selfatt_valatt": ["qkv", "att"],
    "encdec_qk": ["q", "kv"],
    "encdec_valatt": ["kv", "att2"],
}
# MXNet 1.9.1 (CPU), the output and each input's gradient under the head wave(*y.shape, phase=5),
# each as [sum, sum of a * cos(arange(a.size))]
MXNET = {
    "selfatt_qk": [[-7.6703, -0.1326], [-1.44, -0.0159]],
    "selfatt_valatt": [[-0.2117, -0.4444], [10.9926, -10.8722], [5.1759, 11.9293]],
    "encdec_qk": [[2.5315, 0.1401], [-0.3702, -0.1183], [-1.2954, -1.1591]],
    "encdec_valatt": [[-0.8398, 0.3722], [11.828, -1.7763], [2.3756, 2.6743]],
}


def fingerprint(a: np.ndarray) -> list[float]:
    a = a.astype("float64")
    return [a.sum(), (a * np.cos(np.arange(a.size)).reshape(a.shape)).sum()]


def heads_of(x: np.ndarray, parts: int, part: int) -> np.ndarray:
    """NumPy reference of the layout: (seq, batch, heads * parts * d) -> (batch * heads, seq, d)."""
    seq, batch, width = x.shape
    split = x.reshape(seq, batch, HEADS, parts, width // (HEADS * parts))[:, :, :, part]
    return split.transpose(1, 2, 0, 3).reshape(batch * HEADS, seq, -1)


@pytest.mark.parametrize("name", list(CALLS))
def test_forward_and_gradients_match_mxnet(name, ctx):
    arrays = [mx.nd.array(INPUTS[a], ctx=ctx) for a in CALLS[name]]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, f"interleaved_matmul_{name}")(*arrays, heads=HEADS)
    y.backward(mx.nd.array(wave(*y.shape, phase=5), ctx=ctx))
    got = [fingerprint(y.asnumpy())] + [fingerprint(a.grad.asnumpy()) for a in arrays]
    np.testing.assert_allclose(got, MXNET[name], atol=2e-3)


def test_qk_products_follow_the_interleaved_layout():
    qkv, q, kv = INPUTS["qkv"], INPUTS["q"], INPUTS["kv"]
    scale = np.float32(np.sqrt(HEAD_DIM))
    self_qk = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(qkv), heads=HEADS).asnumpy()
    np.testing.assert_allclose(self_qk, heads_of(qkv, 3, 0) @ heads_of(qkv, 3, 1).transpose(0, 2, 1) / scale, rtol=1e-5)
    encdec = mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.array(q), mx.nd.array(kv), heads=HEADS).asnumpy()
    assert encdec.shape == (BATCH * HEADS, SEQ, K_SEQ)
    np.testing.assert_allclose(encdec, heads_of(q, 1, 0) @ heads_of(kv, 2, 0).transpose(0, 2, 1) / scale, rtol=1e-5)


def test_valatt_gives_the_query_layout_back():
    kv, att = INPUTS["kv"], INPUTS["att2"]
    out = mx.nd.contrib.interleaved_matmul_encdec_valatt(mx.nd.array(kv), mx.nd.array(att), heads=HEADS).asnumpy()
    per_head = (att @ heads_of(kv, 2, 1)).reshape(BATCH, HEADS, SEQ, HEAD_DIM)
    np.testing.assert_allclose(out, per_head.transpose(2, 0, 1, 3).reshape(SEQ, BATCH, -1), rtol=1e-5)


@pytest.mark.parametrize("name", list(CALLS))
def test_gradients_match_central_differences(name):
    # one batch row (and the attention maps of its heads), in float64
    small = {key: (a[:HEADS] if key.startswith("att") else a[:, :1]).astype("float64") for key, a in INPUTS.items()}
    check_gradient(f"_contrib_interleaved_matmul_{name}", [small[a] for a in CALLS[name]], {"heads": HEADS})


def test_symbol_infers_shapes_and_differentiates_through_an_executor():
    qkv = sym.Variable("qkv")
    scores = sym.contrib.interleaved_matmul_selfatt_qk(qkv, heads=HEADS)
    net = sym.contrib.interleaved_matmul_selfatt_valatt(qkv, sym.softmax(scores, axis=-1), heads=HEADS)
    _, out_shapes, _ = net.infer_shape(qkv=INPUTS["qkv"].shape)
    assert out_shapes == [(SEQ, BATCH, HEADS * HEAD_DIM)]
    ex = net.simple_bind(mx.cpu(), qkv=INPUTS["qkv"].shape)
    ex.arg_dict["qkv"][:] = INPUTS["qkv"]
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((SEQ, BATCH, HEADS * HEAD_DIM)))
    assert np.isfinite(ex.grad_dict["qkv"].asnumpy()).all()


def test_bad_layouts_are_refused_by_name():
    with pytest.raises(
        LazyNDError, match="selfatt_qk: 'queries_keys_values' must be .* heads=4, got shape \\(4, 2, 18\\)"
    ):
        mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(INPUTS["qkv"]), heads=4)
    with pytest.raises(LazyNDError, match="encdec_qk: 'keys_values' has shape"):
        mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.array(INPUTS["q"]), mx.nd.zeros((5, 3, 12)), heads=HEADS)
    with pytest.raises(LazyNDError, match="selfatt_valatt: shape of 'attention'"):
        mx.nd.contrib.interleaved_matmul_selfatt_valatt(mx.nd.array(INPUTS["qkv"]), mx.nd.zeros((4, 4, 5)), heads=HEADS)
