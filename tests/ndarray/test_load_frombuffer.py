"""``mx.nd.load_frombuffer``: ``nd.load`` from the bytes of a saved file."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

# MXNet 1.9.1: mx.nd.save(path, {'b': mx.nd.array([5, 7], dtype='int32')}), the file's bytes
MXNET_FILE = bytes.fromhex(
    "120100000000000000000000000000000100000000000000c9fa93f900000000010000000200000000000000"
    "01000000000000000400000005000000070000000100000000000000010000000000000062"
)


def test_reads_the_bytes_mxnet_saved() -> None:
    loaded = mx.nd.load_frombuffer(MXNET_FILE)
    assert list(loaded) == ["b"]
    assert loaded["b"].dtype == np.int32
    np.testing.assert_array_equal(loaded["b"].asnumpy(), [5, 7])


def test_round_trips_what_save_wrote(tmp_path) -> None:
    path = tmp_path / "x.params"
    mx.nd.save(str(path), [mx.nd.array([[1, 2], [3, 4]]), mx.nd.ones((3,), dtype="float64")])
    first, second = mx.nd.load_frombuffer(path.read_bytes())
    np.testing.assert_array_equal(first.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert second.dtype == np.float64


def test_bad_bytes_are_a_format_error() -> None:
    with pytest.raises(mx.FormatError, match="<buffer>: truncated"):
        mx.nd.load_frombuffer(b"garbage")
    with pytest.raises(mx.LazyNDError, match="load_frombuffer: buf must be bytes"):
        mx.nd.load_frombuffer("not bytes")  # type: ignore[arg-type]
