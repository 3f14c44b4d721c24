"""The README's Python examples run as written (a user copies them first).

Each fenced ``python`` block of README.md runs in a fresh interpreter, in a temporary folder, after
``import numpy as np`` and ``import lazynd as mx`` (the blocks that show a part of a program take
those names from the text around them).  A block that continues a program the README only
describes (its iterators, its record files) is listed in ``FRAGMENTS`` with what it lacks; the
test fails when a listed fragment is no longer in the README, so the list stays true.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PRELUDE = "import numpy as np\nimport lazynd as mx\n"
# the first line of each block that cannot run alone -> what it needs from a program around it
FRAGMENTS = {
    "mod = mx.mod.Module(net, data_names=": "the training and validation iterators of the section's program",
    "train = mx.image.ImageDetIter(": "train.rec and val.rec, detection record files",
}


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text()
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        blocks.append((text.count("\n", 0, match.start()) + 1, match.group(1)))
    return blocks


def _runnable() -> list:
    params = []
    for line, code in _blocks():
        first = code.splitlines()[0]
        lacking = next((why for start, why in FRAGMENTS.items() if first.startswith(start)), None)
        marks = [pytest.mark.skip(reason=f"a fragment: it needs {lacking}")] if lacking else []
        params.append(pytest.param(code, id=f"line{line}", marks=marks))
    return params


def test_the_readme_has_python_examples_and_every_listed_fragment_is_in_it() -> None:
    firsts = [code.splitlines()[0] for _, code in _blocks()]
    assert len(firsts) >= 4
    for start in FRAGMENTS:
        assert any(first.startswith(start) for first in firsts), f"FRAGMENTS lists a block no longer in README: {start}"


@pytest.mark.parametrize("code", _runnable())
def test_a_readme_example_runs(code: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PRELUDE + code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
