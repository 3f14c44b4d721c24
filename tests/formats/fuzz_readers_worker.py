"""Mutates the files of one format lazynd reads and loads each mutant; started by test_fuzz_readers.py.

``python fuzz_readers_worker.py FORMAT CASES``: builds seed files of ``FORMAT``
(and adds MXNet's own files from ``$LAZYND_DATA_DIR/mxnet`` when it is set),
then for each case takes a seed, damages one of its files with a mutation
drawn from a generator seeded by the case number (byte flips, byte sets,
truncations, insertions, deletions, edits of a 4- or 8-byte field to an edge
value, and for JSON edits of a parsed value), and loads it.  Every case must
load or raise a :class:`lazynd.LazyNDError` whose message names the damaged
file; anything else (another exception, a hang past ``CASE_SECONDS``) is an
escape.  The parent runs this under an address-space limit, so an allocation
beyond it shows up as a MemoryError escape.  Prints one JSON line: the number
of cases, how many loaded, and the escapes.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import signal
import struct
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CASE_SECONDS = 10
EDGE_WORDS = (0, 1, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 100_000, 2**40, 2**63 - 1, 2**64 - 1)
EDGE_JSON = (-1, 0, 1, 3, 2**31, 2**64, 1e308, True, None, "", "x", "(2,a)", "(" * 3000, [], [[0, 0]], {}, {"a": []})


class Hang(Exception):
    """A case ran past CASE_SECONDS."""


# --- seeds: name -> {file name: bytes}; the loader takes the folder ---------------------------


def _nd_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    import lazynd as mx

    path = folder / "seed.params"
    mx.nd.save(str(path), {"w": mx.nd.array(np.arange(6.0).reshape(2, 3)), "b": mx.nd.ones((3,), dtype="int32")})
    seeds = {"dict": {"a.params": path.read_bytes()}}
    mx.nd.save(str(path), [mx.nd.zeros((2, 2), dtype="float16"), mx.nd.array([1, 0], dtype="uint8")])
    seeds["list"] = {"a.params": path.read_bytes()}
    if data_dir is not None:
        for name in ("legacy_ndarray.v0", "mxnet191_dtypes.params", "mxnet191_list.params"):
            seeds[name] = {"a.params": (data_dir / name).read_bytes()}
    return seeds


def _symbol_document() -> str:
    import lazynd_sym as sym

    data = sym.Variable("data", shape=(0, 4))
    net = sym.FullyConnected(data, num_hidden=3, name="fc")
    net = sym.BatchNorm(net, name="bn")
    net = sym.Concat(net, sym.Activation(net, act_type="relu"), dim=1, name="cat")
    net = sym.SliceChannel(net, num_outputs=2, name="split")[1]
    return sym.SoftmaxOutput(net, name="softmax").tojson()


def _symbol_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    seeds = {"ours": {"a-symbol.json": _symbol_document().encode()}}
    if data_dir is not None:
        for name in ("save_000800.json", "mnist_mlp-symbol.json"):
            seeds[name] = {"a-symbol.json": (data_dir / name).read_bytes()}
    return seeds


def _checkpoint_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    import lazynd as mx
    import lazynd_sym as sym

    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    mx.model.save_checkpoint(str(folder / "seed"), 1, net, params, {})
    return {
        "ours": {
            "a-symbol.json": (folder / "seed-symbol.json").read_bytes(),
            "a-0001.params": (folder / "seed-0001.params").read_bytes(),
        }
    }


def _recordio_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    from lazynd import recordio

    idx, rec = folder / "seed.idx", folder / "seed.rec"
    magic = struct.pack("<I", 0xCED7230A)
    with recordio.MXIndexedRecordIO(str(idx), str(rec), "w") as writer:
        for key, payload in enumerate([b"abc", b"abcd" + magic + b"efgh", b"", b"x" * 37]):
            writer.write_idx(key, recordio.pack(recordio.IRHeader(0, float(key), key, 0), payload))
        writer.write_idx(9, recordio.pack(recordio.IRHeader(0, [1.0, 2.0], 9, 0), magic * 2))
    seeds = {"ours": {"a.idx": idx.read_bytes(), "a.rec": rec.read_bytes()}}
    if data_dir is not None:
        seeds["mnist50"] = {
            "a.idx": (data_dir / "mnist50.idx").read_bytes(),
            "a.rec": (data_dir / "mnist50.rec").read_bytes(),
        }
    return seeds


def _idx_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    images = bytes([0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3]) + bytes(range(18))
    floats = bytes([0, 0, 0x0D, 1, 0, 0, 0, 4]) + np.arange(4, dtype=">f4").tobytes()
    return {
        "images": {"a-idx3-ubyte": images},
        "floats": {"a-idx1-ubyte": floats},
        "gzip": {"a-idx3-ubyte": gzip.compress(images, mtime=0)},
    }


def _image_seeds(folder: Path, data_dir: Path | None) -> dict[str, dict[str, bytes]]:
    import cv2

    pixels = np.random.default_rng(0).integers(0, 255, (12, 10, 3), dtype=np.uint8)
    return {
        "png": {"a.png": cv2.imencode(".png", pixels)[1].tobytes()},
        "png-gray": {"a.png": cv2.imencode(".png", pixels[:, :, 0])[1].tobytes()},
        "jpeg": {"a.jpg": cv2.imencode(".jpg", pixels)[1].tobytes()},
        "jpeg-progressive": {"a.jpg": cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()},
    }


# --- loaders: each reads every file of a case in the folder -----------------------------------


def _load_nd(folder: Path) -> None:
    import lazynd as mx

    mx.nd.load(str(folder / "a.params"))


def _load_symbol(folder: Path) -> None:
    import lazynd_sym as sym

    net = sym.load(str(folder / "a-symbol.json"))
    net.list_arguments()


def _load_checkpoint(folder: Path) -> None:
    import lazynd as mx

    mx.model.load_checkpoint(str(folder / "a"), 1)


def _load_recordio(folder: Path) -> None:
    from lazynd import image, recordio

    with recordio.MXIndexedRecordIO(str(folder / "a.idx"), str(folder / "a.rec"), "r") as reader:
        for key in reader.keys:
            reader.read_idx(key)
    # image records as training reads them: headers unpacked, payloads decoded
    for _ in image.ImageIter(10, (1, 28, 28), path_imgrec=str(folder / "a.rec"), aug_list=[]):
        pass


def _load_idx(folder: Path) -> None:
    from lazynd.formats.idx import read_idx

    for path in folder.iterdir():
        read_idx(path)


def _load_image(folder: Path) -> None:
    from lazynd import image

    for path in folder.iterdir():
        for flag in (1, 0, -1):
            image.imread(str(path), flag=flag).asnumpy()


FORMATS: dict[str, tuple[Callable[[Path, Path | None], dict[str, dict[str, bytes]]], Callable[[Path], None]]] = {
    "ndarray": (_nd_seeds, _load_nd),
    "symbol": (_symbol_seeds, _load_symbol),
    "checkpoint": (_checkpoint_seeds, _load_checkpoint),
    "recordio": (_recordio_seeds, _load_recordio),
    "idx": (_idx_seeds, _load_idx),
    "image": (_image_seeds, _load_image),
}


# --- mutations ---------------------------------------------------------------------------------


def _edit_json(text: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    try:
        document = json.loads(text)
    except ValueError:
        return None
    slots: list[tuple[Any, Any]] = []
    stack = [document]
    while stack:
        value = stack.pop()
        keys = value.keys() if isinstance(value, dict) else range(len(value)) if isinstance(value, list) else ()
        for key in keys:
            slots.append((value, key))
            stack.append(value[key])
    if not slots:
        return None
    container, key = rng.choice(slots)
    new = rng.choice(EDGE_JSON)
    container[key] = new
    return json.dumps(document).encode(), f"json value at {key!r} -> {str(new)[:20]!r}"


def mutate(data: bytes, rng: random.Random, is_json: bool) -> tuple[bytes, str]:
    """One damaged copy of ``data`` and a description of the damage."""
    kind = rng.choice(["flip", "set", "truncate", "insert", "delete", "field", "field"] + ["json"] * 3 * is_json)
    if kind == "json" and (edited := _edit_json(data, rng)) is not None:
        return edited
    buf = bytearray(data)
    if not buf or kind == "insert":
        at = rng.randrange(len(buf) + 1)
        piece = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(buf[:at] + piece + buf[at:]), f"insert {piece.hex()} at {at}"
    at = rng.randrange(len(buf))
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(buf))
            buf[at] ^= rng.randrange(1, 256)
        return bytes(buf), f"flip bytes (last at {at})"
    if kind == "set":
        buf[at] = rng.choice((0x00, 0xFF, 0x7F, 0x80))
        return bytes(buf), f"set byte {at} to {buf[at]:#x}"
    if kind == "truncate":
        return bytes(buf[:at]), f"truncate to {at}"
    if kind == "delete":
        end = min(len(buf), at + rng.randint(1, 16))
        return bytes(buf[:at] + buf[end:]), f"delete {at}:{end}"
    width = rng.choice((2, 4, 8))
    word = rng.choice(EDGE_WORDS) & ((1 << (8 * width)) - 1)
    order = rng.choice(("little", "big"))
    # headers sit at the start and their fields are aligned: aim there half the time
    span = min(len(buf), 64) if rng.random() < 0.5 else len(buf)
    at = rng.randrange(max(1, span - width + 1))
    if rng.random() < 0.5:
        at -= at % width
    buf[at : at + width] = word.to_bytes(width, order)
    return bytes(buf), f"field {at}:{at + width} = {word} {order}-endian"


# --- the run -------------------------------------------------------------------------------------


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang(f"no result after {CASE_SECONDS} s")


def run(fmt: str, cases: int) -> dict[str, Any]:
    from lazynd.errors import LazyNDError

    data_root = os.environ.get("LAZYND_DATA_DIR")
    data_dir = Path(data_root) / "mxnet" if data_root and (Path(data_root) / "mxnet").is_dir() else None
    make_seeds, load = FORMATS[fmt]
    signal.signal(signal.SIGALRM, _on_alarm)
    escapes: list[dict[str, str]] = []
    loaded = 0
    with tempfile.TemporaryDirectory() as root:
        seeds = make_seeds(Path(root), data_dir)
        names = sorted(seeds)
        for case in range(cases):
            rng = random.Random(f"{fmt}-{case}")
            seed_name = names[case % len(names)]
            files = seeds[seed_name]
            target = rng.choice(sorted(files))
            damaged, how = mutate(files[target], rng, target.endswith(".json"))
            folder = Path(root) / f"case{case}"
            folder.mkdir()
            for name, content in files.items():
                (folder / name).write_bytes(damaged if name == target else content)
            signal.alarm(CASE_SECONDS)
            try:
                load(folder)
                loaded += 1
            except LazyNDError as err:
                if not any(name in str(err) for name in files):
                    escapes.append(_escape(case, seed_name, target, how, err, "does not name the file"))
            except BaseException as err:  # noqa: BLE001 - every other exception is what we look for
                escapes.append(_escape(case, seed_name, target, how, err, "not a LazyNDError"))
            finally:
                signal.alarm(0)
    return {"format": fmt, "cases": cases, "loaded": loaded, "escapes": escapes}


def _escape(case: int, seed: str, target: str, how: str, err: BaseException, why: str) -> dict[str, str]:
    where = traceback.extract_tb(err.__traceback__)[-1]
    return {
        "case": str(case),
        "seed": seed,
        "file": target,
        "mutation": how,
        "why": why,
        "error": f"{type(err).__name__}: {str(err)[:300]}",
        "raised_at": f"{where.filename}:{where.lineno}",
    }


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], int(sys.argv[2]))))
