"""Writing and reading whole RecordIO files of raw payloads, and the format's magic word."""

from __future__ import annotations

import struct
from pathlib import Path

from lazynd import recordio

MAGIC = struct.pack("<I", 0xCED7230A)


def write_records(path: Path, payloads: list[bytes]) -> None:
    """Write each payload as one record of a new RecordIO file at `path`."""
    with recordio.MXRecordIO(path, "w") as writer:
        for payload in payloads:
            writer.write(payload)


def read_records(path: Path) -> list[bytes]:
    """Every record of the RecordIO file at `path`, in order."""
    with recordio.MXRecordIO(path, "r") as reader:
        return list(reader)
