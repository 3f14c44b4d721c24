"""Copying and converting NDArrays: copies across contexts and dtypes, Python scalars, pickle, DLPack."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import lazynd as mx
from lazynd.ndarray import serialization


def test_copyto_copy_as_in_context_astype() -> None:
    a = mx.nd.arange(4)
    b = mx.nd.zeros((4,))
    a.copyto(b)
    c = a.copy()
    c += 1
    assert b.asnumpy().tolist() == [0, 1, 2, 3] and a.asnumpy().tolist() == [0, 1, 2, 3]
    assert a.as_in_context(mx.cpu(0)) is a and a.as_in_context(mx.cpu(1)).context == mx.cpu(1)
    assert a.astype("int32").dtype == np.int32
    with pytest.raises(mx.ShapeError):
        a.copyto(mx.nd.zeros((5,)))


def test_scalar_conversion_len_iter_bool() -> None:
    one = mx.nd.array([3.5])
    assert one.asscalar() == 3.5 and float(one) == 3.5 and bool(one)
    rows = list(mx.nd.ones((3, 2)))
    assert len(rows) == 3 and rows[0].shape == (2,)
    assert len(mx.nd.zeros((5, 1))) == 5
    with pytest.raises(mx.LazyNDError, match="ambiguous"):
        bool(mx.nd.ones((2,)))
    with pytest.raises(mx.OperatorError, match="exactly one"):
        mx.nd.ones((2,)).asscalar()
    np.testing.assert_array_equal(np.asarray(mx.nd.ones((2,))), [1, 1])


@pytest.mark.parametrize("target", ["cpu", np.zeros(4, np.float32)], ids=["str", "numpy"])
def test_copyto_or_as_in_context_of_another_type_is_a_type_error(target) -> None:
    # MXNet raises TypeError ("copyto does not support type ..."); lazynd's was a ValueError
    a = mx.nd.arange(4)
    for call in (a.copyto, a.as_in_context):
        with pytest.raises(
            TypeError, match=f"copyto: target must be an NDArray or a Context, got {type(target).__name__}"
        ):
            call(target)


def test_pickle_round_trips_values_dtype_and_context() -> None:
    a = mx.nd.array(np.arange(6).reshape(2, 3), ctx=mx.cpu(1), dtype="int64")
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.int64 and b.context == mx.cpu(1)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_pickles_written_before_unpickle_moved_still_load() -> None:
    # earlier versions pickled a reference to lazynd.ndarray.ndarray._unpickle: the name must stay
    payload = pickle.dumps(mx.nd.ones((2,)), protocol=0)  # (protocol 0 names a function as text lines)
    old = payload.replace(b"lazynd.ndarray.serialization\nunpickle", b"lazynd.ndarray.ndarray\n_unpickle")
    assert b"lazynd.ndarray.ndarray" in old
    np.testing.assert_array_equal(pickle.loads(old).asnumpy(), [1, 1])


class _PickledOnGpu:
    """Pickles as an NDArray on gpu(0) pickles (``NDArray.__reduce__``), on any machine."""

    def __reduce__(self) -> tuple:
        return (serialization.unpickle, (np.arange(3, dtype=np.int32), "gpu", 0))


@pytest.mark.skipif(mx.context.num_gpus() > 0, reason="a usable gpu(0) loads the array there")
def test_an_array_pickled_on_a_gpu_that_is_not_here_loads_on_the_cpu_with_a_warning() -> None:
    # as MXNet built without CUDA loads it (lazynd raised ContextError: the values could not be had)
    with pytest.warns(UserWarning, match=r"unpickling an NDArray saved on gpu\(0\): .*loaded on cpu\(0\)"):
        a = pickle.loads(pickle.dumps(_PickledOnGpu()))
    assert a.context == mx.cpu(0) and a.dtype == np.int32
    np.testing.assert_array_equal(a.asnumpy(), [0, 1, 2])


def test_dlpack_exchange_with_numpy_is_zero_copy() -> None:
    a = mx.nd.arange(4) * 2
    view = np.from_dlpack(a)
    np.testing.assert_array_equal(view, [0, 2, 4, 6])
    source = np.arange(3, dtype=np.float32)
    b = mx.nd.from_dlpack(source)
    source[0] = 9
    assert b.asnumpy()[0] == 9


def test_dlpack_exchange_with_torch() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    t = torch.arange(4, dtype=torch.float32)
    a = mx.nd.from_dlpack(t)
    a += 1
    assert t.tolist() == [0, 1, 2, 3] or a.asnumpy().tolist() == [1, 2, 3, 4]
    back = torch.from_dlpack(mx.nd.ones((2,)) * 3)
    assert back.tolist() == [3.0, 3.0]


def test_from_numpy_shares_memory_by_default_as_mxnet() -> None:
    # MXNet 1.9.1: from_numpy(ndarray, zero_copy=True); a write into the NDArray shows in the
    # NumPy array (MXNet: [1.0, 1.0, 1.0] after y += 1)
    host = np.zeros(3, np.float32)
    y = mx.nd.from_numpy(host)
    y += 1
    y.wait_to_read()
    assert host.tolist() == [1.0, 1.0, 1.0]
    copied = np.zeros(3, np.float32)
    z = mx.nd.from_numpy(copied, zero_copy=False)
    z += 1
    z.wait_to_read()
    assert copied.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["int16", "uint16", "complex64"])
def test_from_numpy_refuses_a_dtype_lazynd_lacks_as_mxnet(dtype) -> None:
    # MXNet 1.9.1: ValueError "int16 is not supported."
    with pytest.raises(ValueError, match="unsupported dtype"):
        mx.nd.from_numpy(np.ones(2, dtype), zero_copy=True)


def test_from_numpy_shares_only_a_c_contiguous_array_as_mxnet() -> None:
    # MXNet 1.9.1: ValueError "Only c-contiguous arrays are supported for zero-copy"
    strided = np.ones((3, 4), np.float32)[:, ::2]
    with pytest.raises(ValueError, match="zero_copy takes a C-contiguous array"):
        mx.nd.from_numpy(strided)
    assert mx.nd.from_numpy(strided, zero_copy=False).shape == (3, 2)


def test_from_numpy_of_a_read_only_array_copies_it() -> None:
    # on purpose unlike MXNet 1.9.1, which writes through the flag ([2.0, 2.0] in ``frozen`` too):
    # a read-only array may be an immutable buffer (np.frombuffer of bytes)
    frozen = np.ones(2, np.float32)
    frozen.flags.writeable = False
    y = mx.nd.from_numpy(frozen)
    y += 1
    assert y.asnumpy().tolist() == [2.0, 2.0] and frozen.tolist() == [1.0, 1.0]
