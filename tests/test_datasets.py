"""Tests of lazynd.datasets: the IDX reader, finding, downloading and verifying."""

from __future__ import annotations

import doctest
import functools
import gzip
import http.server
import os
import shutil
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from lazynd import datasets
from lazynd.datasets import find_dataset, load_mnist, read_idx, verify_checksums
from lazynd.errors import DataError, FormatError

# Read before any test changes the environment.
REAL_DATA = os.environ.get("LAZYND_DATA_DIR")
FILES = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
]


@pytest.fixture
def real_data() -> Path:
    if not REAL_DATA:
        pytest.skip(
            "LAZYND_DATA_DIR is not set; these tests need the real MNIST and "
            "Fashion-MNIST files (export LAZYND_DATA_DIR=/work/shared/data)"
        )
    return Path(REAL_DATA)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty LAZYND_HOME, with no data dir or mirror configured."""
    monkeypatch.setenv("LAZYND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LAZYND_DATA_DIR", raising=False)
    monkeypatch.delenv("LAZYND_DATASET_MIRROR", raising=False)
    return tmp_path / "home"


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """Serve a folder over HTTP on 127.0.0.1; returns its base URL."""
    servers = []

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    def start(folder: Path) -> str:
        handler = functools.partial(QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def idx_bytes(array: np.ndarray, type_code: int = 0x08) -> bytes:
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_small_dataset(folder: Path, names: dict[str, str], count: int = 3) -> None:
    """Write tiny uncompressed IDX files under the given names."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for published, name in names.items():
        if "images" in published:
            data = rng.integers(0, 256, (count, 28, 28), dtype=np.uint8)
        else:
            data = np.arange(count, dtype=np.uint8) % 10
        (folder / name).write_bytes(idx_bytes(data))


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


# --- read_idx --------------------------------------------------------------


def test_read_idx_reads_gzipped_labels(real_data: Path) -> None:
    labels = read_idx(real_data / "mnist" / "t10k-labels-idx1-ubyte.gz")
    assert labels.dtype == np.uint8 and labels.shape == (10000,)
    assert labels[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]


def test_read_idx_uncompressed_copy_equals_gzipped(real_data: Path, tmp_path: Path) -> None:
    source = real_data / "mnist" / "t10k-images-idx3-ubyte.gz"
    plain = tmp_path / "t10k-images-idx3-ubyte"
    plain.write_bytes(gzip.decompress(source.read_bytes()))
    expected = read_idx(source)
    assert expected.shape == (10000, 28, 28)
    np.testing.assert_array_equal(read_idx(plain), expected)


def test_read_idx_detects_compression_from_content_not_name(tmp_path: Path) -> None:
    data = np.arange(6, dtype=np.uint8).reshape(2, 3)
    plain_named_gz = tmp_path / "plain.gz"
    plain_named_gz.write_bytes(idx_bytes(data))
    gzip_named_plain = tmp_path / "compressed-idx2-ubyte"
    gzip_named_plain.write_bytes(gzip.compress(idx_bytes(data)))
    np.testing.assert_array_equal(read_idx(plain_named_gz), data)
    np.testing.assert_array_equal(read_idx(gzip_named_plain), data)


@pytest.mark.parametrize(
    ("type_code", "dtype"),
    [
        (0x08, "u1"),
        (0x09, "i1"),
        (0x0B, "i2"),
        (0x0C, "i4"),
        (0x0D, "f4"),
        (0x0E, "f8"),
    ],
)
def test_read_idx_reads_every_type_big_endian(tmp_path: Path, type_code: int, dtype: str) -> None:
    data = (np.arange(24).reshape(2, 3, 4) - 12).astype(dtype) * 3
    path = tmp_path / "data.idx"
    path.write_bytes(idx_bytes(data, type_code))
    result = read_idx(path)
    assert result.dtype == np.dtype(dtype) and result.dtype.isnative
    np.testing.assert_array_equal(result, data)
    assert result.flags.writeable


