"""Where lazynd's log lines go: loggers under ``lazynd``, tagged with the worker's rank in a distributed job.

Every module logs through ``get_logger(__name__)``-style names under ``lazynd``
(``lazynd.callback``; ``lazynd_sym.model`` logs as ``lazynd.sym.model``, the
KVStore as ``lazynd.kv``), never through the root logger, so an application can silence
or redirect all of it at once::

    logging.getLogger("lazynd").setLevel(logging.WARNING)

The records still propagate to the root logger, so ``logging.basicConfig(level=logging.INFO)``
shows the Speedometer and epoch lines as MXNet's scripts expect; so does raising the root
logger's level alone, as under MXNet, whose ``logging.info`` calls configure a root handler
when there is none.  Once a
distributed KVStore knows this process's rank (:func:`set_worker`), each line starts
with ``[rank 1/2]``.

Applications get their own loggers the MXNet way, ``mx.log.get_logger(name="train",
level=mx.log.INFO)``: a handler on stderr or on a file, and a level, set once.

Examples
--------
>>> import logging
>>> from lazynd.log import get_logger
>>> get_logger("lazynd.example").name
'lazynd.example'
>>> get_logger("lazynd.example").getEffectiveLevel() == logging.getLogger().getEffectiveLevel()
True
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

# MXNet's mx.log hands the standard levels on under these names
CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

ROOT = "lazynd"

_worker: tuple[int, int] | None = None  # (rank, number of workers) once a distributed store set it


class _RankFilter(logging.Filter):
    """Prefixes each record's message with ``[rank r/n]`` while a distributed job is running."""

    def filter(self, record: logging.LogRecord) -> bool:
        worker = _worker
        if worker is not None:
            record.msg = f"[rank {worker[0]}/{worker[1]}] {record.msg}"
        return True


_RANK_FILTER = _RankFilter()


class _RootHandlerAsMXNet(logging.Filter):
    """Gives the root logger a handler (``logging.basicConfig()``) when it has none, before a record
    is handled, as MXNet's own ``logging.info(...)`` calls do.

    A program that only raises the root logger's level (``logging.getLogger().setLevel(logging.INFO)``)
    then sees the training lines on stderr as it does under MXNet; Python's last-resort handler
    would show warnings only.  Records below the logger's level never reach a filter, so nothing
    is configured for them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not logging.root.handlers:
            logging.basicConfig()
        return True


_ROOT_HANDLER = _RootHandlerAsMXNet()

# an application logger's lines: level initial, date and time, process, where, message
# (``I1127 09:21:03 24908 train.py:main:12] ...``), as MXNet writes them, without its colours
_APPLICATION_FORMAT = "%(levelname).1s%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d] %(message)s"
_APPLICATION_DATE_FORMAT = "%m%d %H:%M:%S"


def get_logger(
    name: str | None = None,
    filename: str | None = None,
    filemode: str | None = None,
    level: int = logging.WARNING,
) -> logging.Logger:
    """The logger ``name``: lazynd's own loggers, or an application's, as ``mx.log.get_logger`` gives it.

    Two kinds of name:

    - ``lazynd`` or a name under it: the library's loggers.  Their lines are tagged with the
      rank, and they are left without handler or level, so that they propagate to whatever the
      application configured (``filename``, ``filemode`` and ``level`` are not used).  A logger's
      filters see only the records logged to it (not those of its children), so the rank filter
      goes on each logger handed out here.
    - any other name, as MXNet scripts call it (``get_logger(name="eval", level=logging.INFO)``):
      the first call gives the logger one handler, on ``filename`` (opened with ``filemode``,
      ``"a"`` by default) or on stderr, and sets its ``level``; later calls return it as it is.
      ``name=None`` returns the root logger untouched.

    Examples
    --------
    >>> import logging
    >>> app = get_logger("doctest.app", level=logging.INFO)
    >>> app.level == logging.INFO and len(app.handlers)
    1
    >>> get_logger("doctest.app") is app and len(app.handlers)
    1
    """
    if name is not None and (name == ROOT or name.startswith(ROOT + ".")):
        logger = logging.getLogger(name)
        if _RANK_FILTER not in logger.filters:
            logger.addFilter(_RANK_FILTER)
            logger.addFilter(_ROOT_HANDLER)
        return logger
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_lazynd_configured", False):
        handler: logging.Handler
        if filename:
            handler = logging.FileHandler(filename, filemode or "a")
        else:
            handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_APPLICATION_FORMAT, _APPLICATION_DATE_FORMAT))
        logger.addHandler(handler)
        logger.setLevel(level)
        logger._lazynd_configured = True  # type: ignore[attr-defined]
    return logger


def getLogger(  # noqa: N802 - MXNet's deprecated spelling
    name: str | None = None,
    filename: str | None = None,
    filemode: str | None = None,
    level: int = logging.WARNING,
) -> logging.Logger:
    """MXNet's older name for :func:`get_logger`; it warns, as MXNet's does, and returns the same logger."""
    warnings.warn("getLogger is deprecated, use get_logger instead", DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)


def set_worker(rank: int, num_workers: int) -> None:
    """Tag every later lazynd log line with ``[rank {rank}/{num_workers}]`` (nothing for one worker)."""
    global _worker
    _worker = (rank, num_workers) if num_workers > 1 else None


# the folders of lazynd's three packages, whose frames warn_from_user_code skips
_PACKAGE_FOLDERS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), package) + os.sep
    for package in ("lazynd", "lazynd_sym", "lazynd_kv")
)


def warn_from_user_code(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first calling line outside lazynd.

    A fixed ``stacklevel`` names the user's line only when lazynd calls from one known depth; a
    warning raised under ``Module.fit`` or an optimizer's subclass would name lazynd's own file.
    """
    frame = sys._getframe(1)
    level = 2  # the caller of this function
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_FOLDERS):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
