"""MXNet 1.x's small ``mx.test_utils`` helpers (``lazynd/test_helpers.py``); expected values from MXNet 1.9.1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lazynd as mx

tu = mx.test_utils


def test_random_arrays_are_float32_one_per_shape() -> None:
    a, b = tu.random_arrays((2, 3), ())
    assert a.shape == (2, 3) and a.dtype == np.float32 and b.shape == () and b.dtype == np.float32
    assert tu.random_arrays((4,)).shape == (4,)  # one shape: the array itself
    assert tu.default_dtype() is np.float32


def test_rand_shape_3d_stays_in_bounds() -> None:
    for _ in range(20):
        shape = tu.rand_shape_3d(2, 3, 4)
        assert len(shape) == 3 and all(1 <= s <= d for s, d in zip(shape, (2, 3, 4), strict=True))


def test_list_gpus_counts_the_visible_gpus() -> None:
    assert tu.list_gpus() == list(range(mx.num_gpus()))


def test_assert_exception_passes_only_when_raised() -> None:
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError):
        tu.assert_exception(int, ValueError, "3")


def test_nan_and_allclose_assertions() -> None:
    tu.assert_almost_equal_ignore_nan(mx.nd.array([1.0, np.nan]), np.array([1.0, 5.0]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([2.0, 5.0]))
    tu.assert_allclose(mx.nd.array([1.0, 2.0]), [1.0, 2.0])


def test_assert_almost_equal_ignore_nan_takes_the_arrays_dtype_tolerances() -> None:
    # float32's defaults (rtol=1e-4, atol=1e-3), as MXNet 1.9.1's, not float64's
    tu.assert_almost_equal_ignore_nan(np.float32([0.0, np.nan]), np.float32([5e-4, 1.0]))
    tu.assert_almost_equal_ignore_nan(mx.nd.array([0.0, np.nan]), mx.nd.array([5e-4, 1.0]))
    with pytest.raises(AssertionError, match="rtol=1e-05"):
        tu.assert_almost_equal_ignore_nan(np.float64([0.0, np.nan]), np.float64([5e-4, 1.0]))


def test_assert_almost_equal_ignore_nan_leaves_its_arguments_alone() -> None:
    a = np.float32([1.0, np.nan])
    tu.assert_almost_equal_ignore_nan(a, np.float32([1.0, 2.0]))
    assert np.isnan(a[1])


def test_same_array_is_true_for_the_same_memory_only() -> None:
    x = mx.nd.ones((4, 3))
    # MXNet 1.9.1: True, False, False
    assert tu.same_array(x, x[:]) is True
    assert tu.same_array(x, x.copy()) is False
    assert tu.same_array(x, x[1:]) is False


def test_simple_forward_runs_a_symbol_on_numpy_inputs() -> None:
    a = mx.sym.var("a")
    np.testing.assert_array_equal(tu.simple_forward(a * 2, a=[1, 2]), [2.0, 4.0])  # MXNet 1.9.1: [2. 4.]


def test_get_mnist_gives_mxnets_dictionary(data_dir: Path) -> None:
    mnist = tu.get_mnist(data_dir)
    assert mnist["train_data"].shape == (60000, 1, 28, 28) and mnist["train_data"].dtype == np.float32
    assert mnist["test_data"].shape == (10000, 1, 28, 28) and float(mnist["test_data"].max()) == 1.0
    assert mnist["train_label"].dtype == np.int8
    np.testing.assert_array_equal(mnist["train_label"][:5], [5, 0, 4, 1, 9])


def test_get_mnist_iterator_gives_train_and_validation(data_dir: Path) -> None:
    train, val = tu.get_mnist_iterator(100, (784,))
    assert train.provide_data[0].shape == (100, 784)
    assert val.provide_data[0].shape == (100, 784)


def test_random_shapes_take_allow_zero_size() -> None:
    np.random.seed(3)
    shapes = [tu.rand_shape_2d(1, 1, allow_zero_size=True) for _ in range(40)]
    assert {s[0] for s in shapes} == {0, 1}
    assert all(len(tu.rand_shape_nd(3, 2, allow_zero_size=True)) == 3 for _ in range(5))
    assert all(0 < side for side in tu.rand_shape_nd(3, 2))


def test_assert_almost_equal_takes_mxnets_keywords() -> None:
    assert tu.almost_equal(np.ones(3), np.ones(3), use_broadcast=False)
    with pytest.raises(AssertionError, match=r"first differing indices: \[\(0, 1\), \(0, 2\)\]"):
        tu.assert_almost_equal(np.arange(6.0).reshape(2, 3), np.zeros((2, 3)), mismatches=(2, 2), use_broadcast=True)


def test_get_mnist_ubyte_puts_the_plain_files_where_mxnets_examples_read_them(
    data_dir: Path, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    mx.test_utils.get_mnist_ubyte(data_dir / "mnist")
    names = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert names == [
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
    ]
    assert (tmp_path / "data" / "train-images-idx3-ubyte").stat().st_size == 16 + 60000 * 28 * 28
    it = mx.io.MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte", batch_size=100)
    assert next(iter(it)).data[0].shape == (100, 1, 28, 28)


def test_download_fetches_atomically_keeps_what_is_there_and_names_a_failing_url(tmp_path) -> None:
    import functools
    import http.server
    import threading

    served = tmp_path / "served"
    served.mkdir()
    (served / "weights.bin").write_bytes(b"\x00\x01payload")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/weights.bin"
        path = mx.test_utils.download(url, dirname=str(tmp_path / "models"))
        assert Path(path) == tmp_path / "models" / "weights.bin"
        assert Path(path).read_bytes() == b"\x00\x01payload"
        Path(path).write_bytes(b"kept")  # an existing file is kept unless overwrite
        assert Path(mx.test_utils.download(url, dirname=str(tmp_path / "models"))).read_bytes() == b"kept"
        mx.test_utils.download(url, dirname=str(tmp_path / "models"), overwrite=True)
        assert Path(path).read_bytes() == b"\x00\x01payload"
        missing = url.replace("weights.bin", "absent.bin")
        with pytest.raises(mx.LazyNDError, match=r"absent\.bin.*after 2 tries"):
            mx.test_utils.download(missing, fname=str(tmp_path / "absent.bin"), retries=2)
        assert not (tmp_path / "absent.bin").exists()  # nothing half-written is left
    finally:
        server.shutdown()


def test_random_uniform_arrays_are_a_list_in_range():
    arrays = mx.test_utils.random_uniform_arrays((2, 3), (4,), low=-2.0, high=-1.0)
    assert [a.shape for a in arrays] == [(2, 3), (4,)] and all(a.dtype == np.float32 for a in arrays)
    assert all(np.all((a >= -2.0) & (a < -1.0)) for a in arrays)
    assert isinstance(mx.test_utils.random_uniform_arrays((2,), dtype=np.float64), list)  # MXNet's: a list of one


def test_rand_coord_2d_in_its_ranges_and_empty_ranges_named():
    x, y = mx.test_utils.rand_coord_2d(3, 5, -2, -1)
    assert 3 <= x < 5 and y == -2 and isinstance(x, np.int64)
    with pytest.raises(mx.LazyNDError, match="rand_coord_2d: y_high 1 must be above y_low 1"):
        mx.test_utils.rand_coord_2d(0, 2, 1, 1)


def test_random_sample_draws_as_mxnet_from_a_seeded_numpy() -> None:
    population = list(range(10))
    np.random.seed(0)
    # MXNet 1.9.1 after np.random.seed(0) / seed(1)
    assert tu.random_sample(population, 3) == [2, 8, 4]
    np.random.seed(1)
    assert tu.random_sample(list("abcdef"), 6) == ["c", "b", "e", "a", "d", "f"]
    assert population == list(range(10)) and tu.random_sample(population, 0) == []


def test_random_sample_refuses_k_outside_the_population() -> None:
    with pytest.raises(mx.LazyNDError, match=r"random_sample: k must be in \[0, 3\].*got 4"):
        tu.random_sample([1, 2, 3], 4)


def test_check_shapes_names_both_shapes() -> None:
    tu.checkShapes(np.zeros((2, 3)), mx.nd.zeros((2, 3)))
    with pytest.raises(AssertionError, match=r"a.shape = \(2, 3\) and b.shape = \(3, 2\) are not equal"):
        tu.checkShapes(np.zeros((2, 3)), np.zeros((3, 2)))
