"""``mx.log``: application loggers the MXNet way, and lazynd's own loggers left to propagate."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import lazynd as mx
from lazynd.log import get_logger


def _fresh_name() -> str:
    """A logger name no other test has configured (loggers live for the whole process)."""
    return f"test_log.{uuid.uuid4().hex}"


def test_application_logger_takes_the_level_given_by_name_and_keyword():
    logger = mx.log.get_logger(name=_fresh_name(), level=20)
    assert logger.level == mx.log.INFO
    assert len(logger.handlers) == 1


def test_application_logger_writes_to_the_file_given(tmp_path: Path):
    path = tmp_path / "train.log"
    logger = mx.log.get_logger(_fresh_name(), filename=str(path), filemode="w", level=logging.INFO)
    logger.info("epoch %d done", 3)
    logger.debug("not shown")
    for handler in logger.handlers:
        handler.flush()
    text = path.read_text()
    assert "epoch 3 done" in text
    assert "not shown" not in text
    assert text.startswith("I")  # the level's initial leads the line, as in MXNet's logs


def test_application_logger_is_configured_once():
    name = _fresh_name()
    first = mx.log.get_logger(name, level=logging.INFO)
    again = mx.log.get_logger(name, level=logging.ERROR)
    assert again is first
    assert len(again.handlers) == 1
    assert again.level == logging.INFO


def test_no_name_returns_the_root_logger_untouched():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    assert mx.log.get_logger() is root
    assert root.handlers == handlers and root.level == level


def test_library_loggers_get_no_handler_and_no_level():
    logger = get_logger("lazynd.test_log_library")
    assert logger.handlers == []
    assert logger.level == logging.NOTSET
    assert logger.propagate


def test_deprecated_spelling_warns_and_returns_the_same_logger():
    name = _fresh_name()
    with pytest.warns(DeprecationWarning, match="get_logger"):
        logger = mx.log.getLogger(name, level=logging.INFO)
    assert logger is mx.log.get_logger(name)


def test_log_is_a_face_of_a_fresh_import():
    # in a new interpreter, so that no earlier `import lazynd.log` has set the attribute
    code = "import lazynd as mx; print(mx.log.get_logger(name='eval', level=mx.log.INFO).level)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "20"
