"""Executors: a bound symbol compiled into kernel calls over planned storage, and run.

- :mod:`.bind_graph`: the bind-time rewrites of the graph (placement, fusion);
- :mod:`.binding`: the arrays of ``bind`` checked, those of ``simple_bind`` allocated;
- :mod:`.executor`: :class:`Executor`, compiled at bind (passes, storage, steps);
- :mod:`.access`: what each pass reads and writes, from the runtime's plan of each step;
- :mod:`.bulking`: how the passes run, decided at bind (bulked, replayed as CUDA graphs);
- :mod:`.run`: pushing and running the passes;
- :mod:`.placed`: :class:`PlacedExecutor`, nodes on several contexts.
"""

from __future__ import annotations

from .bulking import bulk_enabled
from .executor import Executor
from .placed import PlacedExecutor, needs_placement
from .run import PassRunner

__all__ = ["Executor", "PassRunner", "PlacedExecutor", "bulk_enabled", "needs_placement"]
