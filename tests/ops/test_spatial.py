"""GridGenerator, BilinearSampler and SpatialTransformer: NumPy references (checked against MXNet 1.9.1),
gradients, shapes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)


def np_affine_grid(theta, height, width):
    grid = np.zeros((len(theta), 2, height, width))
    for n, t in enumerate(theta.reshape(-1, 2, 3)):
        for i in range(height):
            for j in range(width):
                x, y = -1 + 2 * j / (width - 1), -1 + 2 * i / (height - 1)
                grid[n, :, i, j] = t @ [x, y, 1]
    return grid


def np_warp_grid(flow):
    _, _, height, width = flow.shape
    grid = flow.astype(np.float64).copy()
    grid[:, 0] = (grid[:, 0] + np.arange(width)) / ((width - 1) / 2) - 1
    grid[:, 1] = (grid[:, 1] + np.arange(height)[:, None]) / ((height - 1) / 2) - 1
    return grid


def np_bilinear_sample(data, grid):
    n_batch, channels, height, width = data.shape
    out = np.zeros((n_batch, channels) + grid.shape[2:])
    for n in range(n_batch):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[n, 0, i, j] + 1) * (width - 1) / 2
                y = (grid[n, 1, i, j] + 1) * (height - 1) / 2
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for py, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                    for px, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                        if 0 <= px < width and 0 <= py < height:
                            out[n, :, i, j] += data[n, :, py, px] * wx * wy
    return out


THETA = np.array([[0.9, -0.2, 0.1, 0.3, 1.1, -0.2], [1.3, 0.4, 0.05, -0.5, 0.7, 0.3]])


def test_affine_grid_generator_matches_reference(ctx):
    params = {"transform_type": "affine", "target_shape": (3, 4)}
    check_forward("GridGenerator", [THETA], params, lambda t: np_affine_grid(t, 3, 4), ctx=ctx, rtol=1e-5)


def test_warp_grid_generator_matches_reference(ctx):
    flow = rng.standard_normal((2, 2, 3, 5))
    check_forward("GridGenerator", [flow], {"transform_type": "warp"}, np_warp_grid, ctx=ctx, rtol=1e-5)


@pytest.mark.parametrize("transform_type", ["affine", "warp"])
def test_grid_generator_gradient(ctx, transform_type):
    data = THETA if transform_type == "affine" else rng.standard_normal((1, 2, 3, 4))
    check_gradient("GridGenerator", [data], {"transform_type": transform_type, "target_shape": (3, 4)}, ctx=ctx)


def test_bilinear_sampler_matches_reference_inside_and_outside(ctx):
    data = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.3, 1.3, (2, 2, 3, 6))  # some points fall outside: zero padding
    check_forward("BilinearSampler", [data, grid], {}, np_bilinear_sample, ctx=ctx, rtol=1e-5, atol=1e-6)


def test_bilinear_sampler_gradient(ctx):
    data = rng.standard_normal((1, 2, 4, 5))
    grid = rng.uniform(-1.2, 1.2, (1, 2, 3, 3))
    check_gradient("BilinearSampler", [data, grid], ctx=ctx, rtol=1e-3, atol=1e-5)


def test_spatial_transformer_is_grid_generator_then_sampler(ctx):
    data = rng.standard_normal((2, 3, 5, 6))
    params = {"target_shape": (4, 3), "transform_type": "affine", "sampler_type": "bilinear"}
    expected = np_bilinear_sample(data, np_affine_grid(THETA, 4, 3))
    check_forward("SpatialTransformer", [data, THETA], params, lambda d, t: expected, ctx=ctx, rtol=1e-5, atol=1e-6)


def test_spatial_transformer_identity_transform_reproduces_the_input(ctx):
    data = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    identity = np.array([[1, 0, 0, 0, 1, 0]], np.float32)
    out = mx.nd.SpatialTransformer(
        mx.nd.array(data, ctx=ctx), mx.nd.array(identity, ctx=ctx), target_shape=(4, 5)
    ).asnumpy()
    np.testing.assert_allclose(out, data, rtol=1e-5, atol=1e-6)


def test_spatial_transformer_gradient(ctx):
    data = rng.standard_normal((1, 2, 4, 4))
    loc = np.array([[0.8, 0.15, 0.07, -0.1, 0.9, 0.12]])
    check_gradient("SpatialTransformer", [data, loc], {"target_shape": (3, 3)}, ctx=ctx, rtol=1e-3, atol=1e-5)


def test_spatial_transformer_symbol_infers_loc_and_output():
    net = sym.SpatialTransformer(sym.Variable("data"), sym.Variable("loc"), target_shape=(8, 8))
    args, outs, _ = net.infer_shape(data=(4, 3, 16, 16))
    assert args == [(4, 3, 16, 16), (4, 6)] and outs == [(4, 3, 8, 8)]


def test_spatial_ops_reject_bad_shapes():
    with pytest.raises(OperatorError, match="target_shape"):
        mx.nd.SpatialTransformer(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((1, 6)))
    with pytest.raises(ShapeError, match="grid must be \\(N, 2, H, W\\)"):
        mx.nd.BilinearSampler(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((1, 3, 4, 4)))
    with pytest.raises(ShapeError, match="data"):
        mx.nd.GridGenerator(mx.nd.zeros((2, 5)), transform_type="affine", target_shape=(2, 2))


def test_affine_grid_of_one_row_and_one_column_sits_on_the_first_pixel_centre():
    # MXNet 1.9.1 divides 0 by 0 here and gives NaN; lazynd places the lone row/column at -1 (README)
    theta = mx.nd.array([[1.0, 0, 0, 0, 1, 0]])
    grid = mx.nd.GridGenerator(theta, transform_type="affine", target_shape=(1, 3)).asnumpy()
    np.testing.assert_array_equal(grid[0, 0], [[-1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(grid[0, 1], [[-1.0, -1.0, -1.0]])


def test_warp_grid_over_one_column_divides_by_zero_without_a_numpy_warning():
    import warnings

    flow = mx.nd.zeros((1, 2, 3, 1))
    flow.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "divide by zero" warning would fail the kernel
        with mx.autograd.record():
            grid = mx.nd.GridGenerator(flow, transform_type="warp")
        grid.backward(mx.nd.ones(grid.shape))
        # one column: x is 0 / 0 (NaN) and the gradient 1 / 0 (inf), as MXNet 1.9.1 gives
        assert np.isnan(grid.asnumpy()[0, 0]).all()
        assert np.isinf(flow.grad.asnumpy()[0, 0]).all()
        np.testing.assert_allclose(grid.asnumpy()[0, 1, :, 0], [-1.0, 0.0, 1.0])


def test_bilinear_sampler_at_nan_or_infinite_grid_points_gives_nan_not_an_index_error():
    import warnings

    data = mx.nd.ones((1, 1, 2, 2))
    grid = mx.nd.array([[[[np.nan, 0.0]], [[0.0, np.inf]]]])  # (x, y) = (nan, 0) and (0, inf)
    data.attach_grad()
    grid.attach_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mx.autograd.record():
            out = mx.nd.BilinearSampler(data, grid)
        out.backward(mx.nd.ones(out.shape))
        # MXNet 1.9.1's values: NaN out, no pixel gets a gradient, NaN where the position is not finite
        assert np.isnan(out.asnumpy()).all()
        np.testing.assert_array_equal(data.grad.asnumpy(), np.zeros((1, 1, 2, 2)))
        np.testing.assert_array_equal(grid.grad.asnumpy().ravel(), [0.0, np.nan, np.nan, 0.0])
