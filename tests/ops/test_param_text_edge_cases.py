"""Parameter text that NumPy or float() trips over is refused by name, never as an internal error.

``numpy.dtype('(1,')`` raises SyntaxError (NumPy reads it as a structured-dtype spec) and a scale
of ``1e999`` is infinite: both reached users as raw exceptions from every face that takes them.
"""

from __future__ import annotations

from typing import Any

import pytest

import lazynd as mx
from lazynd.ops import registry

# Custom operators take any parameter as text, handed to the user's operator unparsed
OPS_WITH_A_DTYPE = [
    name for name in registry.list_ops() if "dtype" in registry.get(name).params and not name.endswith("Custom")
]


def test_the_registry_has_operators_with_a_dtype_parameter() -> None:
    assert {"Cast", "Embedding", "_zeros"} <= set(OPS_WITH_A_DTYPE)


@pytest.mark.parametrize("op_name", OPS_WITH_A_DTYPE)
@pytest.mark.parametrize("text", ["(1,", "((", "[("])
def test_a_dtype_that_numpy_cannot_parse_is_refused_naming_the_operator(op_name: str, text: str) -> None:
    with pytest.raises(mx.OperatorError, match=rf"{op_name}: invalid value .* for parameter 'dtype'"):
        registry.get(op_name).parse({"dtype": text})


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: mx.sym.Variable("a", dtype="(1,"), id="Variable"),
        pytest.param(lambda: mx.sym.Variable("a").infer_type(a="(1,"), id="infer_type"),
        pytest.param(
            lambda: mx.sym.Variable("a").simple_bind(mx.cpu(), a=(2,), type_dict={"a": "(1,"}), id="simple_bind"
        ),
        pytest.param(lambda: mx.nd.zeros(2, dtype="(1,"), id="nd.zeros"),
        pytest.param(lambda: mx.io.DataDesc("data", (2,), dtype="(1,"), id="DataDesc"),
    ],
)
def test_every_face_refuses_an_unparsable_dtype_with_a_lazynd_error(call: Any) -> None:
    with pytest.raises(mx.LazyNDError, match="dtype"):
        call()


@pytest.mark.parametrize("param", ["scale_height", "scale_width"])
@pytest.mark.parametrize("value", ["1e999", float("inf"), "nan"])
def test_bilinear_resize_refuses_a_scale_that_is_not_finite(param: str, value: Any) -> None:
    with pytest.raises(mx.OperatorError, match=rf"invalid value .* for parameter '{param}': expected a finite number"):
        mx.sym.contrib.BilinearResize2D(mx.sym.Variable("x"), **{param: value})
