"""``mx.symbol_doc``: the documentation helper MXNet scripts import."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import ShapeError


def lstm_gates() -> mx.sym.Symbol:
    gates = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="i2h")
    return mx.sym.SliceChannel(gates, num_outputs=4, name="slice")


def test_symbol_doc_is_a_face_of_lazynd():
    from lazynd import symbol_doc

    assert symbol_doc.SymbolDoc is mx.symbol_doc.SymbolDoc


def test_get_output_shape_names_each_output():
    shapes = mx.symbol_doc.SymbolDoc.get_output_shape(lstm_gates(), data=(3, 5))
    assert shapes == {f"slice_output{i}": (3, 2) for i in range(4)}


def test_get_output_shape_without_enough_shapes_names_the_inputs():
    with pytest.raises(ShapeError, match=r"get_output_shape.*\['data', 'i2h_weight', 'i2h_bias'\]"):
        mx.symbol_doc.SymbolDoc.get_output_shape(lstm_gates())
