"""What ``Custom`` keeps per configuration (op_type and keywords): a bounded number of them, so a
program that passes ever-new keyword values (a decaying factor) does not grow for ever."""

from __future__ import annotations

import numpy as np
from custom_scale_op import ScaleProp  # noqa: F401 - registers op_type "test_scale"

import lazynd as mx
from lazynd.ops import _custom_structure, custom


def test_ever_new_keyword_values_keep_a_bounded_number_of_configurations():
    limit = _custom_structure.MAX_CONFIGURATIONS
    x = mx.nd.ones((2,))
    for step in range(limit + 200):
        factor = 0.5 + step / 1000  # a new value every call
        y = mx.nd.Custom(x, op_type="test_scale", factor=factor)
        with mx.autograd.record():
            z = mx.nd.Custom(x, op_type="test_scale", factor=factor)
        assert len(_custom_structure._prop_cache) <= limit
        assert len(custom._specialized) <= limit
    np.testing.assert_allclose(y.asnumpy(), [factor] * 2, rtol=1e-6)
    np.testing.assert_allclose(z.asnumpy(), [factor] * 2, rtol=1e-6)


def test_a_configuration_made_again_after_the_tables_started_again_still_works():
    x = mx.nd.ones((3,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_scale", factor=3)
    _custom_structure._prop_cache.clear()  # as when the table is full
    custom._specialized.clear()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0] * 3)
    np.testing.assert_allclose(mx.nd.Custom(x, op_type="test_scale", factor=3).asnumpy(), [3.0] * 3)
