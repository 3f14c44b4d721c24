"""Checkpoints: arguments of the wrong type are refused before anything is written; a parameterless
network's checkpoint loads; a saved parameter of the wrong shape is named when it is copied in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, DataError, ShapeError


def _net() -> Any:
    return mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")


@pytest.mark.parametrize("epoch", ["1", 1.0, None, True])
def test_an_epoch_that_is_not_an_integer_is_refused(tmp_path: Path, epoch: Any) -> None:
    prefix = str(tmp_path / "net")
    error, message = (
        (DataError, "epoch is required") if epoch is None else (ArgumentTypeError, "epoch must be an integer")
    )
    with pytest.raises(error, match=message):
        mx.model.save_checkpoint(prefix, epoch, _net(), {}, {})
    with pytest.raises(error, match=message):
        mx.model.load_checkpoint(prefix, epoch)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [np.ones((4, 3)), 5], ids=["numpy", "int"])
def test_save_checkpoint_refuses_values_that_are_not_ndarrays_and_writes_nothing(tmp_path: Path, value: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"arg_params\['fc_weight'\] must be an NDArray"):
        mx.model.save_checkpoint(str(tmp_path / "net"), 1, _net(), {"fc_weight": value}, {})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("symbol", ["net", 1.5, {"k": 1}], ids=repr)
def test_save_checkpoint_refuses_a_symbol_that_is_no_symbol_and_writes_nothing(tmp_path: Path, symbol: Any) -> None:
    # AttributeError "'str' object has no attribute 'save'" before
    with pytest.raises(ArgumentTypeError, match="save_checkpoint: symbol must be a Symbol"):
        mx.model.save_checkpoint(str(tmp_path / "net"), 1, symbol, {"fc_weight": mx.nd.ones((2, 3))}, {})
    assert list(tmp_path.iterdir()) == []


def test_the_checkpoint_of_a_network_without_parameters_loads(tmp_path: Path) -> None:
    prefix = str(tmp_path / "net")
    net = mx.sym.relu(mx.sym.Variable("data"))
    mx.model.save_checkpoint(prefix, 3, net, {}, {})
    symbol, arg_params, aux_params = mx.model.load_checkpoint(prefix, 3)
    assert symbol.list_arguments() == ["data"] and arg_params == {} and aux_params == {}


def test_a_checkpointed_parameter_of_the_wrong_shape_is_named_when_the_module_binds(tmp_path: Path) -> None:
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 1, _net(), {"fc_weight": mx.nd.ones((5, 3)), "fc_bias": mx.nd.ones(4)}, {})
    module = mx.mod.Module.load(prefix, 1, label_names=None)
    with pytest.raises(ShapeError, match=r"'fc_weight' is given with shape \(5, 3\), the executor's is \(4, 3\)"):
        module.bind([("data", (2, 3))])


def _training_data() -> Any:
    return mx.io.NDArrayIter(np.ones((4, 3), np.float32), np.zeros(4, np.float32), batch_size=2, label_name="lr_label")


def _regression() -> Any:
    return mx.sym.LinearRegressionOutput(_net(), name="lr")


@pytest.mark.parametrize(("what", "value"), [("num_epoch", "2"), ("num_epoch", 2.0), ("begin_epoch", "0")])
def test_module_fit_refuses_epoch_bounds_that_are_not_integers(what: str, value: Any) -> None:
    module = mx.mod.Module(_regression(), label_names=["lr_label"])
    arguments = {"num_epoch": 1, what: value}
    with pytest.raises(ArgumentTypeError, match=f"fit: {what} must be an integer"):
        module.fit(_training_data(), **arguments)


@pytest.mark.parametrize(("what", "value"), [("num_epoch", "2"), ("begin_epoch", 0.5)])
def test_feedforward_fit_refuses_epoch_bounds_that_are_not_integers(what: str, value: Any) -> None:
    model = mx.model.FeedForward(_regression(), **{"num_epoch": 1, what: value})
    with pytest.raises(ArgumentTypeError, match=f"FeedForward.fit: {what} must be an integer"):
        model.fit(_training_data())


@pytest.mark.parametrize(
    "make", [mx.callback.do_checkpoint, lambda prefix, period: mx.callback.module_checkpoint(None, prefix, period)]
)
def test_a_checkpoint_period_must_be_a_number(make, tmp_path):
    with pytest.raises(ArgumentTypeError, match="checkpoint: period must be a number of epochs, got '2'"):
        make(str(tmp_path / "m"), period="2")
    assert callable(make(str(tmp_path / "m"), period=0))  # MXNet's reading: every epoch


@pytest.mark.parametrize("period", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize(
    "make", [mx.callback.do_checkpoint, lambda prefix, period: mx.callback.module_checkpoint(None, prefix, period)]
)
def test_a_checkpoint_period_must_be_finite(make, period, tmp_path):
    # int()'s ValueError/OverflowError before
    with pytest.raises(ArgumentTypeError, match=f"checkpoint: period must be a number of epochs, got {period}"):
        make(str(tmp_path / "m"), period=period)
