"""MXNet ``test_utils``' small helpers: random arrays and shapes, assertions, ``simple_forward``, MNIST.

They are reached as ``mx.test_utils.<name>``, as MXNet programs and tutorials call them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .context import Context, num_gpus
from .errors import LazyNDError
from .testing import assert_almost_equal, default_context


def default_dtype() -> type:
    """The dtype of :func:`random_arrays` (float32, as MXNet's)."""
    return np.float32


def random_arrays(*shapes: tuple[int, ...]) -> Any:
    """NumPy float32 arrays of standard normal values, one per shape (one array for one shape).

    Examples
    --------
    >>> import lazynd as mx
    >>> a, b = mx.test_utils.random_arrays((2, 3), ())
    >>> a.shape, a.dtype, b.shape
    ((2, 3), dtype('float32'), ())
    """
    arrays: list[np.ndarray] = [np.asarray(np.random.randn(*shape), dtype=default_dtype()) for shape in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population: Sequence[Any], k: int) -> list[Any]:
    """``k`` elements of ``population`` in a random order, drawn with NumPy's global generator.

    As MXNet's: a copy of the population is shuffled with ``np.random.shuffle`` and its first
    ``k`` elements returned, so a seeded NumPy gives MXNet's sample.

    Examples
    --------
    >>> import numpy as np, lazynd as mx
    >>> np.random.seed(0)
    >>> mx.test_utils.random_sample(list(range(10)), 3)
    [2, 8, 4]
    """
    if not 0 <= k <= len(population):
        raise LazyNDError(f"random_sample: k must be in [0, {len(population)}] (the population's size), got {k}")
    shuffled = list(population)
    np.random.shuffle(shuffled)
    return shuffled[:k]


def checkShapes(a: Any, b: Any) -> None:  # noqa: N802 - MXNet's name
    """Raise an ``AssertionError`` naming both shapes when ``a`` and ``b`` differ in shape."""
    if tuple(a.shape) != tuple(b.shape):
        raise AssertionError(f"a.shape = {tuple(a.shape)} and b.shape = {tuple(b.shape)} are not equal")


def random_uniform_arrays(
    *shapes: tuple[int, ...], low: float = 0.0, high: float = 1.0, dtype: Any = None
) -> list[np.ndarray]:
    """NumPy arrays of values uniform in ``[low, high)``, one per shape, of ``dtype`` (default
    float32); a list even for one shape, as MXNet's.

    Examples
    --------
    >>> import lazynd as mx
    >>> [a.shape for a in mx.test_utils.random_uniform_arrays((2,), (1, 3), low=-1.0)]
    [(2,), (1, 3)]
    """
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=shape).astype(dtype) for shape in shapes]


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[np.int64, np.int64]:
    """A random point ``(x, y)`` with ``x_low <= x < x_high`` and ``y_low <= y < y_high`` (int64 values)."""
    for axis, low, high in (("x", x_low, x_high), ("y", y_low, y_high)):
        if high <= low:
            raise LazyNDError(f"rand_coord_2d: {axis}_high {high} must be above {axis}_low {low}")
    x, y = np.random.randint(x_low, x_high, dtype=np.int64), np.random.randint(y_low, y_high, dtype=np.int64)
    return np.int64(x), np.int64(y)


def rand_shape_3d(
    dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False
) -> tuple[int, int, int]:
    """A random 3-D shape with sides in ``1..dim`` (``0..dim`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(np.random.randint(low, dim + 1)) for dim in (dim0, dim1, dim2))  # type: ignore[return-value]


def list_gpus() -> list[int]:
    """The ids of the visible GPUs (``[]`` without one)."""
    return list(range(num_gpus()))


def assert_exception(f: Callable[..., Any], exception_type: type[BaseException], *args: Any, **kwargs: Any) -> None:
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.test_utils.assert_exception(int, ValueError, "x")
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {exception_type.__name__}")


def _host(value: Any) -> np.ndarray:
    return np.array(value.asnumpy() if hasattr(value, "asnumpy") else value, dtype=np.float64)


def _host_copy(value: Any) -> np.ndarray:
    """A NumPy copy of ``value`` in its own dtype (its tolerances are picked by that dtype)."""
    return np.array(value.asnumpy() if hasattr(value, "asnumpy") else value)


def assert_almost_equal_ignore_nan(
    a: Any, b: Any, rtol: float | None = None, atol: float | None = None, names: tuple[str, str] = ("a", "b")
) -> None:
    """:func:`assert_almost_equal` where a NaN in either array matches anything.

    The default tolerances are those of the arrays' own dtypes, as MXNet's (float32 within
    ``rtol=1e-4``, ``atol=1e-3``): NaNs are masked in copies of the arrays, not in float64 ones.

    Examples
    --------
    >>> import numpy as np, lazynd as mx
    >>> mx.test_utils.assert_almost_equal_ignore_nan(np.float32([0.0, np.nan]), np.float32([5e-4, 1.0]))
    """
    a, b = _host_copy(a), _host_copy(b)
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names)


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True) -> None:
    """``numpy.testing.assert_allclose`` of arrays or NDArrays."""
    np.testing.assert_allclose(_host(a), _host(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def same_array(array1: Any, array2: Any) -> bool:
    """Whether two NDArrays are the same memory (one storage, same place and shape), as views can be."""
    if array1.var is not array2.var or array1.shape != array2.shape:
        return False
    array1.wait_to_read()
    array2.wait_to_read()
    return _address(array1.data_array) == _address(array2.data_array)


def _address(data: Any) -> int:
    """The address of a backend array's first element (NumPy or CuPy)."""
    if isinstance(data, np.ndarray):
        return int(data.__array_interface__["data"][0])
    return int(data.data.ptr)


