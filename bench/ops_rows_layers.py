"""The operator benchmark's rows for training a network: layers, LeNet's convolutions, losses, optimizer updates."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops_case import RNG, TF, Case, N, aligned, nd, rand, torch, torch_full, torch_index, torch_view  # noqa: E402

import lazynd as mx  # noqa: E402


# -- neural network layers ---------------------------------------------------------------------
def nn_cases() -> list[Case]:
    x, w, bias = rand(N, N), rand(256, N), rand(256)
    a, wa, ba = nd(x, w, bias)
    tx, tw, tb = torch_view(x), torch_view(w), torch_view(bias)

    def np_softmax(v: np.ndarray) -> np.ndarray:
        out = v - v.max(axis=-1, keepdims=True)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)
        return out

    def np_log_softmax(v: np.ndarray) -> np.ndarray:
        out = v - v.max(axis=-1, keepdims=True)
        out -= np.log(np.exp(out).sum(axis=-1, keepdims=True))
        return out

    # BatchNorm in training on a LeNet-sized activation (128, 20, 24, 24) = 1.47M elements
    bn_x = rand(128, 20, 24, 24)
    gamma, beta = rand(20, low=0.5, high=1.5), rand(20)
    bnx, bng, bnb = nd(bn_x, gamma, beta)
    mm, mv = mx.nd.zeros((20,)), mx.nd.ones((20,))
    t_bn = (torch_view(bn_x), torch_view(gamma), torch_view(beta), torch_full(20, 0.0), torch_full(20, 1.0))
    eps = 1e-3

    def np_batchnorm() -> np.ndarray:
        mean = bn_x.mean(axis=(0, 2, 3), keepdims=True)
        centered = bn_x - mean
        var = np.square(centered).mean(axis=(0, 2, 3), keepdims=True)
        scale = gamma.reshape(1, -1, 1, 1) / np.sqrt(var + eps)
        centered *= scale
        centered += beta.reshape(1, -1, 1, 1)
        return centered

    # Pooling: max 2x2 stride 2 on (128, 20, 24, 24)
    # non-overlapping 2x2 windows: the four strided slabs combined (faster than reshape + max over two axes)
    slabs = [bn_x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]

    def np_pool() -> np.ndarray:
        out = np.maximum(slabs[0], slabs[1])
        np.maximum(out, slabs[2], out=out)
        return np.maximum(out, slabs[3], out=out)

    def np_avg_pool() -> np.ndarray:
        out = np.add(slabs[0], slabs[1])
        np.add(out, slabs[2], out=out)
        np.add(out, slabs[3], out=out)
        return np.multiply(out, np.float32(0.25), out=out)

    # global pooling at the head of a ResNet: (32, 512, 7, 7), one window per channel
    gp_x = rand(32, 512, 7, 7)
    (gpx,) = nd(gp_x)
    t_gp = torch_view(gp_x)

    return [
        Case(
            "nn",
            "FullyConnected 1000->256",
            lambda: mx.nd.FullyConnected(a, wa, ba, num_hidden=256),
            lambda: np.add(x @ w.T, bias),
            lambda: TF.linear(tx, tw, tb),
        ),
        Case(
            "nn",
            "Activation relu",
            lambda: mx.nd.Activation(a, act_type="relu"),
            lambda: np.maximum(x, 0),
            lambda: torch.relu(tx),
        ),
        Case(
            "nn",
            "Activation tanh",
            lambda: mx.nd.Activation(a, act_type="tanh"),
            lambda: np.tanh(x),
            lambda: torch.tanh(tx),
        ),
        Case("nn", "softmax axis=-1", lambda: mx.nd.softmax(a), lambda: np_softmax(x), lambda: torch.softmax(tx, -1)),
        Case(
            "nn",
            "log_softmax",
            lambda: mx.nd.log_softmax(a),
            lambda: np_log_softmax(x),
            lambda: torch.log_softmax(tx, -1),
        ),
        Case(
            "nn",
            "BatchNorm train (128,20,24,24)",
            lambda: mx.nd.BatchNorm(bnx, bng, bnb, mm, mv, fix_gamma=False, is_train=True),
            np_batchnorm,
            lambda: TF.batch_norm(t_bn[0], t_bn[3], t_bn[4], t_bn[1], t_bn[2], training=True, eps=eps),
            check=True,
        ),
        Case(
            "nn",
            "Pooling max 2x2/2",
            lambda: mx.nd.Pooling(bnx, kernel=(2, 2), stride=(2, 2), pool_type="max"),
            np_pool,
            lambda: TF.max_pool2d(t_bn[0], 2, 2),
        ),
        Case(
            "nn",
            "Pooling avg 2x2/2",
            lambda: mx.nd.Pooling(bnx, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
            np_avg_pool,
            lambda: TF.avg_pool2d(t_bn[0], 2, 2),
        ),
        # global pooling, one window a sample: NumPy's reduction and PyTorch's adaptive pooling to 1x1
        *(
            Case(
                "nn",
                f"Pooling global {mode} (32,512,7,7)",
                lambda mode=mode: mx.nd.Pooling(gpx, global_pool=True, kernel=(1, 1), pool_type=mode),
                lambda reduce=reduce: reduce(gp_x, axis=(2, 3), keepdims=True),
                lambda adaptive=adaptive: getattr(TF, adaptive)(t_gp, 1),  # (TF is None without PyTorch)
            )
            for mode, reduce, adaptive in (
                ("max", np.max, "adaptive_max_pool2d"),
                ("avg", np.mean, "adaptive_avg_pool2d"),
            )
        ),
        _roi_pooling_case(),
    ]


def _roi_pooling_case() -> Case:
    """Fast R-CNN's ROIPooling: 128 regions of a (1, 256, 38, 50) feature map into 7x7 bins.

    The NumPy reference is what a user writes without a kernel: the bins' bounds computed once
    (outside the timing, a saving lazynd does not get) and one ``max`` per bin over all channels.
    PyTorch has no ROI pooling of its own (torchvision's is a separate package): no column."""
    feature, count, scale = rand(1, 256, 38, 50), 128, 1 / 16
    corner = RNG.uniform(0, 600, (count, 2))
    size = RNG.uniform(16, 300, (count, 2))
    rois = aligned(np.column_stack([np.zeros(count), corner, corner + size]).astype(np.float32))
    fa, ra = nd(feature, rois)
    bins = []
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) * scale + 0.5)) for v in roi[1:])
        bin_h, bin_w = max(y2 - y1 + 1, 1) / 7, max(x2 - x1 + 1, 1) / 7
        for i in range(7):
            h0 = min(max(int(np.floor(i * bin_h)) + y1, 0), 38)
            h1 = min(max(int(np.ceil((i + 1) * bin_h)) + y1, 0), 38)
            for j in range(7):
                w0 = min(max(int(np.floor(j * bin_w)) + x1, 0), 50)
                w1 = min(max(int(np.ceil((j + 1) * bin_w)) + x1, 0), 50)
                if h1 > h0 and w1 > w0:
                    bins.append((r, i, j, feature[0, :, h0:h1, w0:w1]))

    def np_roi_pooling() -> np.ndarray:
        out = np.zeros((count, 256, 7, 7), np.float32)
        for r, i, j, window in bins:
            out[r, :, i, j] = window.max(axis=(1, 2))
        return out

    return Case(
        "nn",
        "ROIPooling 128 regions 7x7 (1,256,38,50)",
        lambda: mx.nd.ROIPooling(fa, ra, pooled_size=(7, 7), spatial_scale=scale),
        np_roi_pooling,
    )


