"""``FeedForward`` over a symbol generator (``sym_gen``): one executor group per bucket key.

MXNet's ``FeedForward`` takes, instead of a symbol, a function of a bucket key that returns
one (the bucketing examples, bi-lstm-sort among them, pass their ``sym_gen``).  The symbol of
the iterator's ``default_bucket_key`` is the model's: its arguments name the parameters, and
its group of executors is bound first.  A batch of another ``bucket_key`` runs on a group of
its own, bound on first use with the default group's parameter, gradient and auxiliary
arrays, so that one update serves every bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.errors import DataError

from ..executor_group import DataParallelExecutorGroup
from ..symbol import Symbol

__all__ = ["BucketGroups", "default_symbol"]


def default_symbol(sym_gen: Callable[[Any], Any], data: Any, where: str) -> Symbol:
    """``sym_gen``'s symbol for the ``default_bucket_key`` of the iterator ``data``."""
    key = getattr(data, "default_bucket_key", None)
    if key is None:
        raise DataError(
            f"{where}: the model was given a sym_gen, which needs an iterator with a default_bucket_key "
            f"(got a {type(data).__name__} without one)"
        )
    symbol = sym_gen(key)
    if isinstance(symbol, tuple):  # a BucketingModule-style sym_gen: (symbol, data_names, label_names)
        symbol = symbol[0]
    if not isinstance(symbol, Symbol):
        raise DataError(f"{where}: sym_gen({key!r}) returned a {type(symbol).__name__}, expected a Symbol")
    return symbol


class BucketGroups:
    """The executor group each batch runs on: the default one, or its bucket's.

    ``make(symbol, input_descs, shared_group, key)`` binds a group; ``on_new`` is called with each
    group made here (to install a monitor on it).
    """

    def __init__(
        self,
        sym_gen: Callable[[Any], Any] | None,
        default_key: Any,
        default: DataParallelExecutorGroup,
        make: Callable[[Symbol, list, DataParallelExecutorGroup, Any], DataParallelExecutorGroup],
        input_names: tuple[list[str], list[str]],
        on_new: Callable[[DataParallelExecutorGroup], None] | None = None,
    ) -> None:
        self.sym_gen = sym_gen
        self.default_key = default_key
        self.default = default
        self.make = make
        self.data_names, self.label_names = input_names
        self.on_new = on_new
        self.groups: dict[Any, DataParallelExecutorGroup] = {}

    def group_for(self, batch: Any) -> DataParallelExecutorGroup:
        key = getattr(batch, "bucket_key", None)
        if self.sym_gen is None or key is None or key == self.default_key:
            return self.default
        group = self.groups.get(key)
        if group is None:
            symbol = self.sym_gen(key)
            symbol = symbol[0] if isinstance(symbol, tuple) else symbol
            group = self.make(symbol, self._input_descs(batch), self.default, key)
            if self.on_new is not None:
                self.on_new(group)
            self.groups[key] = group
        return group

    def _input_descs(self, batch: Any) -> list:
        """The batch's own ``provide_data``/``provide_label``, or the shapes of its arrays."""
        data = getattr(batch, "provide_data", None) or list(
            zip(self.data_names, [tuple(d.shape) for d in batch.data], strict=False)
        )
        label = getattr(batch, "provide_label", None) or list(
            zip(self.label_names, [tuple(lab.shape) for lab in batch.label or []], strict=False)
        )
        return list(data) + list(label)
