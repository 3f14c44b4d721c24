"""Fixtures of the image tests: small detection RecordIO files written with lazynd's own packer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from lazynd import recordio


def boxes_label(objects: Sequence[Sequence[float]], header: Sequence[float] = (2, 5)) -> np.ndarray:
    """MXNet's flat detection label: the header ``[A, B, ...]`` then each object's values."""
    return np.array(list(header) + [v for obj in objects for v in obj], np.float32)


def standard_objects(i: int) -> list[list[float]]:
    """1, 2 or 3 side-by-side boxes for image ``i`` (the data set the MXNet comparisons used)."""
    return [[k % 2, 0.1 + 0.1 * k, 0.2, 0.5 + 0.1 * k, 0.8] for k in range(1 + i % 3)]


WriteRec = Callable[..., str]


@pytest.fixture
def write_det_rec(tmp_path: Path) -> WriteRec:
    """``write_det_rec(labels, name='det')``: an indexed .rec of random PNG images, one per label.

    Image ``i`` is ``(40 + 4 i) x 60`` pixels from ``default_rng(0)``, so the same call
    writes the same bytes MXNet 1.9.1 read in the comparisons quoted by the tests.
    """

    def write(labels: Sequence[np.ndarray], name: str = "det") -> str:
        rng = np.random.default_rng(0)
        base = str(tmp_path / name)
        writer = recordio.MXIndexedRecordIO(base + ".idx", base + ".rec", "w")
        for i, label in enumerate(labels):
            pixels = rng.integers(0, 255, (40 + 4 * i, 60, 3), dtype=np.uint8)
            header = recordio.IRHeader(0, np.asarray(label, np.float32), i, 0)
            writer.write_idx(i, recordio.pack_img(header, pixels, quality=100, img_fmt=".png"))
        writer.close()
        return base + ".rec"

    return write


@pytest.fixture
def det_label() -> Callable[..., np.ndarray]:
    """:func:`boxes_label`, for tests to build labels with."""
    return boxes_label


@pytest.fixture
def standard_det_rec(write_det_rec: WriteRec) -> str:
    """Five images with 1, 2, 3, 1, 2 objects of width 5."""
    return write_det_rec([boxes_label(standard_objects(i)) for i in range(5)])
