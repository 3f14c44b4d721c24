"""The optimizer tests' shared problem: a weight and four gradients."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def problem() -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(5)
    return rng.standard_normal(6).astype(np.float32), [rng.standard_normal(6).astype(np.float32) * 3 for _ in range(4)]
