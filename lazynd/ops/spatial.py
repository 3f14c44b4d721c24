"""Spatial transformer networks: ``GridGenerator`` (affine or warp sampling grids),
``BilinearSampler`` (sample an image at a grid) and ``SpatialTransformer`` (the two in one).

A sampling grid is (N, 2, H, W): channel 0 holds x, channel 1 holds y, both normalised so
that -1 and 1 are the centres of the input's first and last pixels.  The sampler takes the
four pixels around each point with bilinear weights; a pixel outside the input counts as
0.  Every kernel is vectorised ``kctx.xp`` code (gathers and a scatter-add), the same on
NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from ._bilinear import bilinear_taps
from .params import Param, enum, parse_bool, parse_shape
from .products import product
from .registry import OpDef, merge_shape, register


# -- grids ---------------------------------------------------------------------------------------------
# the tables below are constants of the device (Backend.constant), made once per size: a kernel that
# uploaded them at every call could not be captured into a CUDA graph (lazynd/backend/cuda/graphs.py)
def _target_grid(kctx: Any, height: int, width: int, dtype: Any) -> Any:
    """(3, H*W): the target's normalised x, y and a row of ones, in row-major order."""

    def make() -> np.ndarray:
        ys, xs = np.meshgrid(
            np.linspace(-1, 1, height, dtype=dtype), np.linspace(-1, 1, width, dtype=dtype), indexing="ij"
        )
        return np.stack([xs.reshape(-1), ys.reshape(-1), np.ones(height * width, dtype=dtype)])

    return kctx.backend.constant(("spatial target grid", height, width), make, dtype)


def _affine_grid(kctx: Any, theta: Any, height: int, width: int) -> Any:
    base = _target_grid(kctx, height, width, theta.dtype)
    return product(kctx, theta.reshape(-1, 2, 3), base).reshape(-1, 2, height, width)


def _affine_grid_backward(kctx: Any, grid_grad: Any) -> Any:
    n, _, height, width = grid_grad.shape
    base = _target_grid(kctx, height, width, grid_grad.dtype)
    return product(kctx, grid_grad.reshape(n, 2, -1), base.T).reshape(n, 6)


def _warp_scale(kctx: Any, height: int, width: int, dtype: Any) -> Any:
    """Per channel (x, y): pixels per unit of the normalised grid."""
    scale = kctx.backend.constant(
        ("spatial warp scale", height, width), lambda: np.array([(width - 1) / 2, (height - 1) / 2]), dtype
    )
    return scale.reshape(1, 2, 1, 1)


def _warp_grid(kctx: Any, flow: Any) -> Any:
    _, _, height, width = flow.shape

    def make() -> np.ndarray:
        ys, xs = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
        return np.stack([xs, ys])[None]

    pixels = kctx.backend.constant(("spatial warp pixels", height, width), make, flow.dtype)
    return (flow + pixels) / _warp_scale(kctx, height, width, flow.dtype) - 1


def _grid_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    if attrs["transform_type"] == "affine":
        out[...] = _affine_grid(kctx, inputs[0], out.shape[2], out.shape[3])
    else:
        out[...] = _warp_grid(kctx, inputs[0])


def _grid_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    grid_grad = inputs[0]
    if attrs["transform_type"] == "affine":
        outputs[0][...] = _affine_grid_backward(kctx, grid_grad)
    else:
        outputs[0][...] = grid_grad / _warp_scale(kctx, grid_grad.shape[2], grid_grad.shape[3], grid_grad.dtype)


def _target_size(op: str, attrs: dict) -> tuple[int, int]:
    target = tuple(attrs["target_shape"])
    if len(target) != 2 or min(target) < 1:
        raise OperatorError(f"{op}: target_shape must be (height, width) with positive sizes, got {target}")
    return target  # type: ignore[return-value]


def _grid_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if attrs["transform_type"] == "affine":
        height, width = _target_size("GridGenerator", attrs)
        if data is not None:
            data = merge_shape("GridGenerator", "data", data, (data[0] if data else 0, 6))
        return [data], [None if data is None else (data[0], 2, height, width)], aux_shapes
    if data is not None and (len(data) != 4 or data[1] != 2):
        raise ShapeError(f"GridGenerator: a warp's data must be a flow field (N, 2, H, W), got {tuple(data)}")
    return in_shapes, [data], aux_shapes