GOOD = idx_bytes(np.arange(20, dtype=np.uint8).reshape(2, 10))


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "truncated in the magic number"),
        (GOOD[:6], "truncated in dims"),
        (GOOD[:-1], "truncated"),
        (GOOD + b"\0", "trailing bytes"),
        (b"\0\0\x07\x02" + GOOD[4:], "not an IDX file"),
        (b"\x01\0\x08\x02" + GOOD[4:], "not an IDX file"),
        (gzip.compress(GOOD[:-3]), "truncated"),
        (gzip.compress(GOOD + b"xyz"), "trailing bytes"),
        (gzip.compress(GOOD)[:-10], "gzip"),
        (
            gzip.compress(b"\0\0\x08\x03" + b"\xff" * 12),
            r"more than a \d+-byte gzip file",
        ),
    ],
    ids=[
        "empty",
        "short-header",
        "short-data",
        "extra-data",
        "bad-type",
        "bad-magic",
        "gzip-short-data",
        "gzip-extra-data",
        "gzip-cut",
        "gzip-huge-dims",
    ],
)
def test_read_idx_rejects_bad_file(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad-idx2-ubyte"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=problem) as info:
        read_idx(path)
    assert str(path) in str(info.value)


def test_read_idx_rejects_corrupted_gzip_payload(real_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    shutil.copy(real_data / "mnist" / path.name, path)
    flip_byte(path, path.stat().st_size // 2)
    with pytest.raises(FormatError, match="gzip") as info:
        read_idx(path)
    assert str(path) in str(info.value)


def test_read_idx_rejects_truncated_real_gzip(real_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    path.write_bytes((real_data / "mnist" / path.name).read_bytes()[:500_000])
    with pytest.raises(FormatError, match="corrupt or truncated gzip"):
        read_idx(path)


# --- load_mnist and verify_checksums on the real files ---------------------


@pytest.mark.parametrize(
    ("name", "train", "count", "first_labels"),
    [
        ("mnist", True, 60000, [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]),
        ("mnist", False, 10000, [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]),
        ("fashion-mnist", True, 60000, [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]),
        ("fashion-mnist", False, 10000, [9, 2, 1, 1, 6, 1, 4, 6, 5, 7]),
    ],
)
def test_load_mnist_returns_real_images_and_labels(
    real_data: Path, name: str, train: bool, count: int, first_labels: list[int]
) -> None:
    images, labels = load_mnist(name, data_dir=real_data / name, train=train)
    assert images.shape == (count, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (count,) and labels.dtype == np.uint8
    assert labels[:10].tolist() == first_labels
    assert images.min() == 0 and images.max() == 255


def test_load_mnist_class_counts_and_pixel_mean_match_published(
    real_data: Path,
) -> None:
    images, labels = load_mnist("mnist", data_dir=real_data, train=True)
    counts = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert np.bincount(labels).tolist() == counts
    assert images.mean() / 255 == pytest.approx(0.1307, abs=1e-4)


def test_load_mnist_finds_data_through_env_var(real_data: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZYND_DATA_DIR", str(real_data))
    assert find_dataset("fashion-mnist") == real_data / "fashion-mnist"
    _, labels = load_mnist("fashion-mnist", train=False)
    assert labels[:3].tolist() == [9, 2, 1]
    assert not home.exists()


def test_load_mnist_caches_read_only_arrays(real_data: Path) -> None:
    first = load_mnist("mnist", data_dir=real_data, train=False)
    second = load_mnist("mnist", data_dir=real_data, train=False)
    assert first[0] is second[0] and first[1] is second[1]
    with pytest.raises(ValueError):
        first[1][0] = 3


def test_load_mnist_rereads_a_replaced_file(tmp_path: Path) -> None:
    names = {name: name.removesuffix(".gz") for name in FILES}
    write_small_dataset(tmp_path, names)
    assert load_mnist(data_dir=tmp_path)[1].tolist() == [0, 1, 2]
    labels = tmp_path / "train-labels-idx1-ubyte"
    labels.write_bytes(idx_bytes(np.array([9, 8, 7], dtype=np.uint8)))
    os.utime(labels, ns=(0, 10**18))  # a new mtime, whatever the clock resolution
    assert load_mnist(data_dir=tmp_path)[1].tolist() == [9, 8, 7]


def test_load_mnist_reads_mxnet_spelling_uncompressed(tmp_path: Path) -> None:
    names = {name: name.removesuffix(".gz").replace("-idx", ".idx") for name in FILES}
    write_small_dataset(tmp_path / "mnist", names, count=4)
    images, labels = load_mnist("mnist", data_dir=tmp_path, train=False)
    assert images.shape == (4, 28, 28) and labels.tolist() == [0, 1, 2, 3]


def test_load_mnist_rejects_labels_not_matching_images(tmp_path: Path) -> None:
    write_small_dataset(tmp_path, {name: name for name in FILES})
    (tmp_path / FILES[1]).write_bytes(idx_bytes(np.zeros(5, dtype=np.uint8)))
    with pytest.raises(FormatError, match="expected 3 uint8 labels"):
        load_mnist(data_dir=tmp_path)


def test_verify_checksums_accepts_real_files(real_data: Path) -> None:
    for name in ("mnist", "fashion-mnist"):
        checked = verify_checksums(name, real_data / name)
        assert sorted(path.name for path in checked) == sorted(FILES)


def test_verify_checksums_rejects_modified_file(real_data: Path, tmp_path: Path) -> None:
    for name in FILES:
        shutil.copy(real_data / "mnist" / name, tmp_path / name)
    flip_byte(tmp_path / "t10k-labels-idx1-ubyte.gz", 100)
    with pytest.raises(DataError, match=r"t10k-labels-idx1-ubyte\.gz: md5 is"):
        verify_checksums("mnist", tmp_path)


def test_find_dataset_rejects_unknown_name() -> None:
    with pytest.raises(DataError, match="unknown dataset 'cifar'"):
        find_dataset("cifar")


def test_find_dataset_without_download_says_where_to_put_files(home: Path) -> None:
    with pytest.raises(DataError) as info:
        find_dataset("mnist", download=False)
    message = str(info.value)
    assert all(name in message for name in FILES)
    assert "$LAZYND_DATA_DIR/mnist" in message and "unset" in message
    assert str(home / "datasets" / "mnist") in message


# --- downloads from a local HTTP server ------------------------------------


@pytest.fixture
def mirror(real_data: Path, tmp_path: Path) -> Path:
    """A folder to serve, holding mnist/ with copies of the real files."""
    folder = tmp_path / "mirror" / "mnist"
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copy(real_data / "mnist" / name, folder / name)
    return folder.parent


def test_download_fetches_verified_files(home: Path, mirror: Path, serve) -> None:
    url = serve(mirror)
    folder = find_dataset("mnist", mirrors=[url + "/{name}/"])
    assert folder == home / "datasets" / "mnist"
    assert sorted(path.name for path in folder.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (folder / name).read_bytes() == (mirror / "mnist" / name).read_bytes()
    assert load_mnist("mnist", train=False)[1][:3].tolist() == [7, 2, 1]


def test_download_tries_next_mirror_from_env_var(
    home: Path, mirror: Path, serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    empty = serve(tmp_path / "empty")  # answers 404
    good = serve(mirror) + "/mnist"
    monkeypatch.setenv("LAZYND_DATASET_MIRROR", f"{closed_port_url()} {empty},{good}")
    folder = find_dataset("mnist")
    assert verify_checksums("mnist", folder)


def test_download_into_data_dir(mirror: Path, serve, tmp_path: Path) -> None:
    target = tmp_path / "mine"
    url = serve(mirror / "mnist")
    assert find_dataset("mnist", data_dir=target, mirrors=[url]) == target
    assert sorted(path.name for path in target.iterdir()) == sorted(FILES)


def test_download_rejects_checksum_mismatch(home: Path, mirror: Path, serve) -> None:
    flip_byte(mirror / "mnist" / "train-labels-idx1-ubyte.gz", 1000)
    with pytest.raises(DataError) as info:
        find_dataset("mnist", mirrors=[serve(mirror) + "/mnist"])
    message = str(info.value)
    assert "could not download train-labels-idx1-ubyte.gz" in message
    assert "md5 is" in message and "d53e105ee54ea40749a09fcbcd1e9432" in message
    folder = home / "datasets" / "mnist"
    # The bad file and every temporary file are gone; the good files stay.
    assert sorted(path.name for path in folder.iterdir()) == sorted(set(FILES) - {"train-labels-idx1-ubyte.gz"})


def test_download_offline_says_which_files_and_where(home: Path) -> None:
    with pytest.raises(DataError) as info:
        find_dataset("fashion-mnist", mirrors=[closed_port_url()])
    message = str(info.value)
    assert all(name in message for name in FILES)
    assert message.count("Connection refused") == 1  # the dead mirror is tried once
    assert "$LAZYND_DATA_DIR/fashion-mnist" in message
    assert str(home / "datasets" / "fashion-mnist") in message
    assert list((home / "datasets" / "fashion-mnist").iterdir()) == []


def test_module_examples_run() -> None:
    result = doctest.testmod(datasets)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")
def test_downloaded_files_get_the_umask_mode(mirror: Path, serve, tmp_path: Path) -> None:
    target = tmp_path / "mine"
    previous = os.umask(0o027)
    try:
        find_dataset("mnist", data_dir=target, mirrors=[serve(mirror / "mnist")])
    finally:
        os.umask(previous)
    assert {(path.name, path.stat().st_mode & 0o777) for path in target.iterdir()} == {(name, 0o640) for name in FILES}


def test_read_idx_zero_dim_beside_huge_dims_is_a_format_error(tmp_path: Path) -> None:
    # found by the reader fuzz test: 0 x 2**32-1 x 2**32-1 x 2**32-1 holds no data, but NumPy refuses it
    path = tmp_path / "odd-idx4-ubyte"
    path.write_bytes(bytes([0, 0, 0x0D, 4]) + struct.pack(">4I", 0, 2**32 - 1, 2**32 - 1, 2**32 - 1))
    with pytest.raises(FormatError, match="cannot represent") as info:
        read_idx(path)
    assert str(path) in str(info.value)
