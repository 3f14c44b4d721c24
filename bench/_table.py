"""Timing and table printing shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def paired_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> tuple[float, float, float]:
    """Median, lowest and highest of each round's ratio of two rows timed back to back in that round:
    steadier than the ratio of the rows' own medians or bests on a host whose speed swings between rounds."""
    ratios = sorted(a / b for a, b in zip(numerators, denominators, strict=True))
    return statistics.median(ratios), ratios[0], ratios[-1]


def print_table(title: str, header: list[str], rows: list[list[object]]) -> None:
    cells = [header] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(cells[0], widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
