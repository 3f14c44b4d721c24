"""Tests for lazynd.formats.fileio: atomic local writes and fsspec-backed URLs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from typing import ClassVar

import numpy as np
import pytest

from lazynd.errors import LazyNDError
from lazynd.formats import fileio, fileio_temporary


def _failing_chunks():
    yield b"new start"
    raise RuntimeError("producer failed midway")


def _listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


# --- local paths -----------------------------------------------------------


def test_write_atomic_then_read_returns_the_bytes(tmp_path):
    path = tmp_path / "data.bin"
    fileio.write_atomic(path, b"\x00\x01payload")
    assert fileio.open_for_read(path) == b"\x00\x01payload"


def test_write_atomic_joins_chunks_of_any_buffer_type(tmp_path):
    path = str(tmp_path / "data.bin")
    chunks = [b"ab", bytearray(b"cd"), memoryview(b"ef"), np.array([1], dtype="<u2")]
    fileio.write_atomic(path, iter(chunks))
    assert fileio.open_for_read(path) == b"abcdef\x01\x00"


def test_write_atomic_replaces_an_existing_file(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old contents that are longer")
    fileio.write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert _listing(tmp_path) == ["data.bin"]


def test_failing_data_keeps_old_file_and_removes_temporary(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="producer failed midway"):
        fileio.write_atomic(path, _failing_chunks())
    assert path.read_bytes() == b"old"
    assert _listing(tmp_path) == ["data.bin"]


def test_failing_replace_keeps_old_file_and_removes_temporary(tmp_path, monkeypatch):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")

    def refuse_replace(source, target):
        raise OSError("simulated failure of os.replace")

    monkeypatch.setattr(fileio.os, "replace", refuse_replace)
    with pytest.raises(OSError, match="simulated failure"):
        fileio.write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert _listing(tmp_path) == ["data.bin"]


@pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")
def test_new_file_gets_permissions_from_umask_like_open(tmp_path):
    previous = os.umask(0o027)
    try:
        fileio.write_atomic(tmp_path / "data.bin", b"x")
    finally:
        os.umask(previous)
    assert (tmp_path / "data.bin").stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")
def test_replacing_a_file_keeps_its_permission_bits(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    path.chmod(0o600)
    fileio.write_atomic(path, b"new")
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_bytes() == b"new"


def test_open_atomic_replaces_the_target_only_at_commit(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    writer = fileio.open_atomic(path)
    writer.write(b"new")
    assert path.read_bytes() == b"old"
    [temporary] = [n for n in _listing(tmp_path) if n != "data.bin"]
    assert temporary.startswith(f"{fileio.TEMPORARY_PREFIX}{os.getpid()}-")
    assert temporary.endswith("-data.bin")
    writer.commit()
    assert path.read_bytes() == b"new"
    assert _listing(tmp_path) == ["data.bin"]


def test_open_atomic_discards_on_an_exception(tmp_path):
    path = tmp_path / "data.bin"
    with pytest.raises(RuntimeError, match="stop"), fileio.open_atomic(path) as writer:
        writer.write(b"half")
        raise RuntimeError("stop")
    assert _listing(tmp_path) == []
    with pytest.raises(ValueError, match="already committed or discarded"):
        writer.write(b"more")


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _temporary_of(pid: int, name: str, machine: str | None = None) -> str:
    machine = machine or fileio_temporary._MACHINE
    return f"{fileio.TEMPORARY_PREFIX}{pid}-{machine}-0123abcd-{name}"


def test_a_save_removes_temporaries_of_dead_processes_only(tmp_path):
    dead = _temporary_of(_dead_pid(), "old.params")
    alive = _temporary_of(os.getppid(), "busy.params")
    other_machine = "00000000" if fileio_temporary._MACHINE != "00000000" else "11111111"
    elsewhere = _temporary_of(_dead_pid(), "remote.params", machine=other_machine)
    unrelated = ".lazynd-tmp-notes.txt"
    for name in (dead, alive, elsewhere, unrelated):
        (tmp_path / name).write_bytes(b"left over")
    fileio.write_atomic(tmp_path / "new.params", b"x")
    assert _listing(tmp_path) == sorted([alive, elsewhere, unrelated, "new.params"])


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_temporary_of_a_save_killed_with_sigkill_goes_at_the_next_save(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        from lazynd.formats import fileio, fileio_temporary
        writer = fileio.open_atomic({str(tmp_path / "model.params")!r})
        writer.write(b"half of a model")
        print("writing", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    [left] = _listing(tmp_path)
    assert left.startswith(f"{fileio.TEMPORARY_PREFIX}{child.pid}-") and left.endswith("-model.params")
    fileio.write_atomic(tmp_path / "other.params", b"x")
    assert _listing(tmp_path) == ["other.params"]


def test_long_names_still_make_a_temporary(tmp_path):
    path = tmp_path / ("n" * 250)
    fileio.write_atomic(path, b"x")
    assert path.read_bytes() == b"x"


def test_open_for_stream_reads_local_and_memory_files(tmp_path):
    fileio.write_atomic(tmp_path / "a.bin", b"0123456789")
    with fileio.open_for_stream(tmp_path / "a.bin") as handle:
        handle.seek(4)
        assert handle.read(3) == b"456"
    pytest.importorskip("fsspec")
    uri = f"memory://lazynd-tests/{uuid.uuid4().hex}/a.bin"
    fileio.write_atomic(uri, b"0123456789")
    with fileio.open_for_stream(uri) as handle:
        handle.seek(7)
        assert handle.read() == b"789"


def test_write_atomic_rejects_text(tmp_path):
    with pytest.raises(TypeError, match="got str"):
        fileio.write_atomic(tmp_path / "data.bin", "text")
    assert _listing(tmp_path) == []


def test_file_url_is_written_as_a_local_path(tmp_path):
    path = tmp_path / "data.bin"
    fileio.write_atomic(path.as_uri(), b"via url")
    assert path.read_bytes() == b"via url"
    assert fileio.open_for_read(path.as_uri()) == b"via url"


def test_storage_options_for_a_local_path_raise(tmp_path):
    with pytest.raises(LazyNDError, match="remote URLs only"):
        fileio.write_atomic(tmp_path / "data.bin", b"x", storage_options={"anon": True})


def test_reading_a_missing_local_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        fileio.open_for_read(tmp_path / "missing.bin")


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://bucket/key.params", True),
        ("memory://x", True),
        ("file:///tmp/x", True),
        ("simplecache::s3://bucket/key", True),
        ("/tmp/x.params", False),
        ("relative/dir/x.params", False),
        ("C:\\models\\x.params", False),
        ("C://models/x.params", False),
    ],
)
def test_is_url_tells_urls_from_paths(uri, expected):
    assert fileio.is_url(uri) is expected


# --- fsspec URLs -----------------------------------------------------------


def test_memory_url_round_trip():
    pytest.importorskip("fsspec")
    uri = f"memory://lazynd-tests/{uuid.uuid4().hex}/data.bin"
    fileio.write_atomic(uri, [b"in ", b"memory"])
    assert fileio.open_for_read(uri) == b"in memory"


def test_failing_data_never_touches_the_remote_object():
    pytest.importorskip("fsspec")
    uri = f"memory://lazynd-tests/{uuid.uuid4().hex}/data.bin"
    fileio.write_atomic(uri, b"old")
    with pytest.raises(RuntimeError, match="producer failed midway"):
        fileio.write_atomic(uri, _failing_chunks())
    assert fileio.open_for_read(uri) == b"old"


def test_missing_remote_object_raises_file_not_found():
    pytest.importorskip("fsspec")
    with pytest.raises(FileNotFoundError):
        fileio.open_for_read(f"memory://lazynd-tests/{uuid.uuid4().hex}/missing.bin")


def test_url_without_fsspec_asks_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(LazyNDError, match="pip install fsspec s3fs"):
        fileio.open_for_read("s3://bucket/key.params")


def test_url_without_its_backend_names_the_package(monkeypatch):
    pytest.importorskip("fsspec")
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    with pytest.raises(LazyNDError, match="pip install gcsfs"):
        fileio.write_atomic("gcs://bucket/key.params", b"x")


def test_unknown_protocol_raises_lazynd_error():
    pytest.importorskip("fsspec")
    with pytest.raises(LazyNDError, match="nosuchprotocol"):
        fileio.open_for_read("nosuchprotocol://x/y")


# --- filesystems that are not object stores: temporary name, then rename -----


@pytest.fixture
def rename_filesystem(monkeypatch):
    """A memory filesystem registered under a protocol that is not an object store."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    class RenameFileSystem(MemoryFileSystem):
        protocol = "lazyndrenamefs"
        store: ClassVar[dict] = {}
        pseudo_dirs: ClassVar[list[str]] = [""]
        fail_rename = False

        @classmethod
        def _strip_protocol(cls, path):
            return MemoryFileSystem._strip_protocol(path.removeprefix("lazyndrenamefs://"))

        def mv(self, path1, path2, **kwargs):
            if self.fail_rename:
                raise OSError("simulated failure of rename")
            return super().mv(path1, path2, **kwargs)

    fsspec.register_implementation("lazyndrenamefs", RenameFileSystem, clobber=True)
    yield RenameFileSystem
    RenameFileSystem.store.clear()
    RenameFileSystem.clear_instance_cache()


