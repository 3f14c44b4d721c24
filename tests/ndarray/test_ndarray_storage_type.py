"""MXNet's storage-type surface on dense arrays: ``stype``, ``tostype``, ``stype=`` arguments.

lazynd's arrays are all dense: ``'default'`` works as in MXNet 1.9.1, sparse types are
refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def test_arrays_are_dense_and_writable() -> None:
    x = mx.nd.array([[1, 2], [3, 4]])
    assert x.stype == "default"  # MXNet 1.9.1: 'default'
    assert x.writable is True


def test_tostype_default_is_a_dense_copy() -> None:
    x = mx.nd.array([[1, 2], [3, 4]])
    y = x.tostype("default")
    assert y is not x and y.stype == "default"
    y[0, 0] = 9
    np.testing.assert_array_equal(x.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_creation_and_attach_grad_take_stype_default() -> None:
    assert mx.nd.zeros((2,), stype="default").stype == "default"
    assert mx.nd.ones((2,), stype="default").shape == (2,)
    assert mx.nd.empty((2,), stype="default").shape == (2,)
    assert mx.nd.array([1.0], stype="default").shape == (1,)
    x = mx.nd.ones((2,))
    x.attach_grad(stype="default")
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (lambda: mx.nd.ones((2,)).tostype("csr"), "NDArray.tostype"),
        (lambda: mx.nd.ones((2,)).attach_grad(stype="row_sparse"), "NDArray.attach_grad"),
        (lambda: mx.nd.zeros((2, 2), stype="csr"), "nd.zeros"),
        (lambda: mx.nd.array([1.0], stype="row_sparse"), "nd.array"),
        (lambda: mx.nd.sparse.csr_matrix((2, 2)), r"mx\.nd\.sparse\.csr_matrix"),
    ],
)
def test_sparse_storage_is_refused_by_name(call: object, what: str) -> None:
    with pytest.raises(mx.LazyNDError, match=what):
        call()  # type: ignore[operator]


def test_nonzero_is_bool() -> None:
    # MXNet 1.9.1: nd.array([0]).__nonzero__() -> False
    assert mx.nd.array([0]).__nonzero__() is False
    assert mx.nd.array([2]).__nonzero__() is True


def test_dlpack_methods_give_capsules() -> None:
    x = mx.nd.array([1.0, 2.0])
    np.testing.assert_array_equal(np.from_dlpack(_Capsule(x.to_dlpack_for_read())), [1.0, 2.0])
    assert x.to_dlpack_for_write() is not None


class _Capsule:
    """Hands a raw DLPack capsule to ``np.from_dlpack`` (which asks for ``__dlpack__``)."""

    def __init__(self, capsule: object) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: object) -> object:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def test_flatten_takes_mxnets_inplace() -> None:
    x = mx.nd.ones((2, 3, 4))
    assert x.flatten(inplace=True).shape == (2, 12)  # MXNet 1.9.1: (2, 12)


def test_flatten_method_is_a_copy_unless_inplace() -> None:
    # MXNet 1.9.1: x.flatten() is a copy (a write to it leaves x alone); flatten(inplace=True) a view
    x = mx.nd.zeros((2, 3, 2))
    flat = x.flatten()
    assert flat.shape == (2, 6)
    flat[:] = 1
    assert x.asnumpy().sum() == 0
    view = x.flatten(inplace=True)
    view[0] = 2
    assert x.asnumpy().sum() == 12


def test_reshape_method_with_mxnet_codes_is_a_view() -> None:
    # MXNet 1.9.1: x.reshape((0, -1)), x.reshape((-3, -2)), x.reshape(..., reverse=True) share x's memory
    for shape, kwargs, expected in [
        ((0, -1), {}, (2, 12)),
        ((-3, -2), {}, (6, 4)),
        ((4, -1), {"reverse": True}, (4, 6)),
    ]:
        x = mx.nd.zeros((2, 3, 4))
        view = x.reshape(shape, **kwargs)
        assert view.shape == expected
        view[:] = 1
        assert x.asnumpy().sum() == 24


def test_as_in_context_takes_mxnets_keyword() -> None:
    x = mx.nd.ones((2,))
    assert x.as_in_context(context=mx.cpu()) is x
