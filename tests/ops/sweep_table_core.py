"""The operator sweep's explicit cases for MXNet 0.9's operators (those :func:`sweep_cases.auto_case` cannot derive)."""

from __future__ import annotations

import numpy as np
from sweep_inputs import SHAPE, Case, In, _assign, _f

# -- the explicit table -----------------------------------------------------------------------------
IDX = In((3,), 0, 3, integer=True)  # indices into a first axis of 4 (take, batch_take, pick)
LABEL = In((3,), 0, 3, integer=True)  # class labels for 4 classes
ADAM_STATE = In(SHAPE, 0.1, 0.5)

OTHER_CASES: dict[str, Case] = {
    "Activation": Case([In(SHAPE, -1, 1)], {"act_type": "tanh"}, reference=np.tanh),
    "Cast": Case([In()], {"dtype": "float64"}, reference=lambda x: x.astype(np.float64), grad=False),
    "Concat": Case([In(), In((3, 2))], {"dim": 1}, reference=lambda a, b: np.concatenate([a, b], axis=1)),
    "_rnn_param_concat": Case([In((6,)), In((4,))], {"dim": 0}, reference=lambda a, b: np.concatenate([a, b])),
    "ElementWiseSum": Case([In(), In(), In()], reference=lambda a, b, c: a + b + c),
    "add_n": Case([In(), In()], reference=lambda a, b: a + b),
    "stack": Case([In(), In()], {"axis": 1}, reference=lambda a, b: np.stack([a, b], axis=1)),
    "dot": Case([In((3, 4)), In((4, 5))], reference=np.dot),
    "batch_dot": Case([In((2, 3, 4)), In((2, 4, 5))], reference=np.matmul),
    "transpose": Case([In((2, 3, 4))], reference=np.transpose),
    "SwapAxis": Case([In((2, 3, 4))], {"dim1": 0, "dim2": 2}, reference=lambda x: np.swapaxes(x, 0, 2)),
    "Flatten": Case([In((2, 3, 4))], reference=lambda x: x.reshape(2, 12)),
    "Reshape": Case([In()], {"shape": (2, 6)}, reference=lambda x: x.reshape(2, 6)),
    "expand_dims": Case([In()], {"axis": 1}, reference=lambda x: np.expand_dims(x, 1)),
    "squeeze": Case([In((1, 3, 1, 2))], {"axis": (0, 2)}, reference=lambda x: np.squeeze(x, (0, 2))),
    "flip": Case([In()], {"axis": 1}, reference=lambda x: np.flip(x, 1)),
    "tile": Case([In()], {"reps": (2, 1)}, reference=lambda x: np.tile(x, (2, 1))),
    "repeat": Case([In()], {"repeats": 2, "axis": 0}, reference=lambda x: np.repeat(x, 2, axis=0)),
    "slice": Case([In()], {"begin": (0, 1), "end": (2, 3)}, reference=lambda x: x[0:2, 1:3]),
    "slice_axis": Case([In()], {"axis": 1, "begin": 1, "end": 3}, reference=lambda x: x[:, 1:3]),
    "clip": Case([In()], {"a_min": 0.3, "a_max": 0.6}, reference=lambda x: np.clip(x, 0.3, 0.6)),
    "broadcast_to": Case([In((1, 4))], {"shape": (3, 4)}, reference=lambda x: np.broadcast_to(x, (3, 4))),
    "broadcast_axis": Case([In((3, 1))], {"axis": 1, "size": 4}, reference=lambda x: np.repeat(x, 4, axis=1)),
    "broadcast_like": Case([In((1, 4)), In()], reference=lambda a, b: np.broadcast_to(a, b.shape), grad=False),
    "reshape_like": Case([In((2, 6)), In()], reference=lambda a, b: a.reshape(b.shape), grad=False),
    "_reduce_to_like": Case([In(), In((1, 4))], reference=lambda a, b: a.sum(axis=0, keepdims=True), grad=False),
    "_identity_with_attr_like_rhs": Case([In(), In()], reference=lambda a, b: a, grad=False),
    "cast_storage": Case([In()], {"stype": "default"}, reference=lambda x: x),
    "take": Case([In((4, 3)), IDX], reference=lambda a, i: a[i.astype(int)]),
    "batch_take": Case([In((3, 4)), IDX], reference=lambda a, i: a[np.arange(3), i.astype(int)]),
    "pick": Case([In((3, 4)), IDX], {"axis": 1}, reference=lambda a, i: a[np.arange(3), i.astype(int)]),
    "choose_element_0index": Case([In((3, 4)), IDX], reference=lambda a, i: a[np.arange(3), i.astype(int)]),
    "one_hot": Case([IDX], {"depth": 4}, reference=lambda i: np.eye(4, dtype=np.float32)[i.astype(int)], grad=False),
    "onehot_encode": Case(
        [IDX, In((3, 4), values=np.zeros(12))],
        reference=lambda i, o: np.eye(4, dtype=np.float32)[i.astype(int)],
        grad=False,
    ),
    "where": Case(
        [In(SHAPE, 0, 1, integer=True), In(), In()], reference=lambda c, x, y: np.where(c != 0, x, y), grad=False
    ),
    "sort": Case([In()], reference=lambda x: np.sort(x, axis=-1)),
    "argsort": Case([In()], reference=_f(lambda x: np.argsort(x, axis=-1)), grad=False),
    "topk": Case([In()], reference=_f(lambda x: np.argsort(-x, axis=-1)[:, :1]), grad=False),
    "softmax": Case([In()], reference=lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    "log_softmax": Case([In()], reference=lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    "SoftmaxActivation": Case([In()], reference=lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    "smooth_l1": Case([In(SHAPE, -2, 2)], {"scalar": 1.0}),
    "_smooth_l1_slope": Case([In(SHAPE, -2, 2)], grad=False),
    "LeakyReLU": Case([In(SHAPE, -1, 1)], reference=lambda x: np.where(x > 0, x, 0.25 * x)),
    "L2Normalization": Case([In()], reference=lambda x: x / np.sqrt((x * x).sum(1, keepdims=True) + 1e-10)),
    "FullyConnected": Case(
        [In((2, 3)), In((4, 3)), In((4,))], {"num_hidden": 4}, reference=lambda x, w, b: x @ w.T + b
    ),
    "Embedding": Case(
        [IDX, In((4, 2))], {"input_dim": 4, "output_dim": 2}, reference=lambda i, w: w[i.astype(int)], grad=False
    ),
    "Convolution": Case([In((1, 2, 4, 4)), In((3, 2, 2, 2)), In((3,))], {"kernel": (2, 2), "num_filter": 3}),
    "Deconvolution": Case([In((1, 2, 3, 3)), In((2, 3, 2, 2))], {"kernel": (2, 2), "num_filter": 3}),
    "Pooling": Case([In((1, 2, 4, 4))], {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg"}),
    "UpSampling": Case([In((1, 2, 2, 2))], {"scale": 2, "sample_type": "nearest", "num_args": 1}),
    "LRN": Case([In((1, 3, 2, 2))], {"nsize": 3}),
    "InstanceNorm": Case([In((2, 3, 4)), In((3,)), In((3,))]),
    "LayerNorm": Case([In((2, 3, 4)), In((4,)), In((4,))], {"eps": 0.01}),
    "BatchNorm": Case(
        [In((2, 3, 2)), In((3,)), In((3,))], aux=[In((3,), 0.1, 0.3), In((3,), 0.5, 1.0)], grad=False
    ),  # is_train=False uses the moving statistics, the gradient rule the batch's: not comparable
    "IdentityAttachKLSparseReg": Case([In()], aux=[In((4,))], grad=False),
    "Dropout": Case([In()], reference=lambda x: x, grad=False),  # inference: the identity
    "Pad": Case(
        [In((1, 1, 2, 3))],
        {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 2, 2)},
        reference=lambda x: np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2))),
    ),
    "SliceChannel": Case([In((3, 4))], {"num_outputs": 2, "axis": 1}, reference=lambda x: (x[:, :2], x[:, 2:])),
    "Crop": Case([In((1, 1, 4, 4))], {"num_args": 1, "h_w": (2, 2)}, reference=lambda x: x[:, :, :2, :2]),
    "SequenceMask": Case([In((3, 2, 2))]),
    "SequenceLast": Case([In((3, 2, 2))], reference=lambda x: x[-1]),
    "SequenceReverse": Case([In((3, 2, 2))], reference=lambda x: x[::-1]),
    "SoftmaxOutput": Case([In(), LABEL], grad=False),
    "LinearRegressionOutput": Case([In(), In()], reference=lambda x, y: x, grad=False),
    "LogisticRegressionOutput": Case([In(), In()], reference=lambda x, y: 1 / (1 + np.exp(-x)), grad=False),
    "MAERegressionOutput": Case([In(), In()], reference=lambda x, y: x, grad=False),
    "SVMOutput": Case([In(), LABEL], reference=lambda x, y: x, grad=False),
    "MakeLoss": Case([In()], reference=lambda x: x, grad=False),
    "make_loss": Case([In()], reference=lambda x: x, grad=False),
    "softmax_cross_entropy": Case([In(), LABEL], grad=False),
    "_crop_assign": Case(
        [In(), In((2, 2))], {"begin": (0, 1), "end": (2, 3)}, reference=lambda a, b: _assign(a, b), grad=False
    ),
    "_crop_assign_scalar": Case(
        [In()], {"begin": (0, 1), "end": (2, 3), "scalar": 2.0}, reference=lambda a: _assign(a, 2.0), grad=False
    ),
    "fill_element_0index": Case([In((3, 4)), In((3,)), IDX], grad=False),
    "_digamma": Case([In(SHAPE, 1, 2)]),
    "_zeros": Case([], {"shape": (2, 3)}, reference=lambda: np.zeros((2, 3), np.float32), grad=False),
    "_ones": Case([], {"shape": (2, 3)}, reference=lambda: np.ones((2, 3), np.float32), grad=False),
    "_arange": Case([], {"start": 1, "stop": 7}, reference=lambda: np.arange(1, 7, dtype=np.float32), grad=False),
    "_full": Case([], {"shape": (2, 3), "value": 2.5}, reference=lambda: np.full((2, 3), 2.5, np.float32), grad=False),
    "zeros_like": Case([In()], reference=lambda x: np.zeros_like(x), grad=False),
    "ones_like": Case([In()], reference=lambda x: np.ones_like(x), grad=False),
    "_random_uniform": Case([], {"shape": (2, 3)}, grad=False, random=True),
    "_random_normal": Case([], {"shape": (2, 3)}, grad=False, random=True),
    "_random_randint": Case([], {"shape": (2, 3), "low": 0, "high": 5}, grad=False, random=True),
    "sgd_update": Case([In(), In()], {"lr": 0.1}, reference=lambda w, g: w - 0.1 * g, grad=False),
    "sgd_mom_update": Case([In(), In(), In()], {"lr": 0.1, "momentum": 0.9}, grad=False),
    "adam_update": Case([In(), In(), In(), ADAM_STATE], {"lr": 0.1}, grad=False),
    "rmsprop_update": Case([In(), In(), ADAM_STATE], {"lr": 0.1}, grad=False),
    # n > g * g keeps the square root real
    "rmspropalex_update": Case([In(), In(), In(SHAPE, 0.5, 1.0), In(SHAPE, 0, 0.1), In()], {"lr": 0.1}, grad=False),
    "multi_sgd_update": Case(
        [In(), In(), In((2,)), In((2,))],
        {"lrs": (0.1, 0.2), "wds": (0.0, 0.0), "num_weights": 2},
        reference=lambda w0, g0, w1, g1: (w0 - 0.1 * g0, w1 - 0.2 * g1),
        grad=False,
    ),
    "multi_sgd_mom_update": Case(
        [In(), In(), In(), In((2,)), In((2,)), In((2,))],
        {"lrs": (0.1, 0.2), "wds": (0.0, 0.0), "momentum": 0.9, "num_weights": 2},
        reference=lambda w0, g0, m0, w1, g1, m1: (w0 + 0.9 * m0 - 0.1 * g0, w1 + 0.9 * m1 - 0.2 * g1),
        grad=False,
    ),
    "nag_mom_update": Case([In(), In(), In()], {"lr": 0.1, "momentum": 0.9}, grad=False),
    # float16 weight and gradient, float32 momentum and master copy
    "mp_sgd_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In()],
        {"lr": 0.1},
        reference=lambda w, g, w32: (w32 - 0.1 * g.astype(np.float32)).astype(np.float16),
        grad=False,
    ),
    "mp_sgd_mom_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), In()], {"lr": 0.1, "momentum": 0.9}, grad=False
    ),
    "mp_nag_mom_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), In()], {"lr": 0.1, "momentum": 0.9}, grad=False
    ),
    "multi_mp_sgd_update": Case(
        [
            In(dtype="float16"),
            In(dtype="float16"),
            In(),
            In((2,), dtype="float16"),
            In((2,), dtype="float16"),
            In((2,)),
        ],
        {"lrs": (0.1, 0.2), "wds": (0.0, 0.0), "num_weights": 2},
        reference=lambda w0, g0, w32_0, w1, g1, w32_1: (
            (w32_0 - 0.1 * g0.astype(np.float32)).astype(np.float16),
            (w32_1 - 0.2 * g1.astype(np.float32)).astype(np.float16),
        ),
        grad=False,
    ),
    "multi_mp_sgd_mom_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), In()] * 2,
        {"lrs": (0.1, 0.2), "wds": (0.0, 0.0), "momentum": 0.9, "num_weights": 2},
        grad=False,
    ),
    # the preloaded twins: lrs and wds as the last two inputs
    "preloaded_multi_sgd_update": Case(
        [In(), In(), In((2,)), In((2,)), In((2,), values=[0.1, 0.2]), In((2,), values=[0.0, 0.0])],
        {"num_weights": 2},
        reference=lambda w0, g0, w1, g1, lrs, wds: (w0 - 0.1 * g0, w1 - 0.2 * g1),
        grad=False,
    ),
    "preloaded_multi_sgd_mom_update": Case(
        [In(), In(), In(), In((2,)), In((2,)), In((2,)), In((2,), values=[0.1, 0.2]), In((2,), values=[0.0, 0.0])],
        {"momentum": 0.9, "num_weights": 2},
        reference=lambda w0, g0, m0, w1, g1, m1, lrs, wds: (w0 + 0.9 * m0 - 0.1 * g0, w1 + 0.9 * m1 - 0.2 * g1),
        grad=False,
    ),
    "preloaded_multi_mp_sgd_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), In((1,), values=[0.1]), In((1,), values=[0.0])],
        {"num_weights": 1},
        reference=lambda w, g, w32, lrs, wds: (w32 - 0.1 * g.astype(np.float32)).astype(np.float16),
        grad=False,
    ),
    "preloaded_multi_mp_sgd_mom_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), In(), In((1,), values=[0.1]), In((1,), values=[0.0])],
        {"momentum": 0.9, "num_weights": 1},
        grad=False,
    ),
    # the contrib updates: rescale_grad an input of one element; the states start at 0 or above
    "_adamw_update": Case([In(), In(), In(), ADAM_STATE, In((1,), values=[1.0])], {"lr": 0.1, "eta": 1.0}, grad=False),
    "_mp_adamw_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), ADAM_STATE, In(), In((1,), values=[1.0])],
        {"lr": 0.1, "eta": 1.0},
        grad=False,
    ),
    "_multi_adamw_update": Case(
        [In(), In(), In(), ADAM_STATE, In((1,), values=[1.0])],
        {"lrs": (0.1,), "wds": (0.0,), "etas": (1.0,)},
        grad=False,
    ),
    "_multi_mp_adamw_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), ADAM_STATE, In(), In((1,), values=[1.0])],
        {"lrs": (0.1,), "wds": (0.0,), "etas": (1.0,)},
        grad=False,
    ),
    "_multi_lamb_update": Case(
        [In(), In(), In(), ADAM_STATE], {"learning_rates": (0.1,), "wds": (0.0,), "step_count": (2,)}, grad=False
    ),
    "_multi_mp_lamb_update": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), ADAM_STATE, In()],
        {"learning_rates": (0.1,), "wds": (0.0,), "step_count": (2,)},
        grad=False,
    ),
    "_contrib_group_adagrad_update": Case([In(), In(), In((3, 1))], {"lr": 0.1}, grad=False),
    "multi_sum_sq": Case(
        [In(), In((5,))],
        {"num_arrays": 2},
        reference=lambda a, b: np.array([(a * a).sum(), (b * b).sum()], np.float32),
        grad=False,
    ),
    "all_finite": Case([In()], reference=lambda x: np.ones(1, np.float32), grad=False),
    "multi_all_finite": Case(
        [In(), In((2,), values=[1.0, np.inf])],
        {"num_arrays": 2},
        reference=lambda a, b: np.zeros(1, np.float32),
        grad=False,
    ),
    "ravel_multi_index": Case(
        [In((2, 4), 0, 2, integer=True)],
        {"shape": (3, 5)},
        reference=lambda m: (m[0] * 5 + m[1]).astype(np.float32),
        grad=False,
    ),
    "unravel_index": Case(
        [In((4,), 0, 14, integer=True)],
        {"shape": (3, 5)},
        reference=lambda f: np.array(np.unravel_index(f.astype(np.int64), (3, 5)), np.float32),
        grad=False,
    ),
    "im2col": Case([In((1, 2, 4, 4))], {"kernel": (2, 2), "stride": (1, 2), "pad": (1, 0)}),
    "col2im": Case([In((1, 8, 10))], {"output_size": (4, 4), "kernel": (2, 2), "stride": (1, 2), "pad": (1, 0)}),
    "_histogram": Case(
        [In((3, 4), 0, 1)],
        {"bin_cnt": 3, "range": (0.0, 1.0)},
        reference=lambda x: (
            np.histogram(x, bins=3, range=(0.0, 1.0))[0],
            np.linspace(0, 1, 4, dtype=np.float32),
        ),
        grad=False,
    ),
    # parameters of shape (3,), samples (3, 4): row i drawn from distribution i
    "random_pdf_uniform": Case([In(), In((3,), 0.0, 0.1), In((3,), 0.9, 1.0)]),
    "random_pdf_normal": Case([In(), In((3,)), In((3,), 0.5, 1.5)]),
    "random_pdf_gamma": Case([In(), In((3,), 1.5, 3.0), In((3,), 0.5, 2.0)]),
    "random_pdf_exponential": Case([In(), In((3,), 0.5, 2.0)]),
    # counts: the sample has no gradient (MXNet gives it none), so the rule is checked in test_random_pdf.py
    "random_pdf_poisson": Case([In(SHAPE, 0, 4, integer=True), In((3,), 0.5, 2.0)], grad=False),
    "random_pdf_negative_binomial": Case([In(SHAPE, 0, 4, integer=True), In((3,), 1, 4), In((3,))], grad=False),
    "random_pdf_generalized_negative_binomial": Case(
        [In(SHAPE, 0, 4, integer=True), In((3,), 1, 3), In((3,), 0.2, 0.6)], grad=False
    ),
    "random_pdf_dirichlet": Case([In((2, 3, 4), 0.1, 0.3), In((2, 4), 1.0, 3.0)]),
    "Correlation": Case([In((1, 2, 4, 4)), In((1, 2, 4, 4))]),
    "BilinearSampler": Case([In((1, 2, 3, 3)), In((1, 2, 3, 3), -0.9, 0.9)]),
    "GridGenerator": Case([In((1, 6))], {"transform_type": "affine", "target_shape": (3, 4)}),
    "SpatialTransformer": Case(
        [In((1, 2, 4, 4)), In((1, 6), values=[0.7, 0.1, 0.05, 0.05, 0.6, 0.1])], {"target_shape": (3, 3)}
    ),
    "ROIPooling": Case(
        [In((1, 2, 4, 4)), In((2, 5), integer=True, values=[[0, 0, 0, 3, 3], [0, 1, 1, 2, 3]])],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
    ),
    # a repeated label (a blank between) and a label padded with 0; the gradient is the data's only
    "CTCLoss": Case([In((4, 2, 4), -1, 1), In((2, 2), integer=True, values=[[1, 1], [2, 0]])]),
    "ftrl_update": Case([In(), In(), In(), ADAM_STATE], {"lr": 0.1}, grad=False),
    "signsgd_update": Case([In(), In(SHAPE, -1, 1)], {"lr": 0.1}, grad=False),
    "signum_update": Case([In(), In(SHAPE, -1, 1), In()], {"lr": 0.1}, grad=False),
    # d, v, z start at 0 as an optimizer's states do
    "ftml_update": Case(
        [In(), In(), In(low=0, high=0), In(low=0, high=0), In(low=0, high=0)], {"lr": 0.1, "t": 1}, grad=False
    ),
    "lamb_update_phase1": Case([In(), In(), In(), ADAM_STATE], {"t": 2, "wd": 0.01}, grad=False),
    "lamb_update_phase2": Case(
        [In(), In(), In((1,), values=[2.0]), In((1,), values=[4.0])],
        {"lr": 0.1},
        reference=lambda w, g, r1, r2: w - 0.05 * g,
        grad=False,
    ),
    "mp_lamb_update_phase1": Case(
        [In(dtype="float16"), In(dtype="float16"), In(), ADAM_STATE, In()], {"t": 2, "wd": 0.01}, grad=False
    ),
    "mp_lamb_update_phase2": Case(
        [In(dtype="float16"), In(), In((1,), values=[2.0]), In((1,), values=[4.0]), In()],
        {"lr": 0.1},
        reference=lambda w, g, r1, r2, w32: (w32 - 0.05 * g).astype(np.float16),
        grad=False,
    ),
    "multi_lars": Case(
        [In((3,)), In((3,)), In((3,)), In((3,), 0, 0.1)],
        {"eta": 0.5, "eps": 1e-3},
        reference=lambda lr, w2, g2, wd: lr * 0.5 * np.sqrt(w2) / (np.sqrt(g2) + wd * np.sqrt(w2) + 1e-3),
        grad=False,
    ),
}
