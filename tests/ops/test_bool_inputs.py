"""Operators whose MXNet 1.9.1 kernels have no bool case ("Unknown type enum 7") refuse bool
inputs when inferring types (``OpDef(takes_bool=False)``): the call raises at once, naming the
operator and the input, instead of failing at the wait inside NumPy (``np.sign`` and ``-`` have no
bool loop)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

BOOL = np.ones((3, 4), dtype=bool)
LABEL = np.array([0.0, 1.0, 3.0], dtype=np.float32)

# (operator, inputs, params, the input named in the message)
REFUSED = [
    ("_contrib_sign_ste", [BOOL], {}, "data"),
    ("_contrib_round_ste", [BOOL], {}, "data"),
    ("smooth_l1", [BOOL], {"scalar": 1.0}, "data"),
    ("_smooth_l1_slope", [BOOL], {}, "data"),
    ("_sample_uniform", [BOOL[0], BOOL[0]], {"shape": (3,)}, "low"),
    ("_sample_normal", [np.zeros(4, np.float32), BOOL[0]], {"shape": (3,)}, "sigma"),
    ("_sample_poisson", [BOOL[0]], {"shape": (3,)}, "lam"),
    ("softmax_cross_entropy", [BOOL, LABEL], {}, "data"),
    ("softmax_cross_entropy", [np.ones((3, 4), np.float32), LABEL.astype(bool)], {}, "label"),
    ("_image_normalize", [np.ones((3, 2, 2), dtype=bool)], {"mean": (0.5,), "std": (2.0,)}, "data"),
]


@pytest.mark.parametrize(("name", "arrays", "params", "arg"), REFUSED, ids=[f"{r[0]}-{r[3]}" for r in REFUSED])
def test_bool_inputs_are_refused_at_the_call(name, arrays, params, arg):
    inputs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    with pytest.raises(mx.LazyNDError, match=f"{name}: input '{arg}' is a bool array") as info:
        (getattr(mx.nd, name, None) or getattr(mx.nd._internal, name))(*inputs, **params)  # no wait
    assert "cast it first" in str(info.value)
