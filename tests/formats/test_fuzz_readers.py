"""Damaged files of every format lazynd reads load or raise a LazyNDError naming the file.

Each format runs in its own process (``fuzz_readers_worker.py``) under an
address-space limit, so a reader that trusts a size field and allocates what it
claims fails here with a MemoryError instead of taking the machine's memory,
and under a time limit, so a reader that loops forever fails too.  The cases
are deterministic: case ``n`` of a format always applies the same mutation.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

CASES_PER_FORMAT = 500
ADDRESS_SPACE_BYTES = 3 << 30
WORKER = Path(__file__).with_name("fuzz_readers_worker.py")


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


@pytest.mark.parametrize("fmt", ["ndarray", "symbol", "checkpoint", "recordio", "idx", "image"])
def test_damaged_files_load_or_raise_a_lazynd_error_naming_the_file(fmt: str) -> None:
    # the worker must import this checkout's lazynd, wherever the installed one lives
    python_path = os.pathsep.join(filter(None, [str(WORKER.parents[2]), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": python_path, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(WORKER), fmt, str(CASES_PER_FORMAT)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        preexec_fn=_limit_address_space,
        check=False,
    )
    assert done.returncode == 0, f"the {fmt} fuzz worker died (rc {done.returncode}): {done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["cases"] == CASES_PER_FORMAT
    assert report["loaded"] < CASES_PER_FORMAT, "no mutation was refused: the mutations do not reach the reader"
    assert report["escapes"] == [], json.dumps(report["escapes"][:10], indent=1)
