"""The sample calls of the operator sweep (tests/ops/test_operator_sweep.py).

An operator whose parameters all have defaults and whose inputs take one float shape gets
a case derived automatically (:func:`auto_case`); the others are listed in :data:`CASES`: the
families generated here (elementwise, with a scalar, reductions) and the explicit tables of
``sweep_table_core.py`` (MXNet 0.9's operators) and ``sweep_table_mxnet1x.py`` (MXNet 1.x's).
Each case (``sweep_inputs.py``) names its inputs' shapes, dtypes and value domains, its parameters, and where a
plain one exists, its NumPy reference.
"""

from __future__ import annotations

import math
import operator
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from reduce_inputs import NUMPY as REDUCTIONS  # each reduction's NumPy function, as the reduction tests take it
from sweep_inputs import DOMAIN, SHAPE, Case, In, _f
from sweep_table_core import OTHER_CASES
from sweep_table_mxnet1x import (
    CONTRIB_CASES,
    CONTRIB_MORE_CASES,
    MXNET1_A_CASES,
    MXNET1_B_CASES,
    MXNET_1X_CASES,
    NOT_SWEPT_CONTRIB,
)

from lazynd.ndarray.arithmetic import BINARY_OPS
from lazynd.ops import registry

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


def _reduction_cases() -> dict[str, Case]:
    cases = {}
    for name, fn in REDUCTIONS.items():
        cases[name] = Case([In()], {"axis": 1}, reference=lambda x, fn=fn: fn(x, axis=1))
    cases["norm"] = Case([In()], reference=lambda x: np.sqrt(np.sum(x * x)).reshape(1))
    cases["argmax"] = Case([In()], {"axis": 1}, reference=_f(lambda x: np.argmax(x, axis=1)), grad=False)
    cases["argmin"] = Case([In()], {"axis": 0}, reference=_f(lambda x: np.argmin(x, axis=0)), grad=False)
    cases["argmax_channel"] = Case([In()], reference=_f(lambda x: np.argmax(x, axis=-1)), grad=False)
    return cases


def _unary_cases() -> dict[str, Case]:
    return {
        name: Case([In(SHAPE, *UNARY_DOMAINS.get(name, DOMAIN))], reference=ref)
        for name, ref in UNARY_REFERENCES.items()
        if registry.exists(name)
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


# -- which operators are swept, on which values -----------------------------------------------------
# operators without a case yet, and why
NOT_SWEPT: dict[str, str] = {
    "Custom": "runs a user-registered Python operator: tests/operator/test_custom.py covers it",
    "RNN": "fused RNN with a packed parameter vector: tests/ops/test_rnn.py covers it",
    "reset_arrays": "no outputs (zeroes its inputs in place), refused as a symbol: tests/ops/test_amp_checks.py",
    **NOT_SWEPT_CONTRIB,
}


def excluded(name: str) -> bool:
    """Gradient internals (``_backward_*``) are reached through the gradients of the others;
    operators that other test modules register for themselves (``_test_*``, ``_sym_test_*``)
    are not lazynd's, and whether they exist depends on which tests ran first."""
    return name.startswith(("_backward", "_test_", "_sym_test_"))


def case_for(name: str) -> Case | None:
    """The operator's case: the tables' or, failing that, the automatic one."""
    return CASES.get(name) or auto_case(name)


def sample_values(name: str, case: Case) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The case's inputs and auxiliary states, drawn from a generator seeded by the operator's name
    (every test of one operator sees the same values)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [spec.make(rng) for spec in case.inputs], [spec.make(rng) for spec in case.aux]


def swept_operators() -> list[str]:
    """Every registered operator that has a case, in the registry's order."""
    return [n for n in registry.list_ops() if not excluded(n) and n not in NOT_SWEPT and case_for(n) is not None]


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
