"""CustomOpProp's default answers next to MXNet 1.9.1's: storage types and partial shapes."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


class _TwoInTwoOut(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["x", "y"]

    def list_auxiliary_states(self):
        return ["state"]


def test_default_infer_storage_type_makes_every_array_dense():
    prop = _TwoInTwoOut()
    assert prop.infer_storage_type(["default", "default"]) == (["default"] * 2, ["default"] * 2, ["default"])


def test_default_infer_storage_type_backward_fills_undefined_gradients():
    prop = _TwoInTwoOut()
    result = prop.infer_storage_type_backward(
        ["default"] * 2, ["default"] * 2, ["default"] * 2, ["undefined", "default"], ["default"]
    )
    assert result == (["default"] * 2, ["default"] * 2, ["default"] * 2, ["default"] * 2, ["default"])


def test_a_subclass_may_pass_storage_types_on_to_the_default():
    class Passing(_TwoInTwoOut):
        def infer_storage_type(self, in_stype):
            return super().infer_storage_type(in_stype)

    assert Passing().infer_storage_type(["default", "default"])[1] == ["default", "default"]


@pytest.mark.parametrize("method", ["infer_storage_type", "infer_storage_type_backward"])
def test_a_sparse_storage_type_is_a_clear_error(method):
    prop = _TwoInTwoOut()
    with pytest.raises(LazyNDError, match=r"in_stype\[1\] is 'csr'|ograd_stype\[1\] is 'csr'"):
        if method == "infer_storage_type":
            prop.infer_storage_type(["default", "csr"])
        else:
            prop.infer_storage_type_backward(["default", "csr"], [], [], [], [])