def _np_conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """im2col by a strided view copied once, then one batched GEMM written in NCHW order."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # (n, c, oh, ow, kh, kw)
    col = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)
    out = np.matmul(w.reshape(f, -1), col)  # (n, f, oh*ow)
    out += b.reshape(1, -1, 1)
    return out.reshape(n, f, oh, ow), col


def _np_conv_backward(
    dy: np.ndarray, col: np.ndarray, w: np.ndarray, x_shape: tuple
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, c, h, wd = x_shape
    f, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    dym = dy.reshape(n, f, oh * ow)
    dw = np.matmul(dym, col.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    db = dym.sum(axis=(0, 2))
    dcol = np.matmul(w.reshape(f, -1).T, dym).reshape(n, c, kh, kw, oh, ow)
    dx = np.zeros(x_shape, np.float32)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i : i + oh, j : j + ow] += dcol[:, :, i, j]
    return dx, dw, db


def conv_cases() -> list[Case]:
    """LeNet's two convolutions: (128,1,28,28) -> 20 filters 5x5; (128,20,12,12) -> 50 filters 5x5."""
    cases = []
    for label, (n, c, s, f) in (
        ("conv1 128x1x28x28 -> 20@5x5", (128, 1, 28, 20)),
        ("conv2 128x20x12x12 -> 50@5x5", (128, 20, 12, 50)),
    ):
        x, w, b = rand(n, c, s, s), rand(f, c, 5, 5, low=-0.1, high=0.1), rand(f)
        o = s - 4
        dy = rand(n, f, o, o)
        xa, wa, ba, dya = nd(x, w, b, dy)
        tx, tw, tb, tdy = torch_view(x), torch_view(w), torch_view(b), torch_view(dy)
        params = {"kernel": (5, 5), "num_filter": f}

        def lz_fwd(xa=xa, wa=wa, ba=ba, params=params) -> object:
            return mx.nd.Convolution(xa, wa, ba, **params)

        def lz_fwd_bwd(xa=xa, wa=wa, ba=ba, dya=dya, params=params) -> object:
            y = mx.nd.Convolution(xa, wa, ba, **params)
            return [y, *mx.nd._backward_Convolution(dya, xa, wa, **params)]

        def np_fwd(x=x, w=w, b=b) -> object:
            return _np_conv_forward(x, w, b)[0]

        def np_fwd_bwd(x=x, w=w, b=b, dy=dy) -> object:
            y, col = _np_conv_forward(x, w, b)
            return [y, *_np_conv_backward(dy, col, w, x.shape)]

        def torch_fwd(tx=tx, tw=tw, tb=tb) -> object:
            with torch.no_grad():
                return TF.conv2d(tx, tw, tb)

        def torch_fwd_bwd(tx=tx, tw=tw, tb=tb, tdy=tdy) -> object:
            xs, ws, bs = (t.detach().requires_grad_() for t in (tx, tw, tb))
            y = TF.conv2d(xs, ws, bs)
            y.backward(tdy)
            return [y.detach(), xs.grad, ws.grad, bs.grad]

        cases.append(Case("conv", f"{label} fwd", lz_fwd, np_fwd, torch_fwd))
        cases.append(Case("conv", f"{label} fwd+bwd", lz_fwd_bwd, np_fwd_bwd, torch_fwd_bwd))
    return cases + depthwise_cases()


