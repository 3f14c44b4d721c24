"""``mx.operator.get_operator_arguments`` gives MXNet 1.9.1's names and type texts, read from the registry.

The expected answers below were printed by MXNet 1.9.1 (``mxnet.operator.get_operator_arguments``).
Where lazynd still answers otherwise (operators with bfloat16 or sparse choices, MXNet's ``double`` and
``long`` fields, quantisation parameters, num_args placed elsewhere) README's API section lists it.
"""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.errors import OperatorError
from lazynd.ops.params import Param, describe_param, dtype_among, enum, optional, parse_bool, parse_int, parse_shape

MXNET_1_9_1 = {
    "FullyConnected": (
        ["data", "weight", "bias", "num_hidden", "no_bias", "flatten"],
        [
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "int, required",
            "boolean, optional, default=0",
            "boolean, optional, default=1",
        ],
    ),
    "Activation": (
        ["data", "act_type"],
        ["NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"],
    ),
    "Pooling": (
        [
            "data",
            "kernel",
            "pool_type",
            "global_pool",
            "cudnn_off",
            "pooling_convention",
            "stride",
            "pad",
            "p_value",
            "count_include_pad",
            "layout",
        ],
        [
            "NDArray-or-Symbol",
            "Shape(tuple), optional, default=[]",
            "{'avg', 'lp', 'max', 'sum'},optional, default='max'",
            "boolean, optional, default=0",
            "boolean, optional, default=0",
            "{'full', 'same', 'valid'},optional, default='valid'",
            "Shape(tuple), optional, default=[]",
            "Shape(tuple), optional, default=[]",
            "int or None, optional, default='None'",
            "boolean or None, optional, default=None",
            "{None, 'NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC', 'NWC'},optional, default='None'",
        ],
    ),
    "SoftmaxOutput": (
        [
            "data",
            "label",
            "grad_scale",
            "ignore_label",
            "multi_output",
            "use_ignore",
            "preserve_shape",
            "normalization",
            "out_grad",
            "smooth_alpha",
        ],
        [
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "float, optional, default=1",
            "float, optional, default=-1",
            "boolean, optional, default=0",
            "boolean, optional, default=0",
            "boolean, optional, default=0",
            "{'batch', 'null', 'valid'},optional, default='null'",
            "boolean, optional, default=0",
            "float, optional, default=0",
        ],
    ),
    "Dropout": (
        ["data", "p", "mode", "axes", "cudnn_off"],
        [
            "NDArray-or-Symbol",
            "float, optional, default=0.5",
            "{'always', 'training'},optional, default='training'",
            "Shape(tuple), optional, default=[]",
            "boolean or None, optional, default=0",
        ],
    ),
    "Reshape": (
        ["data", "shape", "reverse", "target_shape", "keep_highest"],
        [
            "NDArray-or-Symbol",
            "Shape(tuple), optional, default=[]",
            "boolean, optional, default=0",
            "Shape(tuple), optional, default=[]",
            "boolean, optional, default=0",
        ],
    ),
    "sum": (
        ["data", "axis", "keepdims", "exclude"],
        [
            "NDArray-or-Symbol",
            "Shape or None, optional, default=None",
            "boolean, optional, default=0",
            "boolean, optional, default=0",
        ],
    ),
    "broadcast_add": (["lhs", "rhs"], ["NDArray-or-Symbol", "NDArray-or-Symbol"]),
    "LeakyReLU": (
        ["data", "gamma", "act_type", "slope", "lower_bound", "upper_bound"],
        [
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "{'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'},optional, default='leaky'",
            "float, optional, default=0.25",
            "float, optional, default=0.125",
            "float, optional, default=0.333999991",
        ],
    ),
    "topk": (
        ["data", "axis", "k", "ret_typ", "is_ascend", "dtype"],
        [
            "NDArray-or-Symbol",
            "int or None, optional, default='-1'",
            "int, optional, default='1'",
            "{'both', 'indices', 'mask', 'value'},optional, default='indices'",
            "boolean, optional, default=0",
            "{'float16', 'float32', 'float64', 'int32', 'int64', 'uint8'},optional, default='float32'",
        ],
    ),
    "clip": (["data", "a_min", "a_max"], ["NDArray-or-Symbol", "float, required", "float, required"]),
    "add_n": (["args"], ["NDArray-or-Symbol[]"]),
    "stack": (["data", "axis", "num_args"], ["NDArray-or-Symbol[]", "int, optional, default='0'", "int, required"]),
    "norm": (
        ["data", "ord", "axis", "out_dtype", "keepdims"],
        [
            "NDArray-or-Symbol",
            "int, optional, default='2'",
            "Shape or None, optional, default=None",
            "{None, 'float16', 'float32', 'float64', 'int32', 'int64', 'int8'},optional, default='None'",
            "boolean, optional, default=0",
        ],
    ),
    "sgd_update": (
        ["weight", "grad", "lr", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
        [
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "float, required",
            "float, optional, default=0",
            "float, optional, default=1",
            "float, optional, default=-1",
            "boolean, optional, default=1",
        ],
    ),
    "slice": (
        ["data", "begin", "end", "step"],
        ["NDArray-or-Symbol", "Shape(tuple), required", "Shape(tuple), required", "Shape(tuple), optional, default=[]"],
    ),
    "softmax": (
        ["data", "length", "axis", "temperature", "dtype", "use_length"],
        [
            "NDArray-or-Symbol",
            "NDArray-or-Symbol",
            "int, optional, default='-1'",
            "double or None, optional, default=None",
            "{None, 'float16', 'float32', 'float64'},optional, default='None'",
            "boolean or None, optional, default=0",
        ],
    ),
}


@pytest.mark.parametrize("op_name", sorted(MXNET_1_9_1))
def test_arguments_are_mxnets(op_name):
    names, types = MXNET_1_9_1[op_name]
    args = mx.operator.get_operator_arguments(op_name)
    assert isinstance(args, mx.operator.OperatorArguments)
    assert (args.narg, args.names, args.types) == (len(names), names, types)


def test_an_alias_answers_for_its_operator():
    assert mx.operator.get_operator_arguments("ElementWiseSum") == mx.operator.get_operator_arguments("add_n")


def test_an_unknown_operator_is_refused_by_name():
    with pytest.raises(OperatorError, match="get_operator_arguments: operator 'NoSuchOp' is not registered"):
        mx.operator.get_operator_arguments("NoSuchOp")


def test_a_name_that_is_not_a_string_is_refused():
    with pytest.raises(OperatorError, match="op_name must be an operator's name, got int"):
        mx.operator.get_operator_arguments(3)


@pytest.mark.parametrize(
    ("param", "text"),
    [
        (Param(parse_int), "int, required"),
        (Param(parse_int, -1), "int, optional, default='-1'"),
        (Param(optional(parse_int), None), "int or None, optional, default='None'"),
        (Param(parse_bool, True), "boolean, optional, default=1"),
        (Param(optional(parse_bool), False), "boolean or None, optional, default=0"),
        (Param(parse_shape, ()), "Shape(tuple), optional, default=[]"),
        (Param(parse_shape, (1, 1)), "Shape(tuple), optional, default=[1,1]"),
        (Param(enum("tanh", "relu")), "{'relu', 'tanh'}, required"),
        (Param(optional(enum("off", "fastest")), None), "{None, 'fastest', 'off'},optional, default='None'"),
        (Param(dtype_among("float32", "float16"), "float32"), "{'float16', 'float32'},optional, default='float32'"),
        (Param(float, 0.9), "float, optional, default=0.899999976"),
    ],
)
def test_each_parser_describes_its_type_as_mxnet_writes_it(param, text):
    assert describe_param(param) == text
