"""``mx.model``: train a symbol with ``FeedForward`` and keep it in MXNet checkpoints.

- :mod:`~lazynd_sym.model.feedforward`: :class:`FeedForward`'s training loop over one or
  several devices;
- :mod:`~lazynd_sym.model.predict`: its inference half (``predict``, ``score``);
- :mod:`~lazynd_sym.model.inputs`: its flexible arguments (contexts, data, callbacks)
  turned into one form;
- :mod:`~lazynd_sym.model.checkpoint`: ``save_checkpoint``, ``load_checkpoint`` and the
  epoch-end callback :func:`do_checkpoint` that saves them;
- :mod:`~lazynd_sym.model.loop_helpers`: MXNet's private ``_create_kvstore``,
  ``_initialize_kvstore``, ``_update_params`` and ``_update_params_on_kvstore``, which modules
  users wrote import from here.
"""

from __future__ import annotations

from lazynd.callback import BatchEndParam, LogValidationMetricsCallback
from lazynd.missing_faces import missing_name

from .checkpoint import do_checkpoint, load_checkpoint, load_params, save_checkpoint
from .feedforward import FeedForward
from .loop_helpers import _create_kvstore, _initialize_kvstore, _update_params, _update_params_on_kvstore

__all__ = [
    "BatchEndParam",
    "FeedForward",
    "LogValidationMetricsCallback",
    "_create_kvstore",
    "_initialize_kvstore",
    "_update_params",
    "_update_params_on_kvstore",
    "do_checkpoint",
    "load_checkpoint",
    "load_params",
    "save_checkpoint",
]


def __getattr__(name: str) -> object:
    raise missing_name("model", name, __name__)
