"""Every tutorial runs: the scripts for a few batches on real MNIST, the markdown code blocks as written."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
SCRIPTS = ["mnist_mlp.py", "mnist_feedforward.py", "mnist_lenet.py", "mnist_module.py", "custom_op.py"]
CHECKPOINTING = ("mnist_feedforward.py", "mnist_module.py")
MARKDOWN = sorted(path.name for path in TUTORIALS.glob("*.md"))
# pages that read $LAZYND_DATA_DIR: MNIST, or the files MXNet wrote there
NEEDS_MNIST = ("autograd_training.md", "mxnet_interop.md")


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
    if script in CHECKPOINTING:
        command += ["--model-prefix", str(tmp_path / "mlp")]
    env = {**os.environ, "PYTHONPATH": str(TUTORIALS.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    match = re.search(r"test accuracy: (\d\.\d+)", result.stdout)
    assert match, result.stdout
    assert 0.0 <= float(match.group(1)) <= 1.0
    if script in CHECKPOINTING:
        assert (tmp_path / "mlp-0001.params").exists() and (tmp_path / "mlp-symbol.json").exists()
    if script == "mnist_module.py":  # saved with the optimizer states, reloaded and scored again
        assert (tmp_path / "mlp-0001.states").exists()
        assert f"reloaded test accuracy: {match.group(1)}" in result.stdout


def _run_script(command: list[str], tmp_path: Path) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(TUTORIALS.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    return [float(a) for a in re.findall(r"test accuracy: (\d\.\d+)", result.stdout)]


QUICK = ["--epochs", "1", "--batch-size", "20", "--max-batches", "3", "--no-progress", "--model-prefix", ""]


@pytest.mark.parametrize("script", ["mnist_feedforward.py", "mnist_module.py"])
def test_script_trains_on_two_cpu_contexts(script, data_dir, tmp_path) -> None:
    options = QUICK if script == "mnist_feedforward.py" else [o for o in QUICK if o != "--no-progress"]
    command = [sys.executable, str(TUTORIALS / script), "--num-devices", "2", *options]
    accuracies = _run_script([*command, "--data-dir", str(data_dir)], tmp_path)
    assert len(accuracies) == 1 and 0.0 <= accuracies[0] <= 1.0


@pytest.mark.mpi
@pytest.mark.skipif(
    shutil.which("mpiexec") is None or importlib.util.find_spec("mpi4py") is None, reason="needs mpiexec and mpi4py"
)
@pytest.mark.parametrize("script", ["mnist_feedforward.py", "mnist_mlp.py", "mnist_module.py"])
def test_script_trains_with_dist_sync_under_mpiexec(script, data_dir, tmp_path) -> None:
    options = {"mnist_feedforward.py": QUICK, "mnist_mlp.py": QUICK[:6]}.get(
        script, [o for o in QUICK if o != "--no-progress"]
    )
    command = [shutil.which("mpiexec"), "-launcher", "fork", "-n", "2", sys.executable, str(TUTORIALS / script)]
    command += ["--kv-store", "dist_sync", *options, "--data-dir", str(data_dir)]
    accuracies = _run_script(command, tmp_path)
    # each rank trained on its own half of the data, with the summed gradients: the same weights everywhere
    assert len(accuracies) == 2 and accuracies[0] == accuracies[1]


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("page", MARKDOWN)
def test_markdown_tutorial_code_blocks_run(page, request, capsys) -> None:
    if page in NEEDS_MNIST:
        request.getfixturevalue("data_dir")  # skips when $LAZYND_DATA_DIR is not set
    blocks = _python_blocks(TUTORIALS / page)
    assert blocks, f"{page} has no python code blocks"
    namespace: dict = {"__name__": f"tutorial_{page}"}
    for number, block in enumerate(blocks):
        code = compile(block, f"{page} block {number + 1}", "exec")
        exec(code, namespace)  # blocks build on each other, as a reader runs them
