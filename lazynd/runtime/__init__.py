"""The runtime: the seam between the operators (:mod:`lazynd.ops`) and every face (nd, sym, kv).

- :mod:`.plan`: call plans (shapes, types, kernel choice, output allocation, and every var a
  call reads and writes), cached per call signature;
- :mod:`.device_push`: the one device-aware push to the engine, and its shortcuts for work that is
  ready at push;
- :mod:`.random_state`: the random-number generator of each context and its var;
- :mod:`.features`: MXNet 1.x's ``mx.runtime.Features`` (what this installation can do).
"""

from __future__ import annotations

from .device_push import elements_touched, kernel_context, push, push_to_device, run_if_free, with_generator
from .features import Feature, Features, feature_list
from .plan import CallPlan, Signature, VarAccess, cached_plans, clear_plans, kernel_for, plan_for, signature_of
from .random_state import GeneratorState, generator_for

__all__ = [
    "CallPlan",
    "Feature",
    "Features",
    "GeneratorState",
    "Signature",
    "VarAccess",
    "cached_plans",
    "elements_touched",
    "feature_list",
    "clear_plans",
    "generator_for",
    "kernel_context",
    "kernel_for",
    "plan_for",
    "push",
    "push_to_device",
    "run_if_free",
    "signature_of",
    "with_generator",
]
