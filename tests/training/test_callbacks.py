"""Batch- and epoch-end callbacks."""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lazynd import callback, metric
from lazynd.errors import ArgumentTypeError, DataError


def _param(nbatch: int, eval_metric=None) -> callback.BatchEndParam:
    return callback.BatchEndParam(epoch=2, nbatch=nbatch, eval_metric=eval_metric, locals=None)


def _speedometer_lines(caplog, auto_reset: bool, eval_metric) -> list[str]:
    """The lines a Speedometer(frequent=2) logs over batches 0..4, the speed figure masked."""
    meter = callback.Speedometer(batch_size=10, frequent=2, auto_reset=auto_reset)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            if eval_metric is not None:
                eval_metric.update([np.array([nbatch % 2])], [np.array([[0.3, 0.7]])])
            meter(_param(nbatch, eval_metric))
    return [re.sub(r"Speed: \S+ ", "Speed: X ", r.getMessage()) for r in caplog.records]


def test_speedometer_lines_name_the_batches_each_log_covers_as_mxnet(caplog) -> None:
    # MXNet 1.9.1's lines, which log parsers read: [a-b] since the last log, the values after
    assert _speedometer_lines(caplog, True, metric.create(["acc", "mse"])) == [
        "Epoch[2] Batch [0-2]\tSpeed: X samples/sec\taccuracy=0.333333\tmse=0.290000",
        "Epoch[2] Batch [2-4]\tSpeed: X samples/sec\taccuracy=0.500000\tmse=0.290000",
    ]


def test_speedometer_without_auto_reset_logs_from_batch_zero(caplog) -> None:
    assert _speedometer_lines(caplog, False, metric.Accuracy()) == [
        "Epoch[2] Batch [0-2]\tSpeed: X samples/sec\taccuracy=0.333333",
        "Epoch[2] Batch [0-4]\tSpeed: X samples/sec\taccuracy=0.400000",
    ]


def test_speedometer_without_a_metric_logs_iterations(caplog) -> None:
    assert _speedometer_lines(caplog, True, None) == [
        "Iter[2] Batch [2]\tSpeed: X samples/sec",
        "Iter[2] Batch [4]\tSpeed: X samples/sec",
    ]


def test_speedometer_takes_a_float_period_as_mxnets_tutorials_compute_it(caplog) -> None:
    # MXNet's matrix factorization tutorial passes Speedometer(batch_size, 20000 / batch_size);
    # MXNet logs where nbatch % frequent == 0 and writes the batches with %d
    meter = callback.Speedometer(batch_size=10, frequent=2.5)
    with caplog.at_level(logging.INFO):
        for nbatch in range(11):
            meter(_param(nbatch))
    lines = [re.sub(r"Speed: \S+ ", "Speed: X ", r.getMessage()) for r in caplog.records]
    assert lines == ["Iter[2] Batch [5]\tSpeed: X samples/sec", "Iter[2] Batch [10]\tSpeed: X samples/sec"]


def test_log_train_metric_takes_a_float_period(caplog) -> None:
    acc = metric.Accuracy()
    acc.update([np.array([1])], [np.array([[0.0, 1.0]])])
    log = callback.log_train_metric(1.5)
    with caplog.at_level(logging.INFO):
        for nbatch in range(4):
            log(_param(nbatch, acc))
    assert [r.getMessage() for r in caplog.records] == [
        "Iter[2] Batch[0] Train-accuracy=1.000000",
        "Iter[2] Batch[3] Train-accuracy=1.000000",
    ]


def test_speedometer_auto_reset_clears_the_metric() -> None:
    acc = metric.Accuracy()
    acc.update([np.array([1])], [np.array([[0.0, 1.0]])])
    meter = callback.Speedometer(batch_size=10, frequent=1)
    meter(_param(0, acc))
    meter(_param(1, acc))
    assert acc.num_inst == 0


