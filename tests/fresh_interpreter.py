"""Run a program in a fresh Python interpreter for the tests that need one (process exit, fork,
signals): this checkout's lazynd on its path, and a hang failing the test instead of stalling the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_fresh(code: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) with ``env`` added to the environment; fail the test if it runs past ``timeout``."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the fresh interpreter hung (killed after {timeout} s); its output: {err.stdout!r} {err.stderr!r}")