_GRID_PARAMS = {
    "transform_type": Param(enum("affine", "warp"), doc="affine: data is (N, 6); warp: data is a flow (N, 2, H, W)"),
    "target_shape": Param(parse_shape, (0, 0), "(height, width) of an affine grid"),
}
register(
    OpDef(
        "GridGenerator",
        _grid_forward,
        params=dict(_GRID_PARAMS),
        infer_shape=_grid_infer,
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_GridGenerator(og[0], inputs[0], **attrs)],
        float_data=True,  # MXNet: "Other DTypes are not supported!"
        doc="A sampling grid (N, 2, H, W) from affine parameters (N, 6) or from a flow field.",
    )
)
register(
    OpDef(
        "_backward_GridGenerator",
        _grid_backward,
        inputs=("out_grad", "like"),
        params=dict(_GRID_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of GridGenerator with respect to its data.",
    )
)


# -- bilinear sampling ---------------------------------------------------------------------------------
def _corners(xp: Any, grid: Any, height: int, width: int) -> list[tuple[Any, Any, Any, Any]]:
    """Per neighbouring pixel: (flat index, weight, d weight / d grid x, d weight / d grid y), each (N, P);
    the weight of a pixel outside the image is 0."""
    n = grid.shape[0]
    x = (grid[:, 0].reshape(n, -1) + 1) * ((width - 1) / 2)
    y = (grid[:, 1].reshape(n, -1) + 1) * ((height - 1) / 2)
    return [
        (tap.index, tap.weight, tap.dweight_dx * ((width - 1) / 2), tap.dweight_dy * ((height - 1) / 2))
        for tap in bilinear_taps(xp, y, x, height, width)
    ]


def _gather(xp: Any, flat: Any, index: Any) -> Any:
    """flat (N, C, H*W) at index (N, P): (N, C, P)."""
    return xp.take_along_axis(flat, xp.broadcast_to(index[:, None, :], flat.shape[:2] + index.shape[1:]), axis=2)


def _sample(xp: Any, data: Any, grid: Any) -> Any:
    n, channels, height, width = data.shape
    if height * width == 0:  # every point lies outside an empty image: it reads 0, as in MXNet
        return xp.zeros((n, channels, *grid.shape[2:]), dtype=data.dtype)
    flat = data.reshape(n, channels, -1)
    out: Any = 0
    for index, weight, _, _ in _corners(xp, grid, height, width):
        out = out + _gather(xp, flat, index) * weight[:, None, :]
    return out.reshape(n, channels, *grid.shape[2:])


def _sample_backward(kctx: Any, data: Any, grid: Any, out_grad: Any) -> tuple[Any, Any]:
    xp = kctx.xp
    n, channels, height, width = data.shape
    flat = data.reshape(n, channels, -1)
    dy = out_grad.reshape(n, channels, -1)
    data_grad = xp.zeros(flat.shape, dtype=data.dtype)
    grid_grad = xp.zeros((n, 2, dy.shape[2]), dtype=grid.dtype)
    if height * width == 0:  # no pixel is read: none gets a gradient, and moving a point changes nothing
        return data_grad.reshape(data.shape), grid_grad.reshape(grid.shape)
    batch, channel = xp.arange(n)[:, None, None], xp.arange(channels)[None, :, None]
    for index, weight, dweight_dx, dweight_dy in _corners(xp, grid, height, width):
        # a NaN grid point reads no pixel, so it sends none a gradient (as MXNet's); its output stays NaN
        landed = xp.where(xp.isnan(weight), 0, weight)
        kctx.backend.scatter_add(data_grad, (batch, channel, index[:, None, :]), dy * landed[:, None, :])
        pulled = (_gather(xp, flat, index) * dy).sum(axis=1)  # (N, P)
        grid_grad[:, 0] += pulled * dweight_dx
        grid_grad[:, 1] += pulled * dweight_dy
    return data_grad.reshape(data.shape), grid_grad.reshape(grid.shape)


def _sampler_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    outputs[0][...] = _sample(kctx.xp, inputs[0], inputs[1])


def _sampler_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data_grad, grid_grad = _sample_backward(kctx, inputs[1], inputs[2], inputs[0])
    outputs[0][...] = data_grad
    outputs[1][...] = grid_grad


def _sampler_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, grid = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"BilinearSampler: data must be 4-D (N, C, H, W), got {tuple(data)}")
    if grid is not None and (len(grid) != 4 or grid[1] != 2):
        raise ShapeError(f"BilinearSampler: grid must be (N, 2, H, W), got {tuple(grid)}")
    if data is None or grid is None:
        return in_shapes, [None], aux_shapes
    # the merge only fills grid's batch and channel dims, so its spatial dims are grid's own
    merged_grid = merge_shape("BilinearSampler", "grid", grid, (data[0], 2, grid[2], grid[3]))
    return [tuple(data), merged_grid], [(data[0], data[1], grid[2], grid[3])], aux_shapes