def test_rename_filesystem_write_leaves_only_the_target(rename_filesystem):
    fileio.write_atomic("lazyndrenamefs://dir/data.bin", b"renamed into place")
    assert fileio.open_for_read("lazyndrenamefs://dir/data.bin") == b"renamed into place"
    assert list(rename_filesystem.store) == ["/dir/data.bin"]


def test_rename_filesystem_failed_rename_keeps_old_file(rename_filesystem):
    fileio.write_atomic("lazyndrenamefs://dir/data.bin", b"old")
    rename_filesystem.fail_rename = True
    with pytest.raises(OSError, match="simulated failure of rename"):
        fileio.write_atomic("lazyndrenamefs://dir/data.bin", b"new")
    assert fileio.open_for_read("lazyndrenamefs://dir/data.bin") == b"old"
    assert list(rename_filesystem.store) == ["/dir/data.bin"]


# --- S3, against a local moto server ---------------------------------------


@pytest.fixture(scope="module")
def s3_options():
    """Storage options pointing s3fs at a moto S3 server on a free local port."""
    pytest.importorskip("s3fs", reason="the S3 test needs s3fs (pip install s3fs)")
    moto_server = pytest.importorskip(
        "moto.server",
        reason="the S3 test needs moto's server (pip install 'moto[server]')",
    )
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {
            "endpoint_url": f"http://{host}:{port}",
            "region_name": "eu-west-1",
        },
    }
    import s3fs

    s3fs.S3FileSystem(**options).mkdir("lazynd-bucket")
    yield options
    server.stop()


