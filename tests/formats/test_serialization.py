"""nd.save / nd.load with MXNet's format, real MXNet files, atomic saves, remote URLs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx


def test_save_load_dict_and_list_round_trip(tmp_path: Path) -> None:
    data = {"w": mx.nd.arange(6).reshape((2, 3)), "b": mx.nd.ones((3,), dtype="int64")}
    mx.nd.save(str(tmp_path / "d.params"), data)
    loaded = mx.nd.load(str(tmp_path / "d.params"))
    assert set(loaded) == {"w", "b"} and loaded["b"].dtype == np.int64
    np.testing.assert_array_equal(loaded["w"].asnumpy(), data["w"].asnumpy())
    mx.nd.save(str(tmp_path / "l.params"), [mx.nd.zeros((2,)), mx.nd.ones((1,))])
    items = mx.nd.load(str(tmp_path / "l.params"))
    assert isinstance(items, list) and [a.shape for a in items] == [(2,), (1,)]


def test_loads_legacy_mxnet_file(data_dir: Path) -> None:
    arrays = mx.nd.load(str(data_dir / "mxnet" / "legacy_ndarray.v0"))
    assert len(arrays) == 6
    for a in arrays:
        np.testing.assert_array_equal(a.asnumpy(), np.arange(128, dtype=np.float32))


def test_loads_mxnet191_dtypes_and_writes_the_same_bytes(data_dir: Path, tmp_path: Path) -> None:
    expected = json.loads((data_dir / "mxnet" / "mxnet191_dtypes.json").read_text())
    loaded = mx.nd.load(str(data_dir / "mxnet" / "mxnet191_dtypes.params"))
    assert list(loaded) == list(expected)
    rebuilt = {}
    for name, spec in expected.items():
        arr = loaded[name]
        assert np.dtype(arr.dtype).name == spec["dtype"] and list(arr.shape) == spec["shape"]
        np.testing.assert_array_equal(
            arr.asnumpy().reshape(-1), np.array(spec["values"], dtype=spec["dtype"]).reshape(-1)
        )
        rebuilt[name] = mx.nd.array(
            np.array(spec["values"], dtype=spec["dtype"]).reshape(spec["shape"]), dtype=spec["dtype"]
        )
    mx.nd.save(str(tmp_path / "same.params"), rebuilt)
    assert (tmp_path / "same.params").read_bytes() == (data_dir / "mxnet" / "mxnet191_dtypes.params").read_bytes()


def test_loads_mxnet191_list(data_dir: Path) -> None:
    items = mx.nd.load(str(data_dir / "mxnet" / "mxnet191_list.params"))
    assert isinstance(items, list) and len(items) == 2


def test_corrupted_file_raises_format_error_naming_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.params"
    mx.nd.save(str(path), [mx.nd.ones((100,))])
    path.write_bytes(path.read_bytes()[:-17])
    with pytest.raises(mx.FormatError, match="bad.params"):
        mx.nd.load(str(path))


def test_save_rejects_non_ndarray_values(tmp_path: Path) -> None:
    with pytest.raises(mx.LazyNDError, match="'w'"):
        mx.nd.save(str(tmp_path / "x"), {"w": np.ones(3)})
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "data, expected",
    [
        # MXNet 1.9.1: TypeError("save only accept dict str->NDArray or list of NDArray")
        ({"w": np.ones(3)}, TypeError),
        ([mx.nd.ones(1), 3], TypeError),
        ({1: mx.nd.ones(1)}, TypeError),
        # MXNet 1.9.1: ValueError("data needs to either be a NDArray, dict of ... or a list ...")
        (3, ValueError),
        ("x", ValueError),
    ],
)
def test_save_of_what_is_no_ndarray_raises_mxnets_error_type(tmp_path: Path, data, expected) -> None:
    with pytest.raises(expected, match="save: "):
        mx.nd.save(str(tmp_path / "x"), data)
    assert not (tmp_path / "x").exists()


def test_save_and_load_through_fsspec_memory_url() -> None:
    pytest.importorskip("fsspec", reason="fsspec (the remote extra) is not installed")
    mx.nd.save("memory://lazynd-test/a.params", {"x": mx.nd.ones((2,))})
    assert mx.nd.load("memory://lazynd-test/a.params")["x"].asnumpy().tolist() == [1, 1]


def test_mxnet_none_array_is_a_format_error_naming_file_and_array(tmp_path: Path) -> None:
    from lazynd.formats import ndarray_file

    path = tmp_path / "none.params"
    path.write_bytes(ndarray_file.encode({"w": mx.nd.ones((1,)).asnumpy(), "empty": ndarray_file.ArrayRecord(None)}))
    with pytest.raises(mx.FormatError, match=r"none\.params: array 'empty' is MXNet's empty \('none'\) array"):
        mx.nd.load(str(path))