register(
    OpDef(
        "BilinearSampler",
        _sampler_forward,
        inputs=("data", "grid"),
        params={"cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility")},
        infer_shape=_sampler_infer,
        gradient=lambda F, attrs, inputs, outputs, og: list(F._backward_BilinearSampler(og[0], *inputs, **attrs)),
        float_data=True,  # MXNet: "only support floating point types"
        doc="Sample (N, C, H, W) ``data`` bilinearly at a normalised grid (N, 2, H', W'); outside is 0.",
    )
)
register(
    OpDef(
        "_backward_BilinearSampler",
        _sampler_backward,
        inputs=("out_grad", "data", "grid"),
        outputs=("data_grad", "grid_grad"),
        params={"cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility")},
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0], t[0]], a),
        doc="Gradients of BilinearSampler with respect to data and grid.",
    )
)


# -- SpatialTransformer --------------------------------------------------------------------------------
_ST_PARAMS = {
    "target_shape": Param(parse_shape, (0, 0), "(height, width) of the output"),
    "transform_type": Param(enum("affine"), "affine", "the transformation (affine: loc is (N, 6))"),
    "sampler_type": Param(enum("bilinear"), "bilinear", "the sampler"),
    "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
}


def _st_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data, loc = inputs
    height, width = attrs["target_shape"]
    outputs[0][...] = _sample(xp, data, _affine_grid(kctx, loc, height, width))


def _st_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out_grad, data, loc = inputs
    height, width = attrs["target_shape"]
    data_grad, grid_grad = _sample_backward(kctx, data, _affine_grid(kctx, loc, height, width), out_grad)
    outputs[0][...] = data_grad
    outputs[1][...] = _affine_grid_backward(kctx, grid_grad)


def _st_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    height, width = _target_size("SpatialTransformer", attrs)
    data, loc = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"SpatialTransformer: data must be 4-D (N, C, H, W), got {tuple(data)}")
    if data is None:
        return in_shapes, [None], aux_shapes
    loc = merge_shape("SpatialTransformer", "loc", loc, (data[0], 6))
    return [tuple(data), loc], [(data[0], data[1], height, width)], aux_shapes


register(
    OpDef(
        "SpatialTransformer",
        _st_forward,
        nonempty_axes={"data": (-2, -1)},
        inputs=("data", "loc"),
        params=dict(_ST_PARAMS),
        infer_shape=_st_infer,
        gradient=lambda F, attrs, inputs, outputs, og: list(F._backward_SpatialTransformer(og[0], *inputs, **attrs)),
        float_data=True,  # MXNet: "only support floating point types"
        doc="Warp (N, C, H, W) ``data`` by the affine transforms ``loc`` (N, 6) into ``target_shape``, "
        "sampling bilinearly.",
    )
)
register(
    OpDef(
        "_backward_SpatialTransformer",
        _st_backward,
        inputs=("out_grad", "data", "loc"),
        outputs=("data_grad", "loc_grad"),
        params=dict(_ST_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1], s[2]], a),
        infer_type=lambda attrs, t, a: (t, [t[0], t[0]], a),
        doc="Gradients of SpatialTransformer with respect to data and loc.",
    )
)