def test_s3_round_trip(s3_options):
    uri = "s3://lazynd-bucket/models/data.bin"
    payload = bytes(range(256)) * 1000
    fileio.write_atomic(uri, [payload[:1000], payload[1000:]], storage_options=s3_options)
    assert fileio.open_for_read(uri, storage_options=s3_options) == payload


def test_s3_failing_data_keeps_old_object(s3_options):
    uri = "s3://lazynd-bucket/models/kept.bin"
    fileio.write_atomic(uri, b"old", storage_options=s3_options)
    with pytest.raises(RuntimeError, match="producer failed midway"):
        fileio.write_atomic(uri, _failing_chunks(), storage_options=s3_options)
    assert fileio.open_for_read(uri, storage_options=s3_options) == b"old"


def test_a_missing_file_is_a_lazynd_error_naming_it_and_a_file_not_found_error(tmp_path) -> None:
    import lazynd as mx

    missing = tmp_path / "none.params"
    with pytest.raises(mx.MissingFileError, match="none.params") as caught:
        mx.nd.load(str(missing))
    assert isinstance(caught.value, mx.LazyNDError) and isinstance(caught.value, FileNotFoundError)


def test_saving_into_a_missing_folder_names_the_folder_not_the_temporary(tmp_path) -> None:
    import lazynd as mx

    target = tmp_path / "no" / "such" / "x.params"
    with pytest.raises(mx.MissingFileError, match="no such folder") as caught:
        mx.nd.save(str(target), [mx.nd.zeros(2)])
    assert caught.value.filename == str(tmp_path / "no" / "such")
    assert fileio_temporary.TEMPORARY_PREFIX not in str(caught.value)


def test_saving_over_a_folder_raises_a_lazynd_error_naming_it(tmp_path) -> None:
    import lazynd as mx

    with pytest.raises(LazyNDError, match="it is a folder") as caught:
        mx.nd.save(str(tmp_path), [mx.nd.zeros(2)])
    assert str(tmp_path) in str(caught.value) and fileio_temporary.TEMPORARY_PREFIX not in str(caught.value)
    assert os.listdir(tmp_path) == []


def test_loading_a_folder_raises_a_lazynd_error_naming_it(tmp_path) -> None:
    import lazynd as mx

    with pytest.raises(LazyNDError, match="it is a folder"):
        mx.nd.load(str(tmp_path))
    with pytest.raises(LazyNDError, match="it is a folder"):
        mx.recordio.MXRecordIO(str(tmp_path), "r")
