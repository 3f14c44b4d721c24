"""The sample calls of the operator sweep (tests/ops/test_operator_sweep.py).

An operator whose parameters all have defaults and whose inputs take one float shape gets
a case derived automatically (:func:`auto_case`); the others are listed in :data:`CASES`.
Each case names its inputs' shapes, dtypes and value domains, its parameters, and where a
plain one exists, its NumPy reference.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lazynd.ndarray.arithmetic import BINARY_OPS
from lazynd.ops import registry

SHAPE = (3, 4)
DOMAIN = (0.2, 0.8)  # inside the domain of every unary function below (log, arcsin, arctanh, ...)


@dataclass(frozen=True)
class In:
    """One input: its shape, dtype and domain; ``integer`` draws whole numbers (indices, labels)."""

    shape: tuple[int, ...] = SHAPE
    low: float = DOMAIN[0]
    high: float = DOMAIN[1]
    dtype: str = "float32"
    integer: bool = False
    values: Any = None  # fixed values instead of a draw

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """The input's values."""
        if self.values is not None:
            return np.asarray(self.values, dtype=self.dtype).reshape(self.shape)
        if self.integer:
            return rng.integers(int(self.low), int(self.high) + 1, size=self.shape).astype(self.dtype)
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclass
class Case:
    """A sample call of one operator."""

    inputs: list[In]
    params: dict[str, Any] = field(default_factory=dict)
    aux: list[In] = field(default_factory=list)
    reference: Callable[..., Any] | None = None
    grad: bool = True  # check the gradient rule numerically (float inputs only)
    random: bool = False  # draws random numbers: nd and the executor are compared under the same seed
    rtol: float | None = None
    atol: float | None = None
    xfail: str | None = None  # a known bug (strict xfail)
    gpu_needs: tuple[str, ...] = ()  # CuPy APIs the GPU path calls (skipped where CuPy lacks one)


