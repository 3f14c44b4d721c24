"""Operators whose output may take its input's block, as in MXNet's plan, and the values that stay right.

An LSTM language model unrolled 35 steps over a 10000-word vocabulary planned its scores and its
probabilities (1120 x 10000 each) in two blocks: 88 MB against MXNet 1.9.1's 44 MB for inference,
because ``SoftmaxOutput`` declared no in-place option (MXNet's overwrites the scores, which its
gradient never reads).  ``Reshape``, ``Flatten``, ``expand_dims``, ``squeeze`` and ``reshape_like``
keep every element in order, so their output may lie in their input's block too.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

S = mx.sym


def _in_place(ex: object, output: str, source: str) -> bool:
    """Whether ``ex``'s plan put ``output`` in the block of ``source`` (its debug_str says so)."""
    return any(f" {output} " in line and f"(in place of {source})" in line for line in ex.debug_str().splitlines())


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("grad_req", ["null", "write"])
def test_softmax_output_overwrites_its_scores(grad_req: str) -> None:
    net = S.SoftmaxOutput(S.FullyConnected(S.var("data"), num_hidden=5, name="fc"), name="softmax")
    req = {"data": "null", "softmax_label": "null", "fc_weight": grad_req, "fc_bias": grad_req}
    ex = net.simple_bind(mx.cpu(), grad_req=req, data=(4, 3))
    assert _in_place(ex, "softmax_output", "fc_output")
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    label = np.array([0, 4, 2, 1], np.float32)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["fc_weight"][:] = w
    ex.arg_dict["fc_bias"][:] = 0
    ex.arg_dict["softmax_label"][:] = label
    p = _softmax(x @ w.T)
    np.testing.assert_allclose(ex.forward(is_train=grad_req != "null")[0].asnumpy(), p, rtol=1e-5)
    if grad_req == "write":
        ex.backward()
        expected = (p - np.eye(5, dtype=np.float32)[label.astype(int)]).T @ x
        np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "reshape",
    [
        lambda h: S.Reshape(h, shape=(-1,), name="r"),
        lambda h: S.Flatten(S.expand_dims(h, axis=1, name="e"), name="r"),
        lambda h: S.squeeze(S.expand_dims(h, axis=0, name="e"), axis=0, name="r"),
        lambda h: S.reshape_like(h, S.var("like"), name="r"),
    ],
    ids=["Reshape", "expand_dims-Flatten", "expand_dims-squeeze", "reshape_like"],
)
def test_a_reshape_lies_in_its_inputs_block_for_inference(reshape: object) -> None:
    # (in training the gradient, reshape_like, reads the input's shape, and the plan counts that
    # as a reader: the input's block is kept for the backward pass, and the reshape takes another)
    hidden = S.elemwise_add(S.var("x"), S.var("y"), name="h")  # read by the reshape only
    out = S.relu(reshape(hidden) + 1, name="out")  # type: ignore[operator]
    shapes = {"x": (2, 3), "y": (2, 3)}
    if "like" in out.list_arguments():
        shapes["like"] = (6,)
    ex = out.simple_bind(mx.cpu(), grad_req="null", **shapes)
    graph = ex._graph
    ids = {graph.entry_name(e): sid for e, sid in enumerate(graph.attrs["storage_id"])}
    assert ids["r_output"] == ids["h_output"] == ids.get("e_output", ids["h_output"])
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    ex.arg_dict["x"][:] = x
    ex.arg_dict["y"][:] = -1.5
    got = ex.forward()[0].asnumpy()
    np.testing.assert_array_equal(got.reshape(-1), np.maximum(x - 0.5, 0).reshape(-1))
