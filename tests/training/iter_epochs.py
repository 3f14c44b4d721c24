"""Reading a data iterator's epoch back as plain Python values."""

from __future__ import annotations

from lazynd.io import DataIter


def epoch_values(it: DataIter) -> list[list[float]]:
    """The first data array of each batch of one pass over `it`, as nested lists."""
    return [batch.data[0].asnumpy().tolist() for batch in it]
