"""The python blocks of tutorials/kvstore_basics.md run, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "kvstore_basics.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_kvstore_tutorial_blocks_run(capsys):
    blocks = python_blocks(TUTORIAL.read_text())
    assert len(blocks) >= 5
    namespace: dict = {"__name__": "kvstore_tutorial"}
    for i, block in enumerate(blocks):
        code = compile(block, f"{TUTORIAL.name}[block {i}]", "exec")
        exec(code, namespace)
    assert "[[2. 2. 2.]" in capsys.readouterr().out