def _np_depthwise(x: np.ndarray, w: np.ndarray, dy: np.ndarray | None) -> list[np.ndarray]:
    """A 3x3, pad 1 convolution of one channel per group by kernel offsets: shifted views of the padded
    data times per-channel weights; with ``dy``, the data and weight gradients the same way."""
    n, c, h, wd = x.shape
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    wk = w.reshape(c, 9)
    y = np.zeros_like(x)
    for k in range(9):
        y += padded[:, :, k // 3 : k // 3 + h, k % 3 : k % 3 + wd] * wk[:, k, None, None]
    if dy is None:
        return [y]
    dx_padded = np.zeros_like(padded)
    dw = np.empty((c, 9), np.float32)
    for k in range(9):
        window = (slice(None), slice(None), slice(k // 3, k // 3 + h), slice(k % 3, k % 3 + wd))
        dw[:, k] = np.einsum("nchw,nchw->c", dy, padded[window])
        dx_padded[window] += dy * wk[:, k, None, None]
    return [y, dx_padded[:, :, 1:-1, 1:-1], dw.reshape(w.shape)]


def depthwise_cases() -> list[Case]:
    """A MobileNet layer: a 3x3, pad 1 depthwise convolution (one channel per group) of (16, 64, 28, 28)."""
    x, w, dy = rand(16, 64, 28, 28), rand(64, 1, 3, 3, low=-0.3, high=0.3), rand(16, 64, 28, 28)
    xa, wa, dya = nd(x, w, dy)
    tx, tw, tdy = torch_view(x), torch_view(w), torch_view(dy)
    params = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 64, "num_group": 64, "no_bias": True}

    def lz_fwd_bwd() -> object:
        y = mx.nd.Convolution(xa, wa, **params)
        return [y, *mx.nd._backward_Convolution(dya, xa, wa, **params)]

    def torch_fwd() -> object:
        with torch.no_grad():
            return TF.conv2d(tx, tw, padding=1, groups=64)

    def torch_fwd_bwd() -> object:
        xs, ws = (t.detach().requires_grad_() for t in (tx, tw))
        y = TF.conv2d(xs, ws, padding=1, groups=64)
        y.backward(tdy)
        return [y.detach(), xs.grad, ws.grad]

    label = "depthwise 16x64x28x28 3x3 pad 1"
    return [
        Case(
            "conv",
            f"{label} fwd",
            lambda: mx.nd.Convolution(xa, wa, **params),
            lambda: _np_depthwise(x, w, None)[0],
            torch_fwd,
        ),
        Case("conv", f"{label} fwd+bwd", lz_fwd_bwd, lambda: _np_depthwise(x, w, dy), torch_fwd_bwd),
    ]


def loss_cases() -> list[Case]:
    x = rand(N, N)
    label = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    target = rand(N, N)
    prob = np.exp(x - x.max(axis=-1, keepdims=True))
    prob = aligned(prob / prob.sum(axis=-1, keepdims=True))
    a, lab, tgt, p = nd(x, label, target, prob)
    rows, cols = np.arange(N), label.astype(np.intp)
    tx, tl, tt, tp = torch_view(x), torch_index(label), torch_view(target), torch_view(prob)

    def np_softmax() -> np.ndarray:
        out = x - x.max(axis=-1, keepdims=True)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)
        return out

    def np_softmax_output_grad() -> np.ndarray:
        grad = prob.copy()
        grad[rows, cols] -= 1
        return grad

    def torch_softmax_output_grad() -> object:
        grad = tp.clone()
        grad[torch.arange(N), tl] -= 1
        return grad

    def np_linreg_grad() -> np.ndarray:
        # MXNet divides by the number of outputs per sample
        grad = x - target
        grad *= np.float32(1.0 / N)
        return grad

    return [
        Case(
            "loss", "SoftmaxOutput fwd", lambda: mx.nd.SoftmaxOutput(a, lab), np_softmax, lambda: torch.softmax(tx, -1)
        ),
        Case(
            "loss",
            "SoftmaxOutput bwd",
            lambda: mx.nd._backward_SoftmaxOutput(p, lab),
            np_softmax_output_grad,
            torch_softmax_output_grad,
        ),
        Case(
            "loss",
            "LinearRegressionOutput bwd",
            lambda: mx.nd._backward_LinearRegressionOutput(a, tgt),
            np_linreg_grad,
            lambda: (tx - tt).mul_(1.0 / N),
        ),
    ]


def optimizer_cases() -> list[Case]:
    lr, mom, wd, rescale = 0.01, 0.9, 1e-4, 1.0 / 128
    w0, g = rand(N, N), rand(N, N)
    # the weights and the momentum are the operators' own state, updated in place: lazynd's copies
    weight, (grad,), state = mx.nd.array(w0), nd(g), mx.nd.zeros((N, N))
    weight2 = mx.nd.array(w0)
    # the references' state on pages too, as lazynd's is (see nd)
    w_np, m_np = aligned(w0), aligned(np.zeros((N, N), np.float32))
    w_np2 = aligned(w0)
    tmp = aligned(np.empty((N, N), np.float32))
    tw, tg, tm = torch_view(w0.copy()), torch_view(g), torch_view(np.zeros((N, N), np.float32))

    def np_sgd() -> np.ndarray:
        # w -= lr * (rescale * g + wd * w): w * (1 - lr * wd) - (lr * rescale) * g, one temporary
        np.multiply(g, np.float32(lr * rescale), out=tmp)
        np.multiply(w_np2, np.float32(1 - lr * wd), out=w_np2)
        return np.subtract(w_np2, tmp, out=w_np2)

    def np_sgd_mom() -> np.ndarray:
        # m = mom * m - lr * (rescale * g + wd * w); w += m
        np.multiply(g, np.float32(lr * rescale), out=tmp)
        np.multiply(m_np, np.float32(mom), out=m_np)
        np.subtract(m_np, tmp, out=m_np)
        np.multiply(w_np, np.float32(lr * wd), out=tmp)
        np.subtract(m_np, tmp, out=m_np)
        return np.add(w_np, m_np, out=w_np)

    def torch_sgd_mom() -> object:
        tm.mul_(mom).sub_(tg * rescale + tw * wd, alpha=lr)
        return tw.add_(tm)

    return [
        Case(
            "optimizer",
            "sgd_update",
            lambda: mx.nd.sgd_update(weight2, grad, out=weight2, lr=lr, wd=wd, rescale_grad=rescale),
            np_sgd,
            lambda: tw.sub_(tg * rescale + tw * wd, alpha=lr),
            check=False,
        ),
        Case(
            "optimizer",
            "sgd_mom_update",
            lambda: mx.nd.sgd_mom_update(
                weight, grad, state, out=weight, lr=lr, momentum=mom, wd=wd, rescale_grad=rescale
            ),
            np_sgd_mom,
            torch_sgd_mom,
            check=False,
        ),
    ]