def simple_forward(sym: Any, ctx: Context | None = None, is_train: bool = False, **inputs: Any) -> Any:
    """Run ``sym`` forward on NumPy inputs (by argument name); NumPy outputs (one array for one output)."""
    from .ndarray import array

    executor = sym.bind(ctx or default_context(), args={k: array(v) for k, v in inputs.items()})
    executor.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in executor.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def get_mnist(data_dir: Any = None) -> dict[str, np.ndarray]:
    """MNIST as MXNet's tutorials load it: float32 images (N, 1, 28, 28) in [0, 1], int8 labels.

    Keys ``train_data``, ``train_label``, ``test_data``, ``test_label``; the files are found
    or downloaded by :func:`lazynd.datasets.load_mnist` (``$LAZYND_DATA_DIR``).
    """
    from .datasets import load_mnist

    out = {}
    for split, train in (("train", True), ("test", False)):
        images, labels = load_mnist("mnist", data_dir, train=train)
        out[f"{split}_data"] = images.reshape(len(images), 1, 28, 28).astype(np.float32) / 255
        out[f"{split}_label"] = labels.astype(np.int8)
    return out


def get_mnist_ubyte(data_dir: Any = None) -> None:
    """MXNet's: the four MNIST files uncompressed in ``./data`` under their published names
    (``data/train-images-idx3-ubyte``...), where MXNet's examples point ``MNISTIter``; they come
    from ``$LAZYND_DATA_DIR`` or are downloaded (:func:`lazynd.datasets.extract_dataset`)."""
    from .datasets import extract_dataset

    extract_dataset("mnist", "data", data_dir)


def download(url: str, fname: Any = None, dirname: Any = None, overwrite: bool = False, retries: int = 5) -> str:
    """MXNet's: download ``url`` to ``dirname/fname`` (``fname`` defaults to the URL's last part)
    and return the path; an existing file is kept unless ``overwrite``.  Written atomically; a
    failure after ``retries`` tries raises a :class:`~lazynd.errors.DataError` naming the URL."""
    import os

    from .datasets import download as fetch

    name = fname if fname is not None else url.rstrip("/").split("/")[-1]
    path = os.path.join(dirname, name) if dirname is not None else name
    if dirname is not None:
        os.makedirs(dirname, exist_ok=True)
    return str(fetch(url, path, overwrite=overwrite, retries=retries))


def get_mnist_iterator(batch_size: int, input_shape: tuple[int, ...], num_parts: int = 1, part_index: int = 0) -> tuple:
    """``(train, validation)`` MNIST iterators (``MNISTIter``), flat unless ``input_shape`` is 3-D."""
    from .io import MNISTIter

    def split(train: bool) -> MNISTIter:
        return MNISTIter(
            batch_size=batch_size,
            shuffle=train,
            flat=len(input_shape) != 3,
            train=train,
            num_parts=num_parts,
            part_index=part_index,
            input_shape=input_shape,
        )

    return split(True), split(False)


__all__ = [
    "assert_allclose",
    "assert_almost_equal_ignore_nan",
    "assert_exception",
    "checkShapes",
    "default_dtype",
    "download",
    "get_mnist",
    "get_mnist_ubyte",
    "get_mnist_iterator",
    "list_gpus",
    "rand_shape_3d",
    "rand_coord_2d",
    "random_arrays",
    "random_sample",
    "random_uniform_arrays",
    "same_array",
    "simple_forward",
]
