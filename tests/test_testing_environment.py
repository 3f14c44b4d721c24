"""mx.test_utils' set-up helpers: environment, discard_stderr, retry, DummyIter, the GPU's capability."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import lazynd as mx
from lazynd import test_utils
from lazynd.errors import ContextError, LazyNDError, MissingFileError
from lazynd.tools import im2rec


def test_environment_sets_and_restores_even_on_error(monkeypatch):
    monkeypatch.setenv("LAZYND_T_KEEP", "old")
    monkeypatch.delenv("LAZYND_T_NEW", raising=False)
    with pytest.raises(RuntimeError), test_utils.environment({"LAZYND_T_KEEP": None, "LAZYND_T_NEW": "1"}):
        assert "LAZYND_T_KEEP" not in os.environ and os.environ["LAZYND_T_NEW"] == "1"
        raise RuntimeError
    assert os.environ["LAZYND_T_KEEP"] == "old" and "LAZYND_T_NEW" not in os.environ
    with test_utils.environment("LAZYND_T_KEEP", "new"):
        assert os.environ["LAZYND_T_KEEP"] == "new"
    assert os.environ["LAZYND_T_KEEP"] == "old"


@pytest.mark.parametrize(
    ("args", "message"),
    [((), "expected one dict or a name and a value, got 0"), (("X", 1), "'X' must be a string set to")],
)
def test_environment_names_bad_arguments(args, message):
    with pytest.raises(LazyNDError, match=message), test_utils.environment(*args):
        pass


def test_discard_stderr_silences_the_file_descriptor():
    script = (
        "import os, sys\nfrom lazynd.test_utils import discard_stderr\n"
        "with discard_stderr():\n    os.write(2, b'hidden')\n    print('hidden too', file=sys.stderr)\n"
        "os.write(2, b'shown')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    assert result.stderr == b"shown"


def test_retry_reruns_failed_assertions_only():
    tries = []

    @test_utils.retry(3)
    def always_fails(value):
        tries.append(value)
        raise AssertionError("no")

    with pytest.raises(AssertionError, match="no"):
        always_fails(7)
    assert tries == [7, 7, 7] and always_fails.__name__ == "always_fails"

    @test_utils.retry(3)
    def broken():
        tries.append(0)
        raise KeyError("not retried")

    with pytest.raises(KeyError):
        broken()
    assert tries.count(0) == 1
    with pytest.raises(LazyNDError, match="retry: n must be a positive number of tries, got 0"):
        test_utils.retry(0)


def test_dummy_iter_repeats_the_first_batch():
    real = mx.io.NDArrayIter(np.arange(12.0).reshape(6, 2), np.arange(6.0), batch_size=2)
    dummy = test_utils.DummyIter(real)
    assert dummy.batch_size == 2 and dummy.provide_data == real.provide_data
    batches = [next(dummy) for _ in range(5)]  # more than the real epoch has
    assert all(b is batches[0] for b in batches)
    assert batches[0].data[0].asnumpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_compute_capability_of_a_cpu_context_is_refused():
    with pytest.raises(ContextError, match=r"expected a gpu context, got cpu\(0\)"):
        test_utils.get_cuda_compute_capability(mx.cpu())
    assert test_utils.is_op_runnable()


def test_setenv_and_getenv_are_os_environ_and_none_unsets(monkeypatch):
    monkeypatch.delenv("LAZYND_T_SETENV", raising=False)
    assert test_utils.getenv("LAZYND_T_SETENV") is None
    test_utils.setenv("LAZYND_T_SETENV", "7")
    assert os.environ["LAZYND_T_SETENV"] == "7" and test_utils.getenv("LAZYND_T_SETENV") == "7"
    test_utils.setenv("LAZYND_T_SETENV", None)
    assert "LAZYND_T_SETENV" not in os.environ and test_utils.getenv("LAZYND_T_SETENV") is None
    with pytest.raises(LazyNDError, match="setenv: expected a string name and a string or None value"):
        test_utils.setenv("LAZYND_T_SETENV", 7)


def test_get_im2rec_path_gives_lazynds_runnable_script(monkeypatch, tmp_path):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    path = test_utils.get_im2rec_path()
    assert os.path.samefile(path, im2rec.__file__)
    result = subprocess.run([sys.executable, path, "--help"], capture_output=True, text=True, check=True)
    assert "--list" in result.stdout
    # a home folder with its own tools/im2rec.py is looked at first, as MXNet does
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "im2rec.py").write_text("")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert os.path.samefile(test_utils.get_im2rec_path(), tmp_path / "tools" / "im2rec.py")
    monkeypatch.setenv("LAZYND_T_EMPTY_HOME", str(tmp_path / "nothing"))
    assert os.path.samefile(test_utils.get_im2rec_path("LAZYND_T_EMPTY_HOME"), path)


def test_get_im2rec_path_without_a_script_names_the_places_looked_at(monkeypatch):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    monkeypatch.setattr(os.path, "isfile", lambda path: False)
    with pytest.raises(MissingFileError, match=r"get_im2rec_path: no im2rec.py found, looked for \[.*tools"):
        test_utils.get_im2rec_path()


def test_is_cd_run_reads_mxnets_cd_job_variable(monkeypatch):
    monkeypatch.setenv("CD_JOB", "1")
    assert test_utils.is_cd_run()
    monkeypatch.setenv("CD_JOB", "0")
    assert not test_utils.is_cd_run()
    assert test_utils.is_aarch64_run() == (platform.machine() == "aarch64")
