"""Every file lazynd writes goes through lazynd.formats.fileio: the umask's mode, no temporaries left, fsspec URLs.

One writer per case, across the packages: NDArray lists, symbol JSON,
checkpoints, optimizer states, profiler traces, RecordIO files and indexes,
image lists.  Dataset downloads are covered in test_datasets.py.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
import lazynd_sym
from lazynd import profiler, recordio
from lazynd.formats import fileio
from lazynd.optimizer.states_file import load_states
from lazynd.tools import im2rec


def _net() -> lazynd_sym.Symbol:
    return lazynd_sym.FullyConnected(lazynd_sym.Variable("data"), num_hidden=2, name="fc")


def _save_params(folder: Path) -> list[str]:
    mx.nd.save(str(folder / "w.params"), {"w": mx.nd.ones((2,))})
    return ["w.params"]


def _save_symbol(folder: Path) -> list[str]:
    _net().save(str(folder / "net-symbol.json"))
    return ["net-symbol.json"]


def _save_checkpoint(folder: Path) -> list[str]:
    mx.model.save_checkpoint(str(folder / "net"), 3, _net(), {"fc_weight": mx.nd.ones((2, 3))}, {})
    return ["net-0003.params", "net-symbol.json"]


def _save_optimizer_states_to(uri: str) -> None:
    kv = lazynd_kv.create("local")
    kv.init(0, mx.nd.ones((2,)))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    kv.push(0, mx.nd.ones((2,)))
    kv.save_optimizer_states(uri)


def _save_optimizer_states(folder: Path) -> list[str]:
    _save_optimizer_states_to(str(folder / "opt.states"))
    return ["opt.states"]


def _save_trace(folder: Path) -> list[str]:
    profiler.set_config(mode="all", filename=str(folder / "trace.json"))
    profiler.set_state("run")
    (mx.nd.ones((2,)) + 1).wait_to_read()
    profiler.dump()
    return ["trace.json"]


def _save_records(folder: Path) -> list[str]:
    with recordio.MXIndexedRecordIO(str(folder / "a.idx"), str(folder / "a.rec"), "w") as writer:
        writer.write_idx(0, b"record")
    return ["a.idx", "a.rec"]


def _save_image_list(folder: Path) -> list[str]:
    im2rec.write_list(str(folder / "a.lst"), [im2rec.ListEntry(0, (1.0,), "x.jpg")])
    return ["a.lst"]


WRITERS: dict[str, Callable[[Path], list[str]]] = {
    "nd.save": _save_params,
    "Symbol.save": _save_symbol,
    "save_checkpoint": _save_checkpoint,
    "save_optimizer_states": _save_optimizer_states,
    "profiler.dump": _save_trace,
    "MXIndexedRecordIO": _save_records,
    "im2rec.write_list": _save_image_list,
}


@pytest.fixture(autouse=True)
def stopped_profiler():
    yield
    profiler.set_state("stop")
    profiler.reset()


@pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")
@pytest.mark.parametrize("writer", WRITERS, ids=list(WRITERS))
def test_written_files_get_the_umask_mode_and_leave_no_temporary(writer: str, tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        names = WRITERS[writer](tmp_path)
    finally:
        os.umask(previous)
    assert sorted(os.listdir(tmp_path)) == sorted(names)
    for name in names:
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640, name


# --- fsspec URLs -------------------------------------------------------------


@pytest.fixture
def memory_folder() -> str:
    pytest.importorskip("fsspec")
    return f"memory://lazynd-tests/{uuid.uuid4().hex}"


def test_symbol_saves_to_and_loads_from_a_url(memory_folder: str) -> None:
    uri = f"{memory_folder}/net-symbol.json"
    _net().save(uri)
    assert lazynd_sym.load(uri).list_arguments() == ["data", "fc_weight", "fc_bias"]


def test_checkpoint_saves_to_and_loads_from_a_url(memory_folder: str) -> None:
    weight = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    mx.model.save_checkpoint(f"{memory_folder}/net", 7, _net(), {"fc_weight": weight}, {})
    symbol, args, aux = mx.model.load_checkpoint(f"{memory_folder}/net", 7)
    assert symbol.list_outputs() == ["fc_output"]
    np.testing.assert_array_equal(args["fc_weight"].asnumpy(), weight.asnumpy())
    assert aux == {}


def test_record_files_write_to_and_read_from_urls(memory_folder: str) -> None:
    idx, rec = f"{memory_folder}/a.idx", f"{memory_folder}/a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        for key in range(3):
            writer.write_idx(key, b"record %d" % key)
    with recordio.MXIndexedRecordIO(idx, rec, "r") as reader:
        assert reader.keys == [0, 1, 2]
        assert reader.read_idx(2) == b"record 2"
    with recordio.MXRecordIO(rec, "r") as reader:
        assert list(reader) == [b"record 0", b"record 1", b"record 2"]


def test_profiler_writes_its_trace_to_a_url(memory_folder: str) -> None:
    uri = f"{memory_folder}/trace.json"
    profiler.set_config(mode="all", filename=uri)
    profiler.set_state("run")
    (mx.nd.ones((2,)) + 1).wait_to_read()
    profiler.set_state("stop")
    document = json.loads(fileio.open_for_read(uri))
    assert any(event["ph"] == "X" for event in document["traceEvents"])


def test_optimizer_states_save_to_and_load_from_a_url(memory_folder: str) -> None:
    uri = f"{memory_folder}/opt.states"
    _save_optimizer_states_to(uri)
    restored = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    load_states(restored, uri)
    np.testing.assert_allclose(restored.states[0].asnumpy(), [-0.1, -0.1], rtol=1e-6)
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", momentum=0.9))
    kv.load_optimizer_states(uri)
