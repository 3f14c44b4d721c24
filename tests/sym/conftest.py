"""Shared fixtures of the symbolic tests: an engine that records the name of every operation pushed."""

from __future__ import annotations

import pytest

from lazynd import engine
from lazynd.engine import NaiveEngine


class _RecordingEngine(NaiveEngine):
    """The naive engine, remembering the name of every operation pushed."""

    def __init__(self):
        super().__init__()
        self.names = []

    def push(self, fn, args, reads, writes, name="op", device=None, inline_ok=False):
        self.names.append(name)
        super().push(fn, args, reads, writes, name, device, inline_ok)


@pytest.fixture
def recording_engine():
    """The naive engine, recording every operation pushed while the test runs; the threaded one again after."""
    engine.set_engine("naive")
    recorder = _RecordingEngine()
    engine._engine = recorder
    yield recorder
    engine.set_engine("threaded")
