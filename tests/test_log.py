"""``mx.log``: application loggers the MXNet way, and lazynd's own loggers left to propagate."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
import warnings
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


def _first_user_warning(call) -> warnings.WarningMessage:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    assert seen, "no warning"
    return seen[0]


def _init_params_twice() -> None:
    import lazynd as mx

    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2), label_names=None)
    mod.bind([("data", (1, 3))])
    mod.init_params()
    mod.init_params()


def _partial_infer_shape() -> None:
    import lazynd as mx

    (mx.sym.Variable("a") + mx.sym.Variable("b")).infer_shape(a=(2, 0))


def _ignored_make_loss_parameter() -> None:
    import lazynd as mx

    mx.sym.make_loss(mx.sym.Variable("x"), grad_scale=2.0).simple_bind(mx.cpu(), x=(2,))


@pytest.mark.parametrize(
    "call", [_init_params_twice, _partial_infer_shape, _ignored_make_loss_parameter], ids=lambda f: f.__name__
)
def test_lazynds_warnings_name_the_users_line(call):
    # every warning lazynd gives is attributed to the first line outside the package, whatever the depth
    assert _first_user_warning(call).filename == __file__
