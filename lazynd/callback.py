"""Training callbacks (``mx.callback``): called at the end of each batch or epoch.

Batch-end callbacks receive a ``BatchEndParam`` (``epoch``, ``nbatch``,
``eval_metric``, ``locals``); epoch-end callbacks receive
``(epoch, symbol, arg_params, aux_params)``.

``do_checkpoint`` and ``module_checkpoint``, the epoch-end callbacks that save
checkpoints, belong to the symbolic side (:mod:`lazynd_sym.model.checkpoint`):
``mx.callback.<name>`` resolves them on first use, so importing this module never
imports ``lazynd_sym``.
"""

from __future__ import annotations

import importlib
import logging
import math
import numbers
import sys
import time
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from .errors import DataError
from .log import ROOT, get_logger

_log = get_logger(__name__)

BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])

# names handed on from lazynd_sym, imported when first asked for
_FROM_SYMBOLIC = {
    "do_checkpoint": "lazynd_sym.model.checkpoint",
    "module_checkpoint": "lazynd_sym.model.checkpoint",
    "save_checkpoint": "lazynd_sym.model.checkpoint",  # MXNet's callback module hands it on too
}


def __getattr__(name: str) -> Any:
    module_name = _FROM_SYMBOLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_SYMBOLIC))


def _positive_count(owner: str, name: str, value: Any) -> int:
    """``value`` if it is an int >= 1 (a batch size, a period), else a ``DataError`` naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise DataError(f"{owner}: {name} must be an int >= 1, got {value!r}")
    return int(value)


def _positive_period(owner: str, name: str, value: Any) -> int | float:
    """``value`` if it is a number > 0, else a ``DataError`` naming ``owner``.

    A period of batches may be a float: MXNet's tutorials compute it with ``/``
    (``Speedometer(batch_size, 20000 / batch_size)``), and MXNet logs where ``nbatch % period == 0``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) < math.inf:
        raise DataError(f"{owner}: {name} must be a number > 0 (of batches), got {value!r}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _not_a_batch_end_param(owner: str, param: Any) -> DataError:
    return DataError(
        f"{owner}: expected a BatchEndParam (epoch, nbatch, eval_metric, locals), got {type(param).__name__}"
    )


def _batch_number(owner: str, param: Any) -> int:
    """``param.nbatch``, or a ``DataError`` naming ``owner`` when ``param`` is not a ``BatchEndParam``."""
    try:
        return int(param.nbatch)
    except (AttributeError, TypeError, ValueError):
        raise _not_a_batch_end_param(owner, param) from None


def log_train_metric(period: float, auto_reset: bool = False) -> Callable[[BatchEndParam], None]:
    """Batch-end callback logging the training metric every ``period`` batches."""
    period = _positive_period("log_train_metric", "period", period)

    def log(param: BatchEndParam) -> None:
        if _batch_number("log_train_metric", param) % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                _log.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()

    return log


class Speedometer:
    """Log samples per second (and the metric) every ``frequent`` batches.

    With ``auto_reset`` each log starts a new local period of the metric (``reset_local``, as
    MXNet 1.x), so the next log covers the batches since; the epoch's value is kept.  The lines
    are MXNet 1.9.1's: ``Epoch[e] Batch [a-b]`` for the batches a log covers (``[0-b]`` without
    ``auto_reset``), ``Iter[e] Batch [b]`` with no metric.

    Examples
    --------
    >>> meter = Speedometer(batch_size=100, frequent=10)
    >>> for nbatch in range(12):
    ...     meter(BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=None, locals=None))
    >>> meter.last_speed > 0
    True
    """

    def __init__(self, batch_size: int, frequent: float = 50, auto_reset: bool = True) -> None:
        self.batch_size = _positive_count("Speedometer", "batch_size", batch_size)
        self.frequent = _positive_period("Speedometer", "frequent", frequent)
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.last_speed = 0.0

    def __call__(self, param: BatchEndParam) -> None:
        count = _batch_number("Speedometer", param)
        if self.last_count > count:
            self.init = False  # a new epoch started
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.perf_counter()
            return
        if count % self.frequent != 0:
            return
        elapsed = max(time.perf_counter() - self.tic, 1e-9)
        self.last_speed = self.frequent * self.batch_size / elapsed
        epoch, speed = param.epoch, self.last_speed
        if param.eval_metric is None:
            _log.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", epoch, count, speed)
        else:
            # MXNet 1.9.1's lines, which log parsers read: the batches the values cover, then name=value
            text = "".join(f"\t{name}={value:f}" for name, value in param.eval_metric.get_name_value())
            if self.auto_reset:
                param.eval_metric.reset_local()
                _log.info(
                    "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec%s",
                    epoch,
                    count - self.frequent,
                    count,
                    speed,
                    text,
                )
            else:
                _log.info("Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec%s", epoch, count, speed, text)
        self.tic = time.perf_counter()


class ProgressBar:
    """Log a text progress bar ``[====...]`` of ``total`` batches."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.total = _positive_count("ProgressBar", "total", total)
        self.bar_len = length

    def render(self, count: int) -> str:
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        return f"[{'=' * filled}{'-' * (self.bar_len - filled)}] {percents}%"

    def __call__(self, param: BatchEndParam) -> None:
        _log.info("%s\r", self.render(_batch_number("ProgressBar", param)))


class EpochProgress:
    """A tqdm bar over one epoch's batches showing samples/s and the current metric.

    Shown only when ``enabled`` and stderr is a terminal (so logs and CI output
    stay clean); otherwise every method does nothing.  While the bar is drawn, the
    console handlers of the root and ``lazynd`` loggers print through ``tqdm.write``,
    so a Speedometer line (or the application's own) goes above the bar instead of
    over it.
    """

    def __init__(
        self, epoch: int, total: int | None, batch_size: int, enabled: bool = True, stream: Any = None
    ) -> None:
        stream = sys.stderr if stream is None else stream
        self.batch_size = batch_size
        self.bar = None
        self._log_redirect: Any = None
        self.start = time.perf_counter()
        self.samples = 0
        if enabled and getattr(stream, "isatty", lambda: False)():
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            self.bar = tqdm(
                total=total, desc=f"Epoch {epoch}", unit="batch", file=stream, leave=False, dynamic_ncols=True
            )
            self._log_redirect = logging_redirect_tqdm([logging.getLogger(), logging.getLogger(ROOT)], tqdm)
            self._log_redirect.__enter__()

    def update(self, eval_metric: Any = None) -> None:
        self.samples += self.batch_size
        if self.bar is None:
            return
        postfix = {"samples/s": f"{self.samples / max(time.perf_counter() - self.start, 1e-9):.0f}"}
        if eval_metric is not None:
            postfix.update({name: f"{value:.4f}" for name, value in eval_metric.get_name_value()})
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        """Remove the bar and give the log handlers back (safe to call twice)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self._log_redirect is not None:
            self._log_redirect.__exit__(None, None, None)
            self._log_redirect = None


class LogValidationMetricsCallback:
    """Epoch-end callback (``eval_end_callback`` of ``fit``) logging each validation metric.

    Examples
    --------
    >>> import lazynd as mx
    >>> metric = mx.metric.create("acc")
    >>> metric.update([mx.nd.array([1])], [mx.nd.array([[0.2, 0.8]])])
    >>> mx.callback.LogValidationMetricsCallback()(BatchEndParam(0, 1, metric, None))
    """

    def __call__(self, param: BatchEndParam) -> None:
        if not hasattr(param, "eval_metric"):
            raise _not_a_batch_end_param(type(self).__name__, param)
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            _log.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
