"""How an executor runs its passes, decided once at bind: bulked, and replayed as CUDA graphs.

Bulk execution pushes a whole pass to the engine as one operation (see :mod:`.run`); it is on
unless ``LAZYND_EXEC_BULK=0`` or, without it, MXNet's ``MXNET_EXEC_BULK_EXEC_TRAIN=0`` (executors
with gradients) / ``MXNET_EXEC_BULK_EXEC_INFERENCE=0`` (executors without) turn it off.  A bulked
executor on one GPU replays each pass as a CUDA graph (:mod:`lazynd.backend.cuda.graphs`) unless
``LAZYND_CUDA_GRAPHS=0``, or unless a step draws random numbers (a replay would draw the same ones)
or calls a Python operator (a replay runs the kernels alone).  The settings are read when an
executor is bound, not at every pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lazynd.backend import get_backend
from lazynd.context import Context
from lazynd.environment import flag_setting

__all__ = ["bulk_enabled", "graphs_enabled", "pass_graphs"]


def bulk_enabled(training: bool = False) -> bool:
    """Whether executors bound now push a whole pass as one operation (``LAZYND_EXEC_BULK``, else
    MXNet's ``MXNET_EXEC_BULK_EXEC_TRAIN`` for an executor with gradients (``training``) or
    ``MXNET_EXEC_BULK_EXEC_INFERENCE`` for one without; default on)."""
    mxnet_name = "MXNET_EXEC_BULK_EXEC_TRAIN" if training else "MXNET_EXEC_BULK_EXEC_INFERENCE"
    return flag_setting("LAZYND_EXEC_BULK", mxnet_name, default=True)


def graphs_enabled() -> bool:
    """Whether executors bound now on a GPU replay their passes as CUDA graphs (``LAZYND_CUDA_GRAPHS``,
    default on; ``0`` turns them off)."""
    return flag_setting("LAZYND_CUDA_GRAPHS", default=True)


def pass_graphs(ctx: Context, bulk: bool, passes: Iterable[list[tuple]]) -> Any:
    """The CUDA graphs (a :class:`lazynd.backend.cuda.graphs.LaunchGraphs`) of an executor on ``ctx``
    whose ``passes`` may be replayed: a bulked executor (``bulk``) on one GPU, graphs enabled
    (:func:`graphs_enabled`), no step drawing random numbers or calling a Python operator
    (``Custom``); None where its passes run eagerly."""
    if not (bulk and ctx.device_type == "gpu" and graphs_enabled()):
        return None
    for steps in passes:
        for step in steps:
            node = step[6]
            if node.opdef.draws_random(node.attrs) or node.opdef.name == "Custom":
                return None
    return get_backend(ctx).launch_graphs()