def _f(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference giving float32 results (comparisons, argmax: MXNet returns them as floats)."""
    return lambda *xs: np.asarray(fn(*xs)).astype(np.float32)


# -- elementwise unary ------------------------------------------------------------------------------
UNARY_REFERENCES: dict[str, Callable[..., Any]] = {
    name: getattr(np, name)
    for name in (
        "abs sign ceil floor rint square sqrt exp log log10 log2 log1p expm1 sin cos tan arcsin arccos arctan "
        "sinh cosh tanh arcsinh arccosh arctanh degrees radians negative round"
    ).split()
}
UNARY_REFERENCES.update(
    {
        "fix": np.trunc,  # np.fix is deprecated in NumPy 2.x; for floats it is trunc
        "rsqrt": lambda x: 1 / np.sqrt(x),
        "identity": lambda x: x,
        "BlockGrad": lambda x: x,
        "relu": lambda x: np.maximum(x, 0),
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softrelu": lambda x: np.log1p(np.exp(x)),
        "gamma": np.vectorize(math.gamma),
        "gammaln": np.vectorize(math.lgamma),
    }
)
# inputs outside DOMAIN
UNARY_DOMAINS = {"arccosh": (1.2, 2.0)}

# -- elementwise binary -----------------------------------------------------------------------------
BINARY_REFERENCES: dict[str, Callable[..., Any]] = {
    "plus": np.add,
    "add": np.add,
    "minus": np.subtract,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "mod": np.mod,
    "power": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "hypot": np.hypot,
    "equal": _f(np.equal),
    "not_equal": _f(np.not_equal),
    "greater": _f(np.greater),
    "greater_equal": _f(np.greater_equal),
    "lesser": _f(np.less),
    "lesser_equal": _f(np.less_equal),
}
# lhs and rhs domains: ``lhs mod rhs`` stays away from its jumps
BINARY_DOMAINS = {"mod": ((1.1, 1.9), (2.2, 2.9))}
COMPARISONS = {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"}


def _binary_cases() -> dict[str, Case]:
    cases = {}
    for kind, ref in BINARY_REFERENCES.items():
        lhs_dom, rhs_dom = BINARY_DOMAINS.get(kind, (DOMAIN, DOMAIN))
        grad = kind not in COMPARISONS
        if registry.exists(f"_{kind}"):
            cases[f"_{kind}"] = Case([In(SHAPE, *lhs_dom), In(SHAPE, *rhs_dom)], reference=ref, grad=grad)
        if registry.exists(f"broadcast_{kind}"):
            cases[f"broadcast_{kind}"] = Case([In((3, 4), *lhs_dom), In((1, 4), *rhs_dom)], reference=ref, grad=grad)
    return cases


# -- with a scalar ----------------------------------------------------------------------------------
SCALAR = 0.5
SCALAR_REFERENCES: dict[str, tuple[Callable[..., Any], float]] = {
    "_plus_scalar": (lambda x: x + SCALAR, SCALAR),
    "_minus_scalar": (lambda x: x - SCALAR, SCALAR),
    "_rminus_scalar": (lambda x: SCALAR - x, SCALAR),
    "_mul_scalar": (lambda x: x * SCALAR, SCALAR),
    "_div_scalar": (lambda x: x / SCALAR, SCALAR),
    "_rdiv_scalar": (lambda x: SCALAR / x, SCALAR),
    "_mod_scalar": (lambda x: np.mod(x, 3.0), 3.0),
    "_rmod_scalar": (lambda x: np.mod(3.0, x + 1.0), 3.0),  # input shifted below
    "_power_scalar": (lambda x: x**2.0, 2.0),
    "_rpower_scalar": (lambda x: SCALAR**x, SCALAR),
    "_maximum_scalar": (lambda x: np.maximum(x, SCALAR), SCALAR),
    "_minimum_scalar": (lambda x: np.minimum(x, SCALAR), SCALAR),
    "_hypot_scalar": (lambda x: np.hypot(x, SCALAR), SCALAR),
    "_equal_scalar": (_f(lambda x: x == SCALAR), SCALAR),
    "_not_equal_scalar": (_f(lambda x: x != SCALAR), SCALAR),
    "_greater_scalar": (_f(lambda x: x > SCALAR), SCALAR),
    "_greater_equal_scalar": (_f(lambda x: x >= SCALAR), SCALAR),
    "_lesser_scalar": (_f(lambda x: x < SCALAR), SCALAR),
    "_lesser_equal_scalar": (_f(lambda x: x <= SCALAR), SCALAR),
}


def _scalar_cases() -> dict[str, Case]:
    cases = {}
    for name, (ref, scalar) in SCALAR_REFERENCES.items():
        spec = In(SHAPE, 1.2, 1.8) if name == "_rmod_scalar" else In()
        if name == "_rmod_scalar":
            ref = lambda x: np.mod(3.0, x)  # noqa: E731  3 mod x for x in (1.2, 1.8): 3 - x, smooth
        cases[name] = Case(
            [spec], {"scalar": scalar}, reference=ref, grad=name[1:].removesuffix("_scalar") not in COMPARISONS
        )
    return cases


# -- reductions -------------------------------------------------------------------------------------
REDUCTIONS = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
}


def _reduction_cases() -> dict[str, Case]:
    cases = {}
    for name, fn in REDUCTIONS.items():
        cases[name] = Case([In()], {"axis": 1}, reference=lambda x, fn=fn: fn(x, axis=1))
    cases["norm"] = Case([In()], reference=lambda x: np.sqrt(np.sum(x * x)).reshape(1))
    cases["argmax"] = Case([In()], {"axis": 1}, reference=_f(lambda x: np.argmax(x, axis=1)), grad=False)
    cases["argmin"] = Case([In()], {"axis": 0}, reference=_f(lambda x: np.argmin(x, axis=0)), grad=False)
    cases["argmax_channel"] = Case([In()], reference=_f(lambda x: np.argmax(x, axis=-1)), grad=False)
    return cases


# -- the explicit table -----------------------------------------------------------------------------
IDX = In((3,), 0, 3, integer=True)  # indices into a first axis of 4 (take, batch_take, pick)
LABEL = In((3,), 0, 3, integer=True)  # class labels for 4 classes
ADAM_STATE = In(SHAPE, 0.1, 0.5)

OTHER_CASES: dict[str, Case] = {
    "Activation": Case([In(SHAPE, -1, 1)], {"act_type": "tanh"}, reference=np.tanh),
    "Cast": Case([In()], {"dtype": "float64"}, reference=lambda x: x.astype(np.float64), grad=False),
    "Concat": Case([In(), In((3, 2))], {"dim": 1}, reference=lambda a, b: np.concatenate([a, b], axis=1)),
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
    "_dot_backward_lhs": Case([In((3, 5)), In((4, 5)), In((3, 4))], reference=lambda og, b, like: og @ b.T),
    "_dot_backward_rhs": Case([In((3, 5)), In((3, 4)), In((4, 5))], reference=lambda og, a, like: a.T @ og),
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


def _assign(a: np.ndarray, value: Any) -> np.ndarray:
    out = a.copy()
    out[0:2, 1:3] = value
    return out


def _unary_cases() -> dict[str, Case]:
    return {
        name: Case([In(SHAPE, *UNARY_DOMAINS.get(name, DOMAIN))], reference=ref)
        for name, ref in UNARY_REFERENCES.items()
        if registry.exists(name)
    }


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


CASES: dict[str, Case] = {
    **CONTRIB_CASES,
    **CONTRIB_MORE_CASES,
    **_unary_cases(),
    **_binary_cases(),
    **_scalar_cases(),
    **_reduction_cases(),
    **OTHER_CASES,
    **MXNET1_A_CASES,
    **MXNET_1X_CASES,
    **MXNET1_B_CASES,
}
# no gradient to compare numerically: rules that stop, clamp or ignore the head on purpose
for _name in ("BlockGrad", "sign", "round", "ceil", "floor", "rint", "fix"):
    CASES[_name].grad = False


def missing_cupy_api(case: Case) -> str | None:
    """The first of ``case.gpu_needs`` this CuPy lacks (the CUDA emulator's fake CuPy has no
    ``cupy.linalg``, and only uniform, normal and randint on ``RandomState``), or None."""
    try:
        import cupy
    except ImportError:
        return None
    for api in case.gpu_needs:
        obj: Any = cupy
        for part in api.split(".")[1:]:
            obj = getattr(obj, part, None)
            # the fake hands NumPy's own module on for a name it does not emulate
            if obj is None or getattr(obj, "__name__", "").startswith("numpy"):
                return api
    return None


def auto_case(name: str) -> Case | None:
    """A case for an operator whose parameters all have defaults and whose inputs are plain
    float arrays of one shape; None when it is not such an operator."""
    op = registry.get(name)
    if op.creates_output or op.variadic or op.aux:
        return None
    try:
        attrs = op.parse({})
    except Exception:
        return None
    return Case([In() for _ in op.input_names(attrs)])


# -- the arithmetic dunders -------------------------------------------------------------------------
_DUNDER_FUNCTIONS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "mod": operator.mod,
    "power": operator.pow,
    "equal": operator.eq,
    "not_equal": operator.ne,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "lesser": operator.lt,
    "lesser_equal": operator.le,
}


def _dunders() -> dict[str, Callable[..., Any]]:
    """Operator name -> a call of the dunder that runs it, on the case's inputs and parameters."""
    calls: dict[str, Callable[..., Any]] = {}
    for kind, (same, broadcast, scalar, reflected) in BINARY_OPS.items():
        fn = _DUNDER_FUNCTIONS[kind]
        calls.setdefault(same, lambda a, b, fn=fn, **_: fn(a, b))
        calls.setdefault(broadcast, lambda a, b, fn=fn, **_: fn(a, b))
        calls.setdefault(scalar, lambda a, fn=fn, scalar=None: fn(a, scalar))
        if reflected != scalar and kind not in COMPARISONS:
            calls.setdefault(reflected, lambda a, fn=fn, scalar=None: fn(scalar, a))
    return calls


DUNDERS = _dunders()
