"""The pieces every data iterator shares: DataDesc, DataBatch, DataIter subclasses, iterators lazynd lacks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import DataError, DataTypeError
from lazynd.io import DataBatch, DataDesc, DataIter


def test_datadesc_unpacks_as_name_shape_pair_and_keeps_layout() -> None:
    desc = DataDesc("data", [4, 3], layout="NC")
    name, shape = desc
    assert (name, shape, desc.layout, desc.dtype) == ("data", (4, 3), "NC", np.float32)


@pytest.mark.parametrize(
    "shape",
    [(4, 3), [4, 3], (np.int64(4), np.int32(3)), np.array([4, 3]), (4.0, 3), type("Shape", (tuple,), {})((4, 3))],
)
def test_datadesc_takes_any_sequence_of_whole_numbers_as_a_tuple_of_ints(shape) -> None:
    # a plain tuple of ints (an array's shape) is answered by class checks, every other form by the ABCs
    got = DataDesc("data", shape).shape
    assert got == (4, 3) and got.__class__ is tuple and all(d.__class__ is int for d in got)


@pytest.mark.parametrize("shape", [(True, 3), (4, 2.5), "43", 4, (4, None)])
def test_datadesc_refuses_a_shape_of_other_values(shape) -> None:
    with pytest.raises(DataError, match=r"DataDesc 'data': shape must be a tuple of integers"):
        DataDesc("data", shape)


def test_datadesc_batch_axis_follows_layout() -> None:
    assert DataDesc.get_batch_axis("TNC") == 1
    assert DataDesc.get_batch_axis(None) == 0
    assert DataDesc.get_batch_axis("CHW") == -1  # no batch axis, as MXNet 1.9.1 says


@pytest.mark.parametrize("layout", [1.5, ["N", "C"], 0], ids=repr)
def test_a_layout_that_is_no_str_is_refused_by_name(layout):
    # AttributeError "'float' object has no attribute 'find'" before
    with pytest.raises(DataTypeError, match="DataDesc.get_batch_axis: layout must be a str"):
        DataDesc.get_batch_axis(layout)


def test_ndarray_iter_refuses_a_layout_without_a_batch_axis() -> None:
    with pytest.raises(DataError, match="NDArrayIter: layout 'CW' has no batch axis 'N'"):
        mx.io.NDArrayIter(np.zeros((4, 3)), batch_size=2, layout="CW")


def test_datadesc_survives_pickle() -> None:
    desc = pickle.loads(pickle.dumps(DataDesc("x", (2, 2), np.int32, "NC")))
    assert (desc.name, desc.shape, desc.dtype, desc.layout) == ("x", (2, 2), np.int32, "NC")


def test_databatch_rejects_non_list_data() -> None:
    with pytest.raises(DataError, match="list"):
        DataBatch(mx.nd.zeros((2,)))


def test_a_subclass_may_assign_provide_data_and_label() -> None:
    class Constant(DataIter):
        def __init__(self) -> None:
            super().__init__(batch_size=2)
            self.provide_data = [("data", (2, 3))]
            self.provide_label = [("label", (2,))]

    it = Constant()
    assert it.provide_data == [("data", (2, 3))] and it.provide_label == [("label", (2,))]
    with pytest.raises(NotImplementedError):
        DataIter().provide_data  # noqa: B018


def test_an_assigned_none_reads_back_as_none() -> None:
    # MXNet-SSD's DetRecordIter: `self.provide_label = None`, then `if self.provide_label is None:` sizes
    # the labels from the first batch
    class Unsized(DataIter):
        def __init__(self) -> None:
            super().__init__(batch_size=2)
            self.provide_label = None

    assert Unsized().provide_label is None


@pytest.mark.parametrize(("name", "why"), [("LibSVMIter", "CSR sparse")])
def test_iterators_lazynd_lacks_are_named(name: str, why: str) -> None:
    with pytest.raises(mx.LazyNDError, match=rf"mx\.io\.{name}: not supported: .*{why}"):
        getattr(mx.io, name)


@pytest.mark.parametrize("shapes", [None, "abc", 1.5, [1, 2], {"data": (2, 3)}], ids=repr)
def test_get_list_refuses_shapes_that_are_no_pairs_by_name(shapes):
    # dict()'s or unpacking's TypeError/ValueError before
    with pytest.raises(DataTypeError, match="DataDesc.get_list: shapes must be a list of"):
        DataDesc.get_list(shapes)


def test_get_list_takes_pairs_from_any_iterable_and_types_as_a_dict():
    descs = DataDesc.get_list(zip(["data"], [(2, 3)], strict=True), {"data": np.float64})
    assert [(d.name, d.shape, d.dtype) for d in descs] == [("data", (2, 3), np.float64)]
