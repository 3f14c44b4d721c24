"""RecordIO bytes: MXNet's own files read and written byte for byte, records holding the magic word, docstrings."""

from __future__ import annotations

import doctest
import gzip
import json
import os
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from recordio_records import MAGIC, read_records, write_records

from lazynd import recordio
from lazynd.formats import recordio_file, recordio_indexed, recordio_pack


@pytest.fixture
def mxnet_dir() -> Path:
    root = os.environ.get("LAZYND_DATA_DIR")
    if not root:
        pytest.skip("LAZYND_DATA_DIR is not set: no real MXNet files to test against")
    return Path(root) / "mxnet"


@pytest.fixture
def mnist50(mxnet_dir: Path):
    reader = recordio.MXIndexedRecordIO(mxnet_dir / "mnist50.idx", mxnet_dir / "mnist50.rec", "r")
    yield reader
    reader.close()


def test_mxnet_magic_payloads_file_reads_back_as_its_payloads(mxnet_dir: Path) -> None:
    expected = json.loads((mxnet_dir / "magic_payloads.json").read_text())
    records = read_records(mxnet_dir / "magic_payloads.rec")
    assert [r.hex() for r in records] == expected


def test_writing_magic_payloads_gives_the_bytes_mxnet_wrote(mxnet_dir: Path, tmp_path: Path) -> None:
    payloads = json.loads((mxnet_dir / "magic_payloads.json").read_text())
    write_records(tmp_path / "out.rec", [bytes.fromhex(p) for p in payloads])
    expected = (mxnet_dir / "magic_payloads.rec").read_bytes()
    assert (tmp_path / "out.rec").read_bytes() == expected


def test_mnist50_headers_carry_mxnet_ids_and_labels(mnist50) -> None:
    headers = [recordio.unpack(mnist50.read_idx(key))[0] for key in mnist50.keys]
    assert mnist50.keys == list(range(50))
    assert [(h.flag, h.label, h.id, h.id2) for h in headers] == [(0, float(i % 10), i, 0) for i in range(50)]


def test_mnist50_images_decode_to_the_mnist_test_digits(mnist50, mxnet_dir: Path) -> None:
    raw = gzip.decompress((mxnet_dir.parent / "mnist/t10k-images-idx3-ubyte.gz").read_bytes())
    digits = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)[:50]
    for key in (0, 7, 31, 49):
        _, image = recordio.unpack_img(mnist50.read_idx(key))
        assert image.shape == (28, 28, 3) and image.dtype == np.uint8
        # JPEG at quality 95 is lossy; a wrong digit differs by ~16 on average.
        assert np.abs(image.astype(int) - digits[key][..., None]).mean() < 3


def test_mnist50_sequential_read_matches_indexed_read(mnist50) -> None:
    sequential = list(mnist50)
    assert len(sequential) == 50
    assert [mnist50.read_idx(k) for k in (3, 0, 49)] == [sequential[i] for i in (3, 0, 49)]


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        MAGIC,
        b"abcd" + MAGIC,
        MAGIC + b"x",
        MAGIC * 3 + b"tail",
        b"ab" + MAGIC + b"cd" + MAGIC,
        b"1234" + MAGIC + b"5678" + MAGIC + b"9",
        bytes(range(256)) * 3 + MAGIC + bytes(5),
    ],
)
def test_payload_holding_the_magic_word_round_trips(tmp_path: Path, payload: bytes) -> None:
    write_records(tmp_path / "a.rec", [b"before", payload, b"after"])
    assert read_records(tmp_path / "a.rec") == [b"before", payload, b"after"]


def test_aligned_magic_word_splits_the_record_into_flagged_parts(
    tmp_path: Path,
) -> None:
    write_records(tmp_path / "a.rec", [b"abcd" + MAGIC + b"ef"])
    data = (tmp_path / "a.rec").read_bytes()
    assert data == (
        MAGIC + struct.pack("<I", 1 << 29 | 4) + b"abcd"
        + MAGIC + struct.pack("<I", 3 << 29 | 2) + b"ef\0\0"
    )  # fmt: skip


def test_unaligned_magic_word_is_not_split(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"a" + MAGIC])
    data = (tmp_path / "a.rec").read_bytes()
    assert data == MAGIC + struct.pack("<I", 5) + b"a" + MAGIC + b"\0\0\0"


def test_random_payloads_with_magic_words_round_trip(tmp_path: Path) -> None:
    rng = random.Random(0)
    payloads = [b"".join(rng.choice([MAGIC, rng.randbytes(rng.randrange(9))]) for _ in range(6)) for _ in range(100)]
    write_records(tmp_path / "a.rec", payloads)
    assert read_records(tmp_path / "a.rec") == payloads


@pytest.mark.parametrize("module", [recordio_file, recordio_indexed, recordio_pack])
def test_docstring_examples_run(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
