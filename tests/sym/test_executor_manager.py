"""``mx.executor_manager``: MXNet's batch-splitting helpers, imported by executor groups users wrote."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError


def test_programs_import_the_split_from_mxnets_module_path() -> None:
    from lazynd.executor_manager import _split_input_slice

    assert _split_input_slice(10, [1, 4]) == [slice(0, 2), slice(2, 10)]
    assert mx.executor_manager._split_input_slice is _split_input_slice


def test_a_split_leaving_a_device_empty_is_refused() -> None:
    with pytest.raises(DataError, match="cannot be split over 3 devices"):
        mx.executor_manager._split_input_slice(2, [1, 1, 1])


def test_load_data_copies_each_devices_slice_of_the_batch() -> None:
    batch = mx.io.DataBatch(data=[mx.nd.array(np.arange(12).reshape(6, 2))])
    parts = mx.executor_manager._split_input_slice(6, [1, 2])
    targets = [[(part, mx.nd.zeros((part.stop - part.start, 2), ctx=mx.cpu(k))) for k, part in enumerate(parts)]]
    mx.executor_manager._load_data(batch, targets)
    assert targets[0][0][1].asnumpy().tolist() == [[0, 1], [2, 3]]
    assert targets[0][1][1].asnumpy().tolist() == [[4, 5], [6, 7], [8, 9], [10, 11]]


def test_load_label_names_a_batch_the_slices_do_not_cover() -> None:
    batch = mx.io.DataBatch(data=[], label=[mx.nd.zeros((5,))])
    targets = [[(slice(0, 2), mx.nd.zeros((2,))), (slice(2, 4), mx.nd.zeros((2,)))]]
    with pytest.raises(DataError, match="the batch has 5 examples, the devices' slices take 4"):
        mx.executor_manager._load_label(batch, targets)


def test_check_arguments_names_a_duplicated_argument() -> None:
    data = sym.Variable("data")
    twice = sym.FullyConnected(sym.FullyConnected(data, num_hidden=2, name="fc"), num_hidden=2, name="fc")
    with pytest.raises(DataError, match="the argument 'fc_weight' twice"):
        mx.executor_manager._check_arguments(twice)
    mx.executor_manager._check_arguments(sym.FullyConnected(data, num_hidden=2, name="fc"))
