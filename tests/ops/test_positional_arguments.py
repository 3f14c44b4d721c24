"""How operator calls read their positional arguments: as MXNet 1.9.1's generated functions do.

MXNet generates ``f(input0=None, ..., param0=_Null, ..., out=None, name=None, **kwargs)`` per operator
(``f(*data, **kwargs)`` for one of any number of inputs): every input slot comes before the first
parameter, the parameters follow in MXNet's declaration order, and a parameter given both by position
and by keyword is Python's "got multiple values".  The expected values below were computed with
mxnet==1.9.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, OperatorError
from lazynd.ops import registry
from lazynd.ops.signature import positional_param_names

# MXNet 1.9.1's positional parameter order (inspect.signature of mx.nd.<op>), where lazynd's differed
MXNET_PARAM_ORDER = {
    "sgd_update": ["lr", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
    "sgd_mom_update": ["lr", "momentum", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
    "mp_sgd_mom_update": ["lr", "momentum", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
    "nag_mom_update": ["lr", "momentum", "wd", "rescale_grad", "clip_gradient"],
    "mp_nag_mom_update": ["lr", "momentum", "wd", "rescale_grad", "clip_gradient"],
    "adam_update": ["lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
    "rmsprop_update": ["lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights"],
    "rmspropalex_update": [
        *("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights"),
    ],
    "ftrl_update": ["lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"],
    "signum_update": ["lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh"],
    "_adamw_update": ["lr", "beta1", "beta2", "epsilon", "wd", "eta", "clip_gradient"],
    "_mp_adamw_update": ["lr", "beta1", "beta2", "epsilon", "wd", "eta", "clip_gradient"],
    "Pooling": [
        *("kernel", "pool_type", "global_pool", "cudnn_off", "pooling_convention", "stride", "pad"),
        *("p_value", "count_include_pad", "layout"),
    ],
    "Pooling_v1": ["kernel", "pool_type", "global_pool", "pooling_convention", "stride", "pad"],
    "RNN": [
        *("state_size", "num_layers", "bidirectional", "mode", "p", "state_outputs", "projection_size"),
        *("lstm_state_clip_min", "lstm_state_clip_max", "lstm_state_clip_nan", "use_sequence_length"),
    ],
    "SequenceMask": ["use_sequence_length", "value", "axis"],
    "Deconvolution": [
        *("kernel", "stride", "dilate", "pad", "adj", "target_shape", "num_filter", "num_group"),
        *("workspace", "no_bias", "cudnn_tune", "cudnn_off", "layout"),
    ],
    "linalg_gemm": ["transpose_a", "transpose_b", "alpha", "beta", "axis"],
    "_contrib_DeformablePSROIPooling": [
        *("spatial_scale", "output_dim", "group_size", "pooled_size", "part_size", "sample_per_part"),
        *("trans_std", "no_trans"),
    ],
    "_contrib_ModulatedDeformableConvolution": [
        *("kernel", "stride", "dilate", "pad", "num_filter", "num_group", "num_deformable_group"),
        *("workspace", "no_bias", "im2col_step", "layout"),
    ],
    "_crop_assign_scalar": ["scalar", "begin", "end", "step"],
}

# the inputs MXNet 1.9.1 lists before the parameters, where some parameter setting takes fewer
MXNET_INPUT_SLOTS = {
    "LeakyReLU": ["data", "gamma"],
    "softmax": ["data", "length"],
    "log_softmax": ["data"],
    "SequenceLast": ["data", "sequence_length"],
    "SequenceMask": ["data", "sequence_length"],
    "SequenceReverse": ["data", "sequence_length"],
    "_contrib_BilinearResize2D": ["data", "like"],
    "Deconvolution": ["data", "weight", "bias"],
    "CTCLoss": ["data", "label", "data_lengths", "label_lengths"],
    "RNN": ["data", "parameters", "state", "state_cell", "sequence_length"],
    "BatchNorm_v1": ["data", "gamma", "beta"],  # a legacy operator: no auxiliary state by position
    "IdentityAttachKLSparseReg": ["data"],
}

# operators MXNet 1.9.1 generates as f(*data, **kwargs): parameters by keyword only
MXNET_STAR_DATA = [
    *("Concat", "stack", "add_n", "Custom", "amp_multicast", "multi_all_finite", "multi_sum_sq"),
    *("reset_arrays", "multi_sgd_update", "preloaded_multi_sgd_mom_update", "_multi_adamw_update"),
    "_multi_lamb_update",
]


@pytest.mark.parametrize("name", sorted(MXNET_PARAM_ORDER))
def test_parameters_given_by_position_follow_mxnets_order(name: str) -> None:
    assert positional_param_names(registry.get(name)) == MXNET_PARAM_ORDER[name]


@pytest.mark.parametrize("name", sorted(MXNET_INPUT_SLOTS))
def test_every_input_slot_of_mxnets_signature_comes_before_the_parameters(name: str) -> None:
    assert registry.get(name).positional_input_names() == MXNET_INPUT_SLOTS[name]


@pytest.mark.parametrize("name", MXNET_STAR_DATA)
def test_operators_of_any_number_of_inputs_take_parameters_by_keyword_only(name: str) -> None:
    op = registry.get(name)
    assert op.positional_input_names() is None and positional_param_names(op) == []


def test_sgd_mom_update_reads_lr_then_momentum_by_position() -> None:
    # before: 0.9 was read as wd
    weight, mom = mx.nd.array([1, 2]), mx.nd.array([1, 1])
    out = mx.nd.sgd_mom_update(weight, mx.nd.array([0.5, -1]), mom, 0.1, 0.9)
    np.testing.assert_allclose(out.asnumpy(), [1.85, 3.0], rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), [0.85, 1.0], rtol=1e-6)


def test_adam_update_reads_lr_beta1_beta2_by_position() -> None:
    # before: 0.5, 0.5 were read as wd and rescale_grad
    args = [mx.nd.array(v) for v in ([1, 2], [0.5, -1], [0.1, 0.1], [1, 1])]
    out = mx.nd.adam_update(*args, 0.1, 0.5, 0.5)
    np.testing.assert_allclose(out.asnumpy(), [0.96205264, 2.045], rtol=1e-6)


def test_pooling_reads_cudnn_off_before_the_pooling_convention() -> None:
    x = mx.nd.array(np.arange(16.0).reshape(1, 1, 4, 4))
    # kernel, pool_type, global_pool, cudnn_off, pooling_convention, stride; before: the second False
    # was refused as pooling_convention
    out = mx.nd.Pooling(x, (3, 3), "max", False, False, "full", (2, 2))
    np.testing.assert_allclose(out.asnumpy()[0, 0], [[10, 11], [14, 15]])


def test_gemm_reads_beta_before_axis() -> None:
    a, b, c = mx.nd.array([[1, 2], [3, 4]]), mx.nd.eye(2), mx.nd.ones((2, 2))
    out = mx.nd.linalg.gemm(a, b, c, False, False, 1.0, 0.5)  # before: 0.5 was read as axis
    np.testing.assert_allclose(out.asnumpy(), [[1.5, 2.5], [3.5, 4.5]])


def test_sequence_mask_reads_value_before_axis() -> None:
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    out = mx.nd.SequenceMask(x, mx.nd.array([1, 2]), True, -1.0, 1)  # before: -1.0 was read as axis
    np.testing.assert_allclose(out.asnumpy(), [[1, -1, -1], [4, 5, -1]])


@pytest.mark.parametrize(
    ("call", "attrs"),
    [
        (
            lambda: mx.sym.Deconvolution(
                mx.sym.var("x"), mx.sym.var("w"), None, (2, 2), (1, 1), (1, 1), (0, 0), (1, 1), num_filter=3
            ),
            {"kernel": "(2, 2)", "stride": "(1, 1)", "dilate": "(1, 1)", "pad": "(0, 0)", "adj": "(1, 1)"},
        ),
        (
            lambda: mx.sym.RNN(mx.sym.var("d"), mx.sym.var("p"), mx.sym.var("s"), None, None, 8, 1, True, "gru"),
            {"state_size": "8", "num_layers": "1", "bidirectional": "True", "mode": "gru"},
        ),
    ],
    ids=["Deconvolution-adj", "RNN-bidirectional"],
)
def test_symbols_name_positional_parameters_in_mxnets_order(call: Any, attrs: dict) -> None:
    assert {k: v for k, v in call().list_attr().items() if k in attrs} == attrs


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.nd.sum(mx.nd.ones((2, 3)), 0, axis=1),  # before: 0 was read as keepdims
        lambda: mx.sym.sum(mx.sym.var("x"), 0, axis=1),
        lambda: mx.nd.sgd_update(mx.nd.ones(2), mx.nd.ones(2), 0.1, lr=0.2),  # before: 0.1 was read as wd
    ],
    ids=["nd", "sym", "nd-update"],
)
def test_a_parameter_given_by_position_and_by_keyword_is_refused(call: Any) -> None:
    with pytest.raises(OperatorError, match=r"parameter '(axis|lr)' given twice, by position .* and by keyword"):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # before: 1 was read as axis
        (lambda: mx.nd.softmax(mx.nd.ones((2, 3)), 1), r"softmax: input 'length' \(position 1\) must be an NDArray"),
        # before: "prelu" was read as act_type
        (lambda: mx.nd.LeakyReLU(mx.nd.ones((2, 3)), "prelu"), r"LeakyReLU: input 'gamma' \(position 1\)"),
        (lambda: mx.sym.SequenceMask(mx.sym.var("x"), True), r"SequenceMask: input 'sequence_length' .* a Symbol"),
        (lambda: mx.sym.contrib.BilinearResize2D(mx.sym.var("x"), 4), r"BilinearResize2D: input 'like'"),
        (lambda: mx.nd.CTCLoss(mx.nd.ones((2, 1, 3)), mx.nd.ones((1, 1)), True), r"CTCLoss: input 'data_lengths'"),
        (
            lambda: mx.sym.Deconvolution(mx.sym.var("x"), mx.sym.var("w"), (2, 2), num_filter=1),
            r"Deconvolution: input 'bias' \(position 2\)",
        ),
    ],
)
def test_a_value_on_an_input_slot_is_refused_by_the_inputs_name(call: Any, message: str) -> None:
    with pytest.raises(ArgumentTypeError, match=message):
        call()


def test_none_still_leaves_an_input_slot_empty_before_positional_parameters() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(mx.nd.softmax(x, None, 0).asnumpy(), mx.nd.softmax(x, axis=0).asnumpy())
    net = mx.sym.LeakyReLU(mx.sym.var("x"), None, "elu")
    assert net.list_attr()["act_type"] == "elu" and net.list_arguments() == ["x"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.nd.concat(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), 1),  # before: 1 was read as dim
        lambda: mx.nd.multi_sum_sq(mx.nd.ones(2), 1),  # before: 1 was read as num_arrays
        lambda: mx.sym.multi_all_finite(mx.sym.var("x"), 1),
    ],
    ids=["concat", "multi_sum_sq", "sym-multi_all_finite"],
)
def test_a_value_given_by_position_to_an_operator_of_any_number_of_inputs_is_refused(call: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"input #\d \(position \d\) must be an? (NDArray|Symbol)"):
        call()


def test_operators_of_any_number_of_inputs_still_take_keywords() -> None:
    out = mx.nd.concat(mx.nd.ones((2, 2)), mx.nd.zeros((2, 2)), dim=1)
    assert out.shape == (2, 4)
    np.testing.assert_allclose(mx.nd.multi_sum_sq(mx.nd.ones(3), num_arrays=1).asnumpy(), [3.0])


def test_a_symbols_name_and_attr_may_follow_its_parameters_by_position() -> None:
    # MXNet's f(inputs..., params..., name=None, attr=None, out=None); before: "too many" parameters
    assert mx.sym.relu(mx.sym.var("x"), "relu1").name == "relu1"
    net = mx.sym.sum(mx.sym.var("x"), 1, True, False, "total", {"__mark__": "1"})
    assert net.name == "total" and net.list_attr()["__mark__"] == "1" and net.list_attr()["axis"] == "1"


def test_a_symbols_name_given_by_position_and_by_keyword_is_refused() -> None:
    with pytest.raises(OperatorError, match=r"relu: name given twice"):
        mx.sym.relu(mx.sym.var("x"), "a", name="b")
