"""Every operator named in the operator issue exists in both namespaces, with MXNet's parameter defaults."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

UNARY = (
    "abs sign round ceil floor rint fix square sqrt rsqrt exp log log10 log2 log1p expm1 sin cos tan arcsin arccos "
    "arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians negative identity clip relu sigmoid softsign "
    "smooth_l1 gamma gammaln"
).split()
BROADCAST = [
    f"broadcast_{name}"
    for name in (
        "add sub mul div mod power maximum minimum hypot equal not_equal greater greater_equal lesser lesser_equal"
    ).split()
] + ["broadcast_to", "broadcast_axis", "ElementWiseSum", "add_n"]
REDUCE = "sum mean prod max min nansum nanprod norm argmax argmin argmax_channel sum_axis".split()
SHAPE = (
    "Reshape Flatten transpose SwapAxis expand_dims Concat SliceChannel slice_axis crop slice flip take batch_take "
    "one_hot where topk sort argsort Cast Pad tile repeat stack"
).split()
LINALG = ["dot", "batch_dot"]
NN = (
    "FullyConnected Activation LeakyReLU Convolution Deconvolution Pooling BatchNorm Dropout Embedding UpSampling "
    "LRN L2Normalization InstanceNorm"
).split()
OUTPUTS = (
    "SoftmaxOutput softmax log_softmax SoftmaxActivation LinearRegressionOutput LogisticRegressionOutput "
    "MAERegressionOutput MakeLoss BlockGrad"
).split()
OPTIMIZER = ["sgd_update", "sgd_mom_update", "adam_update", "rmsprop_update"]
RANDOM = ["uniform", "normal"]
# issue 24: the operators MXNet 0.9 programs use that were missing
MXNET09 = (
    "Crop SequenceMask SequenceLast SequenceReverse SVMOutput ROIPooling SpatialTransformer GridGenerator "
    "BilinearSampler Correlation softmax_cross_entropy IdentityAttachKLSparseReg _identity_with_attr_like_rhs "
    "_crop_assign _crop_assign_scalar pick choose_element_0index fill_element_0index onehot_encode RNN"
).split()
ISSUE_OPERATORS = UNARY + BROADCAST + REDUCE + SHAPE + LINALG + NN + OUTPUTS + OPTIMIZER + RANDOM + MXNET09


@pytest.mark.parametrize("name", ISSUE_OPERATORS)
def test_issue_operator_exists_in_ndarray_and_symbol_namespaces(name):
    assert callable(getattr(mx.nd, name, None)), f"lazynd.nd.{name} is missing"
    assert callable(getattr(sym, name, None)), f"lazynd_sym.{name} is missing"


# (operator, parameter, MXNet's default)
MXNET_DEFAULTS = [
    ("FullyConnected", "no_bias", False),
    ("FullyConnected", "flatten", True),
    ("Convolution", "num_group", 1),
    ("Convolution", "no_bias", False),
    ("Deconvolution", "no_bias", True),
    ("Pooling", "pool_type", "max"),
    ("Pooling", "global_pool", False),
    ("Pooling", "pooling_convention", "valid"),
    ("BatchNorm", "eps", 1e-3),
    ("BatchNorm", "momentum", 0.9),
    ("BatchNorm", "fix_gamma", True),
    ("BatchNorm", "use_global_stats", False),
    ("Dropout", "p", 0.5),
    ("LeakyReLU", "act_type", "leaky"),
    ("LeakyReLU", "slope", 0.25),
    ("SoftmaxOutput", "grad_scale", 1.0),
    ("SoftmaxOutput", "ignore_label", -1.0),
    ("SoftmaxOutput", "normalization", "null"),
    ("SoftmaxActivation", "mode", "instance"),
    ("softmax", "axis", -1),
    ("take", "axis", 0),
    ("take", "mode", "clip"),
    ("topk", "k", 1),
    ("topk", "ret_typ", "indices"),
    ("topk", "is_ascend", False),
    ("sort", "is_ascend", True),
    ("SliceChannel", "axis", 1),
    ("SliceChannel", "squeeze_axis", False),
    ("Concat", "dim", 1),
    ("dot", "transpose_a", False),
    ("dot", "transpose_b", False),
    ("sgd_mom_update", "momentum", 0.0),
    ("sgd_update", "wd", 0.0),
    ("sgd_update", "rescale_grad", 1.0),
    ("adam_update", "beta1", 0.9),
    ("adam_update", "beta2", 0.999),
    ("adam_update", "epsilon", 1e-8),
    ("rmsprop_update", "gamma1", 0.95),
    ("LRN", "nsize", None),
    ("LRN", "alpha", 1e-4),
    ("LRN", "beta", 0.75),
    ("LRN", "knorm", 2.0),
    ("Embedding", "dtype", "float32"),
    ("one_hot", "on_value", 1.0),
    ("one_hot", "off_value", 0.0),
    ("Reshape", "reverse", False),
]


@pytest.mark.parametrize("op,param,default", MXNET_DEFAULTS)
def test_parameter_has_mxnet_default(op, param, default):
    opdef = mx.ops.registry.get(op)
    assert param in opdef.params, f"{op} has no parameter {param!r}"
    if default is None:  # required in MXNet
        with pytest.raises(LazyNDError, match=param):
            opdef.parse({})
        return
    required = {name for name, p in opdef.params.items() if p.default is mx.ops.params.REQUIRED}
    given = {name: _example(op, name) for name in required}
    assert opdef.parse(given)[param] == default


def _example(op: str, param: str) -> object:
    return {"kernel": (2, 2), "num_filter": 2, "num_hidden": 2, "depth": 2, "input_dim": 2, "output_dim": 2}.get(
        param, 1
    )


@pytest.mark.parametrize(
    "op,given,parsed",
    [
        (
            "Pooling",
            {"kernel": "(2, 2)", "stride": "(2,2)", "global_pool": "False"},
            {"kernel": (2, 2), "stride": (2, 2)},
        ),
        ("FullyConnected", {"num_hidden": "10", "no_bias": "true"}, {"num_hidden": 10, "no_bias": True}),
        ("BatchNorm", {"eps": "1e-5", "fix_gamma": "0"}, {"eps": 1e-5, "fix_gamma": False}),
        ("Cast", {"dtype": "float16"}, {"dtype": "float16"}),
        ("sum", {"axis": "(0, 1)", "keepdims": "True"}, {"axis": (0, 1), "keepdims": True}),
    ],
)
def test_parameters_accept_strings(op, given, parsed):
    attrs = mx.ops.registry.get(op).parse(given)
    for name, value in parsed.items():
        assert attrs[name] == value


@pytest.mark.parametrize(
    "op,given,param,value",
    [
        ("Activation", {"act_type": "swish"}, "act_type", "swish"),
        ("Pooling", {"kernel": (2, 2), "pool_type": "median"}, "pool_type", "median"),
        ("Cast", {"dtype": "float13"}, "dtype", "float13"),
        ("Cast", {"dtype": "complex64"}, "dtype", "complex64"),
        ("FullyConnected", {"num_hidden": "ten"}, "num_hidden", "ten"),
    ],
)
def test_bad_parameter_error_names_op_parameter_and_value(op, given, param, value):
    with pytest.raises(LazyNDError) as info:
        mx.ops.registry.get(op).parse(given)
    message = str(info.value)
    assert op in message and param in message and value in message and "expected" in message


def test_a_backward_operator_rule_of_one_gradient_gives_a_list_of_one():
    # a backward operator with one output gives that array, which the rule hands back as the one
    # gradient (list() of it would have given its rows)
    from lazynd.ops.registry import BackwardOpGradient

    x = mx.nd.array([[-1.0, 2.0], [3.0, -4.0], [5.0, 6.0]])
    rule = BackwardOpGradient("_backward_relu", 1)
    grads = rule(mx.nd, {}, [x], [mx.nd.relu(x)], [mx.nd.ones((3, 2))])
    assert len(grads) == 1
    np.testing.assert_array_equal(grads[0].asnumpy(), [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
