"""MXNet 1.x's ``contrib`` Fourier operators ``fft`` and ``ifft`` and the ``count_sketch``
projection (MXNet runs all three on the GPU only; here they run on both devices).

- ``fft(data)``: the 1-D discrete Fourier transform of each row of a real ``(N, d)`` or
  ``(N1, N2, N3, d)`` array, as ``(..., 2 d)`` with real and imaginary parts interleaved
  (``[re0, im0, re1, im1, ...]``); not normalised.
- ``ifft(data)``: the inverse of such an interleaved ``(..., 2 d)`` array, its real part
  ``(..., d)``, **not** divided by ``d`` (MXNet leaves the division out, as Caffe does), so
  ``ifft(fft(x)) == d * x``.  Each is the other's adjoint, so each one's gradient is the other.
- ``count_sketch(data, h, s, out_dim)``: ``out[n, h[j]] += s[j] * data[n, j]`` for ``(N, d)``
  or ``(N1, N2, N3, d)`` data, ``h`` (hash positions) and ``s`` (signs) of shape ``(1, d)``.

``compute_size`` and ``processing_batch_size`` (MXNet's sub-batch sizes) are accepted and
change nothing.  Kernels are written once over ``kctx.xp`` (``xp.fft``).
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from .contrib_indexing import checked_positions
from .params import Param, parse_int
from .registry import OpDef, merge_shape, register

FFT = "_contrib_fft"
IFFT = "_contrib_ifft"
COUNT_SKETCH = "_contrib_count_sketch"


def _rows_shape(op: str, shape: tuple[int, ...]) -> None:
    if len(shape) not in (2, 4):
        raise ShapeError(f"{op}: 'data' must be 2-D (N, d) or 4-D (N1, N2, N3, d), got shape {tuple(shape)}")


def _last_axis_infer(op: str, scale: float) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        shape = in_shapes[0]
        if shape is None:
            return list(in_shapes), [None], list(aux_shapes)
        _rows_shape(op, shape)
        if scale < 1 and shape[-1] % 2:
            raise ShapeError(
                f"{op}: the last axis of 'data' holds (real, imaginary) pairs, so its length must be even, "
                f"got shape {tuple(shape)}"
            )
        return list(in_shapes), [(*shape[:-1], int(shape[-1] * scale))], list(aux_shapes)

    return infer


def _fft_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    spectrum = kctx.xp.fft.fft(inputs[0], axis=-1)
    out = outputs[0]
    out[..., 0::2] = spectrum.real
    out[..., 1::2] = spectrum.imag


def _ifft_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = inputs[0]
    spectrum = x[..., 0::2] + 1j * x[..., 1::2]
    # norm="forward" leaves the inverse unscaled, as MXNet's (no division by d)
    outputs[0][...] = kctx.xp.fft.ifft(spectrum, axis=-1, norm="forward").real


_SIZE = {"compute_size": Param(parse_int, 128, "MXNet's sub-batch size; accepted, changes nothing")}


def _adjoint_gradient(adjoint: str) -> Any:
    """The gradient of a transform whose adjoint is the operator ``adjoint``."""

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        return [getattr(F, adjoint)(out_grads[0])]

    return gradient


for _name, _forward, _scale, _adjoint, _doc in (
    (FFT, _fft_forward, 2.0, IFFT, "The DFT of each row, real and imaginary parts interleaved"),
    (IFFT, _ifft_forward, 0.5, FFT, "The real part of the unnormalised inverse DFT of interleaved rows"),
):
    register(
        OpDef(
            _name,
            _forward,
            params=dict(_SIZE),
            infer_shape=_last_axis_infer(_name, _scale),
            gradient=_adjoint_gradient(_adjoint),
            float_data=True,
            doc=f"{_doc} (``mx.nd.contrib.{_name.removeprefix('_contrib_')}``).",
        )
    )


# -- count_sketch ---------------------------------------------------------------------------------
def _count_sketch_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, h, s = in_shapes
    if attrs["out_dim"] < 1:
        raise ShapeError(f"{COUNT_SKETCH}: out_dim must be at least 1, got {attrs['out_dim']}")
    if data is None:
        return list(in_shapes), [None], list(aux_shapes)
    _rows_shape(COUNT_SKETCH, data)
    table = (1, data[-1])
    h = merge_shape(COUNT_SKETCH, "h", h, table, complete=True)
    s = merge_shape(COUNT_SKETCH, "s", s, table, complete=True)
    return [data, h, s], [(*data[:-1], attrs["out_dim"])], list(aux_shapes)


def _count_sketch_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, h, s = inputs
    positions = checked_positions(xp, h.reshape(-1), attrs["out_dim"], COUNT_SKETCH, "h")
    # the sketch as a (d, out_dim) matrix with s[j] at (j, h[j]): one product adds every column
    sketch = xp.zeros((data.shape[-1], attrs["out_dim"]), dtype=data.dtype)
    sketch[xp.arange(data.shape[-1]), positions] = s.reshape(-1)
    outputs[0][...] = (data.reshape(-1, data.shape[-1]) @ sketch).reshape(outputs[0].shape)


def _count_sketch_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    data, h, s = inputs
    picked = F.take(out_grads[0], F.reshape(h, shape=(-1,)), axis=-1)  # the head at each column's position
    return [F.broadcast_mul(picked, F.reshape(s, shape=(-1,))), None, None]  # the tables: none, as MXNet


register(
    OpDef(
        COUNT_SKETCH,
        _count_sketch_forward,
        inputs=("data", "h", "s"),
        params={
            "out_dim": Param(parse_int, doc="the output dimension"),
            "processing_batch_size": Param(parse_int, 32, "MXNet's sub-batch size; accepted, changes nothing"),
        },
        infer_shape=_count_sketch_infer,
        gradient=_count_sketch_gradient,
        float_data=True,
        doc="``out[..., h[j]] += s[j] * data[..., j]`` (``mx.nd.contrib.count_sketch``).",
    )
)
