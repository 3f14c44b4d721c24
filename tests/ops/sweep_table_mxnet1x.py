"""The operator sweep's explicit cases for the operators MXNet 1.x added (contrib included)."""

from __future__ import annotations

import math

import numpy as np
from sweep_inputs import SHAPE, Case, In, _f

# -- gather/scatter, linear algebra, samplers (MXNet 1.x) -----------------------------------------
ND_INDICES = In((2, 5), integer=True, values=[[0, 2, -1, 1, 0], [3, 1, 0, -2, 1]])  # 5 distinct (row, col)


def _gather(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return data[tuple(indices.astype(int))]


def _scatter(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    out = np.zeros((3, 4), data.dtype)
    out[tuple(indices.astype(int))] = data
    return out


def _scatter_set(lhs: np.ndarray, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    out = lhs.copy()
    out[tuple(indices.astype(int))] = data
    return out


ALEXNET_EIGVAL = np.array([55.46, 4.794, 1.148])  # image lighting's PCA of ImageNet's RGB covariance
ALEXNET_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
M3 = In((3, 3), values=[[2.0, 0.3, 0.1], [0.4, 1.5, 0.2], [0.1, 0.5, 1.8]])  # well conditioned
SPD = In((2, 2), values=[[4.0, 2.0], [2.0, 3.0]])
LINALG = ("cupy.linalg",)  # the factorisations and solves run cupy.linalg on the GPU


def _t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _lq(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a.T)
    return q.T, r.T


MXNET_1X_CASES: dict[str, Case] = {
    "gather_nd": Case([In((3, 4)), ND_INDICES], reference=_gather),
    "scatter_nd": Case([In((5,)), ND_INDICES], {"shape": (3, 4)}, reference=_scatter),
    "_scatter_set_nd": Case([In((3, 4)), In((5,)), ND_INDICES], {"shape": (3, 4)}, reference=_scatter_set),
    "_linalg_gemm": Case(
        [In((2, 3, 4)), In((2, 4, 3)), In((2, 3, 3))],
        {"alpha": 0.5, "beta": 2.0},
        reference=lambda a, b, c: 0.5 * a @ b + 2.0 * c,
    ),
    "_linalg_gemm2": Case([In((2, 3, 4)), In((2, 3, 4))], {"transpose_b": True}, reference=lambda a, b: a @ _t(b)),
    # the numerical gradient sees only the lower triangle that LAPACK reads; MXNet's rule (ours)
    # is the symmetric one: tests/ops/test_linalg_factor.py compares it with MXNet's values
    "_linalg_potrf": Case([SPD], reference=np.linalg.cholesky, grad=False, gpu_needs=LINALG),
    "_linalg_potri": Case(
        [In((2, 2), values=[[2.0, 0.0], [1.0, 1.5]])],
        reference=lambda low: np.linalg.inv(low @ low.T),
        gpu_needs=LINALG,
    ),
    "_linalg_trsm": Case(
        [M3, In((3, 4))],
        {"alpha": 2.0},
        reference=lambda a, b: np.linalg.solve(np.tril(a), 2 * b),
        gpu_needs=LINALG,
    ),
    "_linalg_trmm": Case([M3, In((3, 4))], {"lower": False}, reference=lambda a, b: np.triu(a) @ b),
    "_linalg_sumlogdiag": Case([In((3, 3), 0.5, 1.5)], reference=lambda a: np.log(np.diag(a)).sum().reshape(1)),
    "_linalg_syrk": Case([In((3, 4))], {"alpha": 0.5}, reference=lambda a: 0.5 * a @ a.T),
    "_linalg_gelqf": Case([In((2, 3), -1, 1)], reference=_lq, gpu_needs=LINALG),
    "_linalg_inverse": Case([M3], reference=np.linalg.inv, gpu_needs=LINALG),
    "_linalg_det": Case([M3], reference=lambda a: np.linalg.det(a).reshape(1), gpu_needs=LINALG),
    "_linalg_slogdet": Case(
        [M3], reference=lambda a: tuple(np.reshape(v, 1) for v in np.linalg.slogdet(a)), gpu_needs=LINALG
    ),
    # as potrf: eigh reads one triangle, MXNet's rule (ours) is symmetric (test_linalg_factor.py)
    "_linalg_syevd": Case([SPD], grad=False, gpu_needs=LINALG),
    "_linalg_extractdiag": Case([In((2, 3, 3))], {"offset": 1}, reference=lambda a: np.diagonal(a, 1, -2, -1)),
    "_linalg_makediag": Case([In((2, 3))], {"offset": -1}, reference=lambda v: np.stack([np.diag(r, -1) for r in v])),
    "_linalg_extracttrian": Case([M3], {"lower": False}, reference=lambda a: a.T[np.tril_indices(3)]),
    "_linalg_maketrian": Case([In((6,))], {"offset": -1}, reference=lambda v: _lower_from(v, 4, -1)),
}


def _lower_from(v: np.ndarray, n: int, offset: int) -> np.ndarray:
    out = np.zeros((n, n), v.dtype)
    out[np.tril_indices(n, offset)] = v
    return out


def _sampler_cases() -> dict[str, Case]:
    """The samplers: nd and the executor agree under one seed (their statistics: test_random_ops.py)."""
    from lazynd.ops.random_ops import DISTRIBUTIONS
    from lazynd.ops.random_sample_ops import PER_ROW

    def needs(methods: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(f"cupy.random.RandomState.{m}" for m in methods)

    cases = {}
    for name, (_, _, methods) in DISTRIBUTIONS.items():
        cases[f"_random_{name}"] = Case([], {"shape": (2, 3)}, grad=False, random=True, gpu_needs=needs(methods))
    for name, (_, inputs, methods) in PER_ROW.items():
        # parameters valid for every distribution: p in (0, 1], scales positive
        cases[f"_sample_{name}"] = Case(
            [In((2,), 0.3, 0.9) for _ in inputs], {"shape": (3,)}, grad=False, random=True, gpu_needs=needs(methods)
        )
    cases["_sample_multinomial"] = Case(
        [In((2, 3), values=[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])],
        {"shape": (4,), "get_prob": True},
        grad=False,  # the sample is not differentiable: tests/ops/test_random_ops.py checks MXNet's rule
        random=True,
    )
    for name, methods in {"uniform": ("uniform",), "normal": ("normal",)}.items() | {
        name: methods for name, (_, _, methods) in DISTRIBUTIONS.items()
    }.items():
        cases[f"_random_{name}_like"] = Case([In()], grad=False, random=True, gpu_needs=needs(methods))
    cases["_shuffle"] = Case([In((4, 3))], grad=False, random=True, gpu_needs=needs(("permutation",)))
    return cases


MXNET_1X_CASES.update(_sampler_cases())
MXNET_1X_CASES["amp_cast"] = Case([In()], {"dtype": "float64"}, reference=lambda x: x.astype(np.float64))
MXNET_1X_CASES["amp_multicast"] = Case([In(), In((2,))], {"num_outputs": 2}, reference=lambda a, b: (a, b))


# -- MXNet 1.x elementwise and utility operators (batch A) -----------------------------------------
MXNET1_A_CASES: dict[str, Case] = {
    "reciprocal": Case([In()], reference=np.reciprocal),
    "cbrt": Case([In()], reference=np.cbrt),
    "rcbrt": Case([In()], reference=lambda x: 1 / np.cbrt(x)),
    "erf": Case([In(SHAPE, -2, 2)], reference=np.vectorize(math.erf)),
    "erfinv": Case([In(SHAPE, -0.9, 0.9)]),  # values: tests/ops/test_unary.py
    "logical_not": Case([In(SHAPE, 0, 1, integer=True)], reference=_f(lambda x: x == 0), grad=False),
    "softmin": Case(
        [In()], {"axis": 0, "temperature": 0.5}, reference=lambda x: np.exp(-2 * x) / np.exp(-2 * x).sum(0)
    ),
    "shape_array": Case([In((2, 3, 4))], reference=lambda x: np.array(x.shape, dtype=np.int64), grad=False),
    "size_array": Case([In((2, 3, 4))], reference=lambda x: np.array([x.size], dtype=np.int64), grad=False),
    "diag": Case(
        [In((2, 3, 4))], {"k": 1, "axis1": 2, "axis2": 1}, reference=lambda x: np.diagonal(x, 1, axis1=2, axis2=1)
    ),
    "_eye": Case([], {"N": 3, "M": 4, "k": -1}, reference=lambda: np.eye(3, 4, -1, dtype=np.float32), grad=False),
    "_linspace": Case(
        [], {"start": -1, "stop": 2, "num": 7}, reference=lambda: np.linspace(-1, 2, 7, dtype=np.float32), grad=False
    ),
    "slice_like": Case([In((3, 4, 2)), In((2, 5, 1))], {"axes": (0, -1)}, reference=lambda x, like: x[:2, :, :1]),
    "cumsum": Case([In((2, 3, 4))], {"axis": -2}, reference=lambda x: np.cumsum(x, axis=-2)),
}


# -- MXNet 1.x operators added for 1.x programs (tests/ops/test_<op>.py compare them with MXNet) ---
MXNET1_B_CASES: dict[str, Case] = {
    # values away from the corners at -2.5 and 2.5, where the slope jumps
    "hard_sigmoid": Case(
        [In(SHAPE, values=np.linspace(-4, 4, 12) + 0.1)],
        {"alpha": 0.2, "beta": 0.5},
        reference=lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    ),
    "depth_to_space": Case(
        [In((1, 8, 1, 2))],
        {"block_size": 2},
        reference=lambda x: x.reshape(1, 2, 2, 2, 1, 2).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 2, 4),
    ),
    "space_to_depth": Case(
        [In((1, 2, 2, 4))],
        {"block_size": 2},
        reference=lambda x: x.reshape(1, 2, 1, 2, 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 1, 2),
    ),
    "moments": Case([In((2, 3, 4))], {"axes": (0, 2)}, reference=lambda x: (x.mean((0, 2)), x.var((0, 2)))),
    "GroupNorm": Case([In((2, 4, 3)), In((2,)), In((2,))], {"num_groups": 2, "eps": 0.01}),
    "khatri_rao": Case([In((2, 3)), In((4, 3))], reference=lambda a, b: (a[:, None, :] * b[None, :, :]).reshape(8, 3)),
    # the likelihood's gradient is checked against its definition in test_contrib_hawkesll.py; the
    # sweep's check would also differentiate out_state and the data inputs, which give no gradient
    "_contrib_hawkesll": Case(
        [
            In((2, 3), 0.5, 2),
            In((3,), 0.1, 0.5),
            In((3,), 0.5, 2),
            In((2, 3), 0, 1),
            In((2, 4), 0.5, 2),
            In((2, 4), 0, 2, dtype="int32", integer=True),
            In((2,), values=[3, 4]),
            In((2,), values=[20, 20]),
        ],
        grad=False,
    ),
}
for _kind, _fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
    _bits = In(SHAPE, 0, 1, integer=True)
    MXNET1_A_CASES[f"_logical_{_kind}"] = Case([_bits, _bits], reference=_f(_fn), grad=False)
    MXNET1_A_CASES[f"broadcast_logical_{_kind}"] = Case(
        [_bits, In((1, 4), 0, 1, integer=True)], reference=_f(_fn), grad=False
    )
    MXNET1_A_CASES[f"_logical_{_kind}_scalar"] = Case(
        [_bits], {"scalar": 1.0}, reference=_f(lambda x, _fn=_fn: _fn(x, 1.0)), grad=False
    )


_BOXES = np.array([[0, 0, 2, 2], [1, 1, 3, 4], [0.5, 0, 1.5, 1]])
# rows: id, score, box; distinct scores far apart (a small step keeps the order)
_SCORED_BOXES = np.array([[0, 0.9, 0, 0, 2, 2], [0, 0.5, 1, 1, 3, 4], [0, 0.7, 0.5, 0, 1.5, 1]])

# -- MXNet 1.x contrib operators (tests/ops/test_contrib_*.py compare them with MXNet 1.9.1) -----
CONTRIB_CASES: dict[str, Case] = {
    "_contrib_isfinite": Case([In(values=[[1, np.inf, np.nan, -np.inf]] * 3)], reference=_f(np.isfinite), grad=False),
    "_contrib_isnan": Case([In(values=[[1, np.inf, np.nan, -np.inf]] * 3)], reference=_f(np.isnan), grad=False),
    "_contrib_isinf": Case([In(values=[[1, np.inf, np.nan, -np.inf]] * 3)], reference=_f(np.isinf), grad=False),
    "_contrib_div_sqrt_dim": Case([In()], reference=lambda x: x / np.float32(2.0)),
    "_image_normalize": Case([In((3, 2, 2))], {"mean": (0.5,), "std": (2.0,)}, reference=lambda x: (x - 0.5) / 2),
    # always float32 out, so no float64 central differences: tests/ops/test_image_layout.py checks its gradient
    "_image_to_tensor": Case([In((2, 3, 2))], reference=lambda x: np.moveaxis(x, -1, 0) / np.float32(255), grad=False),
    "_image_flip_left_right": Case([In((2, 3, 2))], reference=lambda x: np.flip(x, axis=1)),
    "_image_flip_top_bottom": Case([In((2, 3, 2))], reference=lambda x: np.flip(x, axis=0)),
    "_image_crop": Case([In((3, 4, 2))], {"x": 1, "y": 1, "width": 2, "height": 2}, reference=lambda x: x[1:3, 1:3, :]),
    "_image_random_flip_left_right": Case([In((2, 3, 2))], grad=False, random=True),
    "_image_random_flip_top_bottom": Case([In((2, 3, 2))], grad=False, random=True),
    "_image_adjust_lighting": Case(
        [In((2, 3, 3))],
        {"alpha": (0.1, -0.2, 0.3)},
        reference=lambda x: x + ALEXNET_EIGVEC @ (np.array([0.1, -0.2, 0.3]) * ALEXNET_EIGVAL),
        rtol=1e-5,
    ),
    "_image_random_lighting": Case([In((2, 3, 3))], grad=False, random=True),
    "_image_random_brightness": Case([In((2, 3, 3))], {"min_factor": 0.5, "max_factor": 1.5}, grad=False, random=True),
    "_image_random_contrast": Case([In((2, 3, 3))], {"min_factor": 0.5, "max_factor": 1.5}, grad=False, random=True),
    "_image_random_hue": Case([In((2, 3, 3))], {"min_factor": 0.0, "max_factor": 0.5}, grad=False, random=True),
    "_image_random_color_jitter": Case(
        [In((2, 3, 3))],
        {"brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "hue": 0.1},
        grad=False,
        random=True,
    ),
    "_image_random_saturation": Case([In((2, 3, 1))], {"min_factor": 0.5, "max_factor": 1.5}, grad=False, random=True),
    # no gradient rule (MXNet 1.9.1's fails); nearest doubling repeats each pixel 2 x 2
    "_image_resize": Case(
        [In((2, 3, 2))],
        {"size": (6, 4), "interp": 0},
        reference=lambda x: x.repeat(2, axis=0).repeat(2, axis=1),
        grad=False,
    ),
    "_contrib_quadratic": Case([In()], {"a": 1.5, "b": -2.0, "c": 0.5}, reference=lambda x: 1.5 * x * x - 2 * x + 0.5),
    "_contrib_arange_like": Case(
        [In()],
        {"start": 1.0, "step": 0.5, "repeat": 2, "axis": 1},
        reference=lambda x: np.float32([1, 1, 1.5, 1.5]),
        grad=False,
    ),
    # rows 3 and 0 replaced; the index is not differentiable
    "_contrib_index_copy": Case(
        [In((4, 3)), In((2,), values=[3, 0]), In((2, 3))],
        reference=lambda old, index, new: np.stack([new[1], old[1], old[2], new[0]]),
    ),
    # MXNet gives the box operators zero gradients (box_nms routes its rows back: checked numerically)
    "_contrib_box_iou": Case([In((3, 4), values=_BOXES), In((2, 4), values=_BOXES[1:])], grad=False),
    "_contrib_box_nms": Case([In((3, 6), values=_SCORED_BOXES)], {"overlap_thresh": 0.3}),
    "_contrib_bipartite_matching": Case(
        [In((3, 4), values=np.linspace(0.05, 0.95, 12)[::-1])], {"threshold": 0.1}, grad=False
    ),
    "_contrib_box_encode": Case(
        [
            In((1, 3), values=[1, 0, 1]),
            In((1, 3), values=[1, 0, 0]),
            In((1, 3, 4), values=_BOXES),
            In((1, 2, 4), values=_BOXES[1:]),
            In((4,), values=[0, 0, 0, 0]),
            In((4,), values=[0.1, 0.1, 0.2, 0.2]),
        ],
        grad=False,
    ),
    "_contrib_box_decode": Case([In((1, 3, 4), -0.5, 0.5), In((1, 3, 4), values=_BOXES)], grad=False),
    # SSD's three: no gradients (MXNet gives them none)
    "_contrib_MultiBoxPrior": Case([In((1, 2, 2, 3))], {"sizes": (0.5, 0.2), "ratios": (1, 2)}, grad=False),
    "_contrib_MultiBoxTarget": Case(
        [
            In((1, 3, 4), values=_BOXES / 4),
            In((1, 2, 5), values=[[1, 0, 0, 0.5, 0.5], [-1, -1, -1, -1, -1]]),
            In((1, 3, 3), -1, 1),
        ],
        grad=False,
    ),
    # bilinear sampling and pooling: linear in the data, so the numerical gradient is exact
    "_contrib_ROIAlign": Case(
        [In((2, 2, 4, 5)), In((2, 5), values=[[0, 0.3, 0.2, 2.6, 3.1], [1, 1.1, 0.4, 3.3, 2.2]])],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
    ),
    # RPN proposals: zero gradients, as in MXNet (tests/ops/test_contrib_proposal.py compares the boxes)
    "_contrib_Proposal": Case(
        [In((1, 2, 2, 3), 0, 1), In((1, 4, 2, 3), -0.3, 0.3), In((1, 3), values=[30, 40, 1])],
        {"scales": (2.0,), "ratios": (1.0,), "rpn_post_nms_top_n": 4, "rpn_min_size": 1},
        grad=False,
    ),
    "_contrib_MultiProposal": Case(
        [In((2, 2, 2, 3), 0, 1), In((2, 4, 2, 3), -0.3, 0.3), In((2, 3), values=[[30, 40, 1], [20, 48, 1]])],
        {"scales": (2.0,), "ratios": (1.0,), "rpn_post_nms_top_n": 4, "rpn_min_size": 1},
        grad=False,
    ),
    # R-FCN's pooling: averages of cells or bilinear samples, so linear in the data
    "_contrib_PSROIPooling": Case(
        [In((1, 8, 4, 5)), In((2, 5), values=[[0, 0.6, 0.2, 3.4, 2.7], [0, 1.5, 0.3, 4.4, 3.5]])],
        {"spatial_scale": 0.8, "output_dim": 2, "pooled_size": 2},
    ),
    "_contrib_DeformablePSROIPooling": Case(
        [
            In((1, 8, 4, 5)),
            In((2, 5), values=[[0, 0.6, 0.2, 3.4, 2.7], [0, 1.5, 0.3, 4.4, 3.5]]),
            In((2, 2, 2, 2), values=[0.13, -0.21, 0.07, 0.33] * 4),
        ],
        {
            "spatial_scale": 0.8,
            "output_dim": 2,
            "pooled_size": 2,
            "group_size": 2,
            "sample_per_part": 2,
            "trans_std": 0.1,
        },
    ),
    # deformable convolutions: small offsets keep the samples off the pixel grid and inside the map
    "_contrib_DeformableConvolution": Case(
        [In((1, 2, 4, 4)), In((1, 8, 3, 3), 0.1, 0.4), In((2, 2, 2, 2)), In((2,))],
        {"kernel": (2, 2), "num_filter": 2},
    ),
    "_contrib_ModulatedDeformableConvolution": Case(
        [In((1, 2, 4, 4)), In((1, 8, 3, 3), 0.1, 0.4), In((1, 4, 3, 3), 0, 1), In((2, 1, 2, 2)), In((2,))],
        {"kernel": (2, 2), "num_filter": 2, "num_group": 2},
    ),
    # MXNet gives RROIAlign no gradient (tests/ops/test_contrib_rroi_align.py)
    "_contrib_RROIAlign": Case(
        [In((1, 2, 4, 5)), In((2, 6), values=[[0, 2.1, 1.7, 3.0, 2.0, 30], [0, 2.5, 2.2, 2.4, 1.5, -60]])],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
        grad=False,
    ),
    "_contrib_BilinearResize2D": Case([In((1, 2, 3, 4))], {"height": 5, "width": 2}),
    "_contrib_AdaptiveAvgPooling2D": Case([In((2, 1, 5, 3))], {"output_size": (2, 2)}),
    "_contrib_MultiBoxDetection": Case(
        [In((1, 3, 3), 0, 1), In((1, 12), -0.2, 0.2), In((1, 3, 4), values=_BOXES / 4)], grad=False
    ),
}
# the output's length depends on the values of 'index': imperative only, refused in a symbol
NOT_SWEPT_CONTRIB = {
    "_contrib_boolean_mask": "its output length depends on values, so no executor runs it: tests/ops/test_contrib_indexing.py"
}


# -- more MXNet 1.x contrib operators (tests/ops/test_contrib_misc.py) --------------------------
CONTRIB_MORE_CASES: dict[str, Case] = {
    "_contrib_allclose": Case([In(), In()], grad=False),
    "_contrib_index_array": Case(
        [In((2, 3))], {"axes": (1,)}, reference=lambda x: np.int64([[[0], [1], [2]]] * 2), grad=False
    ),
    "_contrib_gradientmultiplier": Case([In()], {"scalar": 1.0}, reference=lambda x: x),
    # straight-through: the gradient is one where the function's derivative is zero (not checked numerically)
    "_contrib_round_ste": Case(
        [In(low=-3, high=3)], reference=_f(lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)), grad=False
    ),
    "_contrib_sign_ste": Case([In(low=-1, high=1)], reference=_f(np.sign), grad=False),
    # tests/ops/test_norm_variants.py (no gradient check here, as BatchNorm: see its case)
    "_contrib_SyncBatchNorm": Case(
        [In((2, 3, 2)), In((3,)), In((3,))], {"key": "bn"}, aux=[In((3,), 0.1, 0.3), In((3,), 0.5, 1.0)], grad=False
    ),
    "_contrib_BatchNormWithReLU": Case(
        [In((2, 3, 2)), In((3,)), In((3,))], aux=[In((3,), 0.1, 0.3), In((3,), 0.5, 1.0)], grad=False
    ),
    "BatchNorm_v1": Case(
        [In((2, 3, 2, 2)), In((3,)), In((3,))], aux=[In((3,), 0.1, 0.3), In((3,), 0.5, 1.0)], grad=False
    ),
    # tests/ops/test_legacy_v1.py: Convolution's and Pooling's computation under MXNet 0.9's names
    "Convolution_v1": Case([In((1, 2, 4, 4)), In((3, 2, 2, 2)), In((3,))], {"kernel": (2, 2), "num_filter": 3}),
    "Pooling_v1": Case(
        [In((1, 2, 5, 5))], {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg", "pooling_convention": "full"}
    ),
    # tests/ops/test_contrib_fft.py; the emulator's fake CuPy has no cupy.fft
    "_contrib_fft": Case([In((2, 4))], gpu_needs=("cupy.fft",)),
    "_contrib_ifft": Case(
        [In((2, 6))], reference=lambda x: 3 * np.fft.ifft(x[:, 0::2] + 1j * x[:, 1::2]).real, gpu_needs=("cupy.fft",)
    ),
    # tests/ops/test_contrib_attention.py: heads 2, head_dim 2, sequences 3 (queries) and 2 (keys)
    "_contrib_interleaved_matmul_selfatt_qk": Case([In((3, 1, 12))], {"heads": 2}),
    "_contrib_interleaved_matmul_selfatt_valatt": Case([In((3, 1, 12)), In((2, 3, 3))], {"heads": 2}),
    "_contrib_interleaved_matmul_encdec_qk": Case([In((3, 1, 4)), In((2, 1, 8))], {"heads": 2}),
    "_contrib_interleaved_matmul_encdec_valatt": Case([In((2, 1, 8)), In((2, 3, 2))], {"heads": 2}),
    "_contrib_count_sketch": Case(
        [In((2, 3)), In((1, 3), values=[0, 2, 0]), In((1, 3), values=[1, -1, -1])],
        {"out_dim": 3},
        reference=lambda x, h, s: np.stack([x[:, 0] - x[:, 2], 0 * x[:, 0], -x[:, 1]], axis=1),
    ),
}
