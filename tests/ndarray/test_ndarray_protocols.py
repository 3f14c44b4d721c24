"""NDArray's Python protocols (text, truth value, conversions) as MXNet 1.9.1 answers them."""

from __future__ import annotations


import lazynd as mx


def test_repr_and_str_print_mxnets_text_byte_for_byte() -> None:
    # MXNet 1.9.1's text: the values, then ``<NDArray shape @ctx>`` with no dtype
    assert str(mx.nd.array([7], dtype="int32")) == "\n[7]\n<NDArray 1 @cpu(0)>"
    assert repr(mx.nd.array(5)) == "\n5.0\n<NDArray  @cpu(0)>"
    assert repr(mx.nd.zeros((0,))) == "\n[]\n<NDArray 0 @cpu(0)>"
    assert f"{mx.nd.ones((1, 2))}" == "\n[[1. 1.]]\n<NDArray 1x2 @cpu(0)>"

