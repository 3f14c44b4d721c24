"""The custom operator "test_scale" (multiply by a factor), registered on import, for several test files."""

from __future__ import annotations

import lazynd as mx


class ScaleOp(mx.operator.CustomOp):
    """Multiplies its input, and the gradient flowing back, by `factor`."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.factor)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


@mx.operator.register("test_scale")
class ScaleProp(mx.operator.CustomOpProp):
    """Properties of "test_scale": one input, one output, `factor` (a string keyword, as in MXNet)."""

    def __init__(self, factor: str = "2") -> None:
        super().__init__(need_top_grad=True)
        assert isinstance(factor, str)  # keywords arrive as strings, as in MXNet
        self.factor = float(factor)

    def create_operator(self, ctx, shapes, dtypes):
        return ScaleOp(self.factor)