def test_log_train_metric_logs_each_period(caplog) -> None:
    acc = metric.Accuracy()
    acc.update([np.array([0])], [np.array([[0.0, 1.0]])])
    log = callback.log_train_metric(period=3)
    with caplog.at_level(logging.INFO):
        for nbatch in range(7):
            log(_param(nbatch, acc))
    assert [r.getMessage() for r in caplog.records] == [
        f"Iter[2] Batch[{n}] Train-accuracy=0.000000" for n in (0, 3, 6)
    ]


def test_progress_bar_renders_fraction() -> None:
    bar = callback.ProgressBar(total=4, length=8)
    assert bar.render(2) == "[====----] 50%"


def test_epoch_progress_is_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = callback.EpochProgress(0, total=3, batch_size=5, stream=stream)
    progress.update()
    progress.close()
    assert progress.bar is None and stream.getvalue() == ""
    assert progress.samples == 5


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_epoch_progress_draws_a_tqdm_bar_on_a_terminal() -> None:
    stream = Terminal()
    progress = callback.EpochProgress(1, total=2, batch_size=5, stream=stream)
    progress.update(metric.Accuracy())
    progress.close()
    assert "Epoch 1" in stream.getvalue()


def test_a_speedometer_line_goes_above_the_progress_bar_not_over_it(monkeypatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    handler = logging.StreamHandler(terminal)  # what logging.basicConfig() installs: one on stderr
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        progress = callback.EpochProgress(0, total=4, batch_size=5, stream=terminal)
        meter = callback.Speedometer(batch_size=5, frequent=1)
        for nbatch in range(2):
            progress.update()
            meter(_param(nbatch))
        progress.close()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    line = next(text for text in terminal.getvalue().split("\n") if "Speed:" in text)
    assert line.split("\r")[-1].startswith("Iter[2] Batch [1]\tSpeed:"), repr(line)
    # the handler is given back once the bar is closed
    assert handler.stream is terminal


def test_lazynd_logs_to_its_own_logger_not_the_root_logger(caplog) -> None:
    with caplog.at_level(logging.INFO):
        meter = callback.Speedometer(batch_size=5, frequent=1)
        meter(_param(0))
        meter(_param(1))
        callback.log_train_metric(period=1)(_param(0, metric.Accuracy()))
    assert {r.name for r in caplog.records} == {"lazynd.callback"}
    # so an application can silence (or redirect) lazynd alone
    caplog.clear()
    lazynd_logger = logging.getLogger("lazynd")
    with caplog.at_level(logging.INFO):
        lazynd_logger.setLevel(logging.WARNING)
        try:
            meter(_param(2))
        finally:
            lazynd_logger.setLevel(logging.NOTSET)
    assert caplog.records == []


def test_log_lines_name_the_rank_in_a_distributed_job(caplog) -> None:
    from lazynd import log

    meter = callback.Speedometer(batch_size=5, frequent=1)
    with caplog.at_level(logging.INFO):
        meter(_param(0))
        log.set_worker(1, 2)
        try:
            meter(_param(1))
        finally:
            log.set_worker(0, 1)
        meter(_param(2))
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("[rank 1/2] Iter[2] Batch [1]")
    assert messages[1].startswith("Iter[2] Batch [2]")


def test_do_checkpoint_saves_every_period(monkeypatch) -> None:
    import lazynd_sym.model.checkpoint as model

    saved = []
    monkeypatch.setattr(model, "save_checkpoint", lambda *args: saved.append(args[:2]))
    save = callback.do_checkpoint("/tmp/x", period=2)
    for epoch in range(4):
        save(epoch, None, {}, {})
    assert saved == [("/tmp/x", 2), ("/tmp/x", 4)]


@pytest.mark.parametrize("epoch", [None, "abc", [2, 3], np.ones(2)], ids=["None", "str", "list", "array"])
def test_do_checkpoint_called_with_an_epoch_that_is_no_number_names_it(epoch) -> None:
    with pytest.raises(ArgumentTypeError, match="do_checkpoint: epoch must be a number"):
        callback.do_checkpoint("/tmp/x")(epoch, None, {}, {})


def test_do_checkpoint_takes_the_numbers_mxnet_adds_one_to(monkeypatch) -> None:
    import lazynd_sym.model.checkpoint as model

    saved = []
    monkeypatch.setattr(model, "save_checkpoint", lambda *args: saved.append(args[1]))
    for epoch in (np.int64(1), 2.0, True):
        callback.do_checkpoint("/tmp/x")(epoch, None, {}, {})
    assert saved == [2, 3.0, 2]


def test_log_validation_metrics_callback_logs_each_metric(caplog) -> None:
    acc = metric.Accuracy()
    acc.update([np.array([1])], [np.array([[0.2, 0.8]])])
    with caplog.at_level(logging.INFO):
        callback.LogValidationMetricsCallback()(_param(5, acc))
        callback.LogValidationMetricsCallback()(_param(5, None))  # no metric: nothing logged
    lines = [r.getMessage() for r in caplog.records if "Validation" in r.getMessage()]
    assert lines == ["Epoch[2] Validation-accuracy=1.000000"]  # MXNet 1.9.1's format


_ROOT_LEVEL_ONLY = """
import logging, sys
sys.path.insert(0, {root!r})
logging.getLogger().setLevel(logging.{level})  # no handler configured, as many MXNet scripts do
from lazynd import callback
meter = callback.Speedometer(batch_size=5, frequent=1)
for nbatch in (0, 1):
    meter(callback.BatchEndParam(epoch=3, nbatch=nbatch, eval_metric=None, locals=None))
"""


@pytest.mark.parametrize(("level", "shown"), [("INFO", True), ("WARNING", False)])
def test_raising_the_root_level_alone_shows_the_training_lines_as_under_mxnet(level, shown) -> None:
    # MXNet logs with logging.info, which gives the root logger a stderr handler when it has none
    script = _ROOT_LEVEL_ONLY.format(root=str(Path(__file__).resolve().parents[2]), level=level)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert ("Iter[3] Batch [1]" in done.stderr) is shown, done.stderr


def test_a_speedometers_reset_leaves_a_composite_metrics_epoch_value(caplog) -> None:
    # fit logs Train- values with get_global_name_value after the last batch's callback;
    # a list of metrics (a composite) gave NaN there once a Speedometer had reset its local period
    composite = metric.create(["acc"])
    _speedometer_lines(caplog, auto_reset=True, eval_metric=composite)  # logs (and resets) at batches 2 and 4
    assert np.isnan(composite.get_name_value()[0][1])
    assert composite.get_global_name_value() == [("accuracy", 0.4)]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: callback.Speedometer(batch_size="x"), "Speedometer: batch_size must be an int >= 1, got 'x'"),
        (lambda: callback.Speedometer(batch_size=0), "Speedometer: batch_size must be an int >= 1, got 0"),
        (lambda: callback.Speedometer(batch_size=10, frequent=-1), "Speedometer: frequent must be a number > 0"),
        (lambda: callback.Speedometer(batch_size=10, frequent=None), "Speedometer: frequent must be a number > 0"),
        (lambda: callback.Speedometer(batch_size=10, frequent=float("inf")), "frequent must be a number > 0"),
        (lambda: callback.log_train_metric(0), "log_train_metric: period must be a number > 0 (of batches), got 0"),
        (lambda: callback.log_train_metric("2"), "log_train_metric: period must be a number > 0 (of batches), got '2'"),
        (lambda: callback.ProgressBar(total=None), "ProgressBar: total must be an int >= 1, got None"),
    ],
)
def test_batch_callback_counts_that_are_not_positive_ints_are_refused_by_name(make, message):
    with pytest.raises(DataError, match=re.escape(message)):
        make()


@pytest.mark.parametrize(
    "made",
    [
        callback.Speedometer(batch_size=10, frequent=1),
        callback.log_train_metric(1),
        callback.ProgressBar(4),
        callback.LogValidationMetricsCallback(),
    ],
)
def test_a_batch_callback_called_with_something_else_than_a_batch_end_param_names_itself(made):
    owner = getattr(made, "__qualname__", type(made).__name__).split(".")[0]
    with pytest.raises(DataError, match=f"{owner}: expected a BatchEndParam"):
        made(5)
