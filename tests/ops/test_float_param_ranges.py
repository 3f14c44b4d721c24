"""Bounded float parameters, accepted and refused as MXNet 1.9.1 accepts and refuses them: one row
per parameter, the oracle's answer for each probe value recorded from MXNet 1.9.1 ('A' accepted,
'R' refused, '-' not asked).  Every bound is the one parser ``float_between`` (``FRACTION`` for
[0, 1]); a refusal is a LazyNDError naming the operator, the parameter, the value and the range.

One deliberate difference: MXNet's bound check compares, so a NaN slips through it ('A' at NaN for
every [0, 1] parameter); lazynd refuses NaN there, as a NaN rate or momentum is no number at all."""

from __future__ import annotations

import math

import pytest

import lazynd as mx
from lazynd.errors import LazyNDError

VALUES = [-1.0, -1e-7, 0.0, 1e-7, 0.5, 1.0 - 1e-7, 1.0, 1.5, 1e9, math.nan, math.inf, -math.inf]
NAN_AT = 9  # VALUES[9] is NaN


def _ones(*shape):
    return mx.nd.ones(shape)


def _var(name):
    return mx.sym.Variable(name)


def _optimizer(op, count, params):
    return lambda v: getattr(mx.nd, op)(*[_ones(2) for _ in range(count)], **params(v))


# (parameter, call with the value, MXNet 1.9.1's answers over VALUES, whether it is a [0, 1] bound)
ROWS = [
    ("Dropout.p", lambda v: mx.nd.Dropout(_ones(2, 3), p=v), "RRAAAAARRARR", True),
    (
        "RNN.p",
        lambda v: mx.sym.RNN(_var("d"), _var("w"), _var("s"), state_size=2, num_layers=2, mode="rnn_tanh", p=v),
        "RRAAAAARRARR",
        True,
    ),
    (
        "IdentityAttachKLSparseReg.sparseness_target",
        lambda v: mx.nd.IdentityAttachKLSparseReg(_ones(2, 3), mx.nd.zeros((3,)), sparseness_target=v),
        "RRAAAAARRARR",
        True,
    ),
    (
        "IdentityAttachKLSparseReg.momentum",
        lambda v: mx.nd.IdentityAttachKLSparseReg(_ones(2, 3), mx.nd.zeros((3,)), momentum=v),
        "RRAAAAARRARR",
        True,
    ),
    (
        "SoftmaxOutput.smooth_alpha",
        lambda v: mx.nd.SoftmaxOutput(_ones(2, 3), mx.nd.zeros((2,)), smooth_alpha=v),
        "RRAAAAARRARR",
        True,
    ),
    (
        "Softmax.smooth_alpha",
        lambda v: mx.nd.Softmax(_ones(2, 3), mx.nd.zeros((2,)), smooth_alpha=v),
        "RRAAAAARRARR",
        True,
    ),
    (
        "_contrib_DeformablePSROIPooling.trans_std",
        lambda v: mx.sym.contrib.DeformablePSROIPooling(
            _var("x"), _var("r"), _var("t"), spatial_scale=1.0, output_dim=1, group_size=2, pooled_size=2, trans_std=v
        ),
        "RRAAAAARRARR",
        True,
    ),
    (
        "ftml_update.beta1",
        _optimizer("ftml_update", 5, lambda v: {"lr": 0.1, "t": 1, "beta1": v}),
        "RRAAAAARRARR",
        True,
    ),
    (
        "ftml_update.beta2",
        _optimizer("ftml_update", 5, lambda v: {"lr": 0.1, "t": 1, "beta2": v}),
        "RRAAAAARRARR",
        True,
    ),
    # unbounded in MXNet 1.9.1, whatever the value (lazynd refused some before)
    ("ftml_update.lr", _optimizer("ftml_update", 5, lambda v: {"lr": v, "t": 1}), "AAAAAAAAAAAA", False),
    ("ftrl_update.lr", _optimizer("ftrl_update", 4, lambda v: {"lr": v}), "AAAAAAAAAAAA", False),
    ("adam_update.lr", _optimizer("adam_update", 4, lambda v: {"lr": v}), "AAAAAAAAAAAA", False),
    ("adam_update.beta1", _optimizer("adam_update", 4, lambda v: {"lr": 0.1, "beta1": v}), "AAAAAAAAAAAA", False),
    ("adam_update.epsilon", _optimizer("adam_update", 4, lambda v: {"lr": 0.1, "epsilon": v}), "AAAAAAAAAAAA", False),
    (
        "sgd_mom_update.momentum",
        _optimizer("sgd_mom_update", 3, lambda v: {"lr": 0.1, "momentum": v}),
        "AAAAAAAAAAAA",
        False,
    ),
    (
        "signum_update.momentum",
        _optimizer("signum_update", 3, lambda v: {"lr": 0.1, "momentum": v}),
        "AAAAAAAAAAAA",
        False,
    ),
    (
        "rmspropalex_update.gamma1",
        _optimizer("rmspropalex_update", 5, lambda v: {"lr": 0.1, "gamma1": v}),
        "AAAAAAAAAAAA",
        False,
    ),
    (
        "lamb_update_phase1.beta1",
        _optimizer("lamb_update_phase1", 4, lambda v: {"t": 1, "wd": 0.1, "beta1": v}),
        "AAAAAAAAAAAA",
        False,
    ),
    # any finite temperature, 0 and negatives too
    ("softmax.temperature", lambda v: mx.nd.softmax(_ones(2, 3), temperature=v), "AAAAAAAAARRR", False),
    ("log_softmax.temperature", lambda v: mx.nd.log_softmax(_ones(2, 3), temperature=v), "AAAAAAAAARRR", False),
    # MXNet checks scale > 0 when it draws (an infinite scale not asked)
    ("normal.scale", lambda v: mx.nd.random.normal(0, v, shape=(2,)), "RRRAAAAAAR-R", False),
]


def _lazynd_answer(oracle: str, bounded: bool) -> str:
    return oracle[:NAN_AT] + "R" + oracle[NAN_AT + 1 :] if bounded else oracle


@pytest.mark.parametrize(("name", "call", "oracle", "bounded"), ROWS, ids=[row[0] for row in ROWS])
def test_float_parameter_bounds_follow_mxnet(name, call, oracle, bounded):
    op, param = name.rsplit(".", 1)
    op = op.split("_contrib_")[-1]
    got = []
    for value, expected in zip(VALUES, _lazynd_answer(oracle, bounded), strict=True):
        if expected == "-":
            got.append("-")
            continue
        try:
            result = call(value)
            if isinstance(result, mx.nd.NDArray):
                result.wait_to_read()
            mx.nd.waitall()
            got.append("A")
        except LazyNDError as err:
            message = str(err)
            assert op in message and param in message, message  # names the op and the parameter
            if bounded:
                assert "expected a number in [0, 1]" in message, message
            got.append("R")
    assert "".join(got) == _lazynd_answer(oracle, bounded)
