"""Shared fixtures of the KVStore tests: a fresh in-process store of each type."""

from __future__ import annotations

import pytest

import lazynd_kv


@pytest.fixture(params=["local", "device"])
def kv(request: pytest.FixtureRequest) -> lazynd_kv.KVStore:
    """A new store of each in-process type: 'local' and 'device'."""
    return lazynd_kv.create(request.param)
