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

from .errors import LazyNDError

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


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` (which must be ``lazynd`` or under it), its lines tagged with the rank.

    A logger's filters see only the records logged to it (not those of its children), so the
    rank filter goes on each logger handed out here.
    """
    if name != ROOT and not name.startswith(ROOT + "."):
        raise LazyNDError(f"lazynd loggers live under {ROOT!r}, got {name!r}")
    logger = logging.getLogger(name)
    if _RANK_FILTER not in logger.filters:
        logger.addFilter(_RANK_FILTER)
        logger.addFilter(_ROOT_HANDLER)
    return logger


def set_worker(rank: int, num_workers: int) -> None:
    """Tag every later lazynd log line with ``[rank {rank}/{num_workers}]`` (nothing for one worker)."""
    global _worker
    _worker = (rank, num_workers) if num_workers > 1 else None
