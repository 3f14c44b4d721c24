"""What every dist_sync scenario of kv_dist_worker.py shares: a check that raises, and a large key's size."""

from __future__ import annotations


def check(cond: bool, what: str) -> None:
    """Raise ``AssertionError(what)`` unless ``cond``: a failed check ends the worker with its message."""
    if not cond:
        raise AssertionError(what)


BIG = 300_001  # 1.2 MB of float32: reduced alone; not a multiple of 2 or 3
