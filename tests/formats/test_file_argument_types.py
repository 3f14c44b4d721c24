"""Readers and writers of files refuse a file name or record data of the wrong type by name.

The errors are LazyNDErrors that are also the built-in exceptions MXNet raises there
(``TypeError`` for a wrong type, ``KeyError`` for a key an index lacks).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, ArgumentValueError, MissingKeyError

# the calls that take a file name, each given the name to try
FILE_CALLS = [
    pytest.param(lambda name: mx.nd.save(name, [mx.nd.ones(2)]), id="nd.save"),
    pytest.param(lambda name: mx.nd.load(name), id="nd.load"),
    pytest.param(lambda name: mx.sym.load(name), id="sym.load"),
    pytest.param(lambda name: mx.sym.Variable("x").save(name), id="Symbol.save"),
    pytest.param(lambda name: mx.recordio.MXRecordIO(name, "r"), id="MXRecordIO-r"),
    pytest.param(lambda name: mx.recordio.MXRecordIO(name, "w"), id="MXRecordIO-w"),
]


@pytest.mark.parametrize("name", [5, None, b"/tmp/x.params"], ids=["int", "None", "bytes"])
@pytest.mark.parametrize(
    "call",
    [
        *FILE_CALLS,
        pytest.param(lambda name: mx.recordio.MXIndexedRecordIO(name, "/tmp/x.rec", "r"), id="MXIndexedRecordIO"),
    ],
)
def test_a_file_name_that_is_not_a_str_path_is_refused_by_type(call: Callable[[Any], Any], name: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=f"a file name must be a str path or URL, got {type(name).__name__}"):
        call(name)


def test_a_pathlib_path_is_a_file_name(tmp_path: Path) -> None:
    mx.nd.save(tmp_path / "a.params", [mx.nd.ones(2)])
    assert mx.nd.load(tmp_path / "a.params")[0].asnumpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("text", [5, None], ids=["int", "None"])
def test_load_json_refuses_what_is_not_text(text: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="load_json: the JSON text must be a str or bytes"):
        mx.sym.load_json(text)


@pytest.mark.parametrize("data", ["abc", 5], ids=["str", "int"])
def test_record_writer_refuses_data_that_is_not_bytes(tmp_path: Path, data: Any) -> None:
    with mx.recordio.MXRecordIO(str(tmp_path / "a.rec"), "w") as writer:
        with pytest.raises(ArgumentTypeError, match="write: record data must be bytes-like; given"):
            writer.write(data)


def test_pack_and_unpack_refuse_a_payload_that_is_not_bytes() -> None:
    header = mx.recordio.IRHeader(0, 1.0, 0, 0)
    with pytest.raises(ArgumentTypeError, match="pack: record data must be bytes-like; given str"):
        mx.recordio.pack(header, "payload")
    with pytest.raises(ArgumentTypeError, match="unpack: record data must be bytes-like; given str"):
        mx.recordio.unpack("x" * 40)


def test_pack_refuses_a_header_that_is_not_four_fields() -> None:
    with pytest.raises(ArgumentTypeError, match=r"header must be an IRHeader \(flag, label, id, id2\)"):
        mx.recordio.pack((1, 2), b"payload")


def test_reading_a_key_the_index_lacks_is_a_key_error_naming_the_index(tmp_path: Path) -> None:
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    with mx.recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        writer.write_idx(0, b"zero")
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    with pytest.raises(MissingKeyError, match=r"key 5 is not in index .*a\.idx \(1 keys\)") as caught:
        reader.read_idx(5)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(MissingKeyError, match=r"key \[0\] is not in index"):
        reader.read_idx([0])  # unhashable: no index holds it
    reader.close()


def test_write_atomic_refuses_data_that_is_not_bytes(tmp_path: Path) -> None:
    from lazynd.formats.fileio import write_atomic

    with pytest.raises(ArgumentTypeError, match="write_atomic: data must be bytes-like"):
        write_atomic(str(tmp_path / "a.bin"), "text")
    assert not (tmp_path / "a.bin").exists()


def test_the_ndarray_file_encoder_refuses_names_and_containers_by_type() -> None:
    from lazynd.formats import ndarray_file

    with pytest.raises(ArgumentTypeError, match="array names must be str, got int"):
        ndarray_file.encode({1: mx.nd.ones(2).asnumpy()})  # type: ignore[dict-item]
    with pytest.raises(ArgumentTypeError, match="expected a list or dict of arrays, got int"):
        ndarray_file.encode(5)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", FILE_CALLS)
def test_a_file_name_holding_a_nul_byte_is_refused_naming_it(tmp_path: Path, call: Callable[[Any], Any]) -> None:
    # open() raised a bare ValueError ("embedded null byte") that named no file
    with pytest.raises(ArgumentValueError, match=r"a\\x00b': a file name cannot hold a NUL byte"):
        call(str(tmp_path / "a\0b"))


def test_an_image_list_naming_a_file_with_a_nul_byte_is_refused_naming_it(tmp_path: Path) -> None:
    # a damaged .lst line: the image's name is read from the file, so the bare ValueError came from a file
    (tmp_path / "a.lst").write_bytes(b"0\t1.0\tx\x00.png\n")
    it = mx.image.ImageIter(1, (3, 8, 8), path_imglist=str(tmp_path / "a.lst"), path_root=str(tmp_path))
    with pytest.raises(ArgumentValueError, match=r"x\\x00\.png': a file name cannot hold a NUL byte"):
        it.next()
