"""Every tutorial runs: the scripts for a few batches on real MNIST, the markdown code blocks as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
SCRIPTS = ["mnist_mlp.py", "mnist_feedforward.py", "mnist_lenet.py"]
MARKDOWN = sorted(path.name for path in TUTORIALS.glob("*.md"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_tutorial_script_trains_a_few_batches(script, data_dir, tmp_path) -> None:
    command = [
        sys.executable,
        str(TUTORIALS / script),
        "--ctx",
        "cpu",
        "--epochs",
        "1",
        "--batch-size",
        "20",
        "--max-batches",
        "3",
        "--data-dir",
        str(data_dir),
    ]
    if script == "mnist_feedforward.py":
        command += ["--model-prefix", str(tmp_path / "mlp")]
    env = {**os.environ, "PYTHONPATH": str(TUTORIALS.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    match = re.search(r"test accuracy: (\d\.\d+)", result.stdout)
    assert match, result.stdout
    assert 0.0 <= float(match.group(1)) <= 1.0
    if script == "mnist_feedforward.py":
        assert (tmp_path / "mlp-0001.params").exists() and (tmp_path / "mlp-symbol.json").exists()


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("page", MARKDOWN)
def test_markdown_tutorial_code_blocks_run(page, capsys) -> None:
    blocks = _python_blocks(TUTORIALS / page)
    assert blocks, f"{page} has no python code blocks"
    namespace: dict = {"__name__": f"tutorial_{page}"}
    for number, block in enumerate(blocks):
        code = compile(block, f"{page} block {number + 1}", "exec")
        exec(code, namespace)  # blocks build on each other, as a reader runs them
