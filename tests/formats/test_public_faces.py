"""The formats keep their public faces: ``mx.recordio``, ``lazynd.fileio``, ``mx.nd.save``/``load``."""

from __future__ import annotations

import importlib

import pytest

import lazynd as mx
from lazynd.formats import fileio, recordio_file, recordio_indexed, recordio_pack


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("MXRecordIO", recordio_file),
        ("MXIndexedRecordIO", recordio_indexed),
        ("IRHeader", recordio_pack),
        ("pack", recordio_pack),
        ("unpack", recordio_pack),
        ("pack_img", recordio_pack),
        ("unpack_img", recordio_pack),
    ],
)
def test_mx_recordio_hands_on_the_formats_names(name: str, module) -> None:
    assert getattr(mx.recordio, name) is getattr(module, name)


def test_lazynd_fileio_hands_on_the_writer_and_reader() -> None:
    face = importlib.import_module("lazynd.fileio")
    for name in face.__all__:
        assert getattr(face, name) is getattr(fileio, name)
    assert {"open_atomic", "write_atomic", "open_for_read", "open_for_stream"} <= set(face.__all__)


def test_nd_save_and_load_round_trip_through_the_formats(tmp_path) -> None:
    path = tmp_path / "x.params"
    mx.nd.save(str(path), {"w": mx.nd.ones((2, 3))})
    assert mx.nd.load(str(path))["w"].asnumpy().tolist() == [[1.0] * 3] * 2
