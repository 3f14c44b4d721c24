"""A Module's executor groups, one per set of input shapes, and the group a shared module lends.

A :class:`~lazynd_sym.module.Module` binds a
:class:`~lazynd_sym.module.executor_group.ModuleExecutorGroup` for each set of data and label
shapes it runs (``bind``, and ``forward`` on a batch of other shapes through ``reshape``); every
group shares the parameter arrays of the one before, so they all train the same weights.
:class:`ShapeGroups` keeps the groups of the last :data:`MAX_SHAPE_SETS` sets of shapes used, for
the next time those shapes come: a program whose shapes keep changing would keep them all
otherwise.  :func:`lent_group` checks a ``shared_module`` given to ``bind`` and gives the group
whose arrays it lends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.errors import ArgumentTypeError, DataValueError, LazyNDError
from lazynd.io import DataDesc

from .executor_group import ModuleExecutorGroup

__all__ = ["MAX_SHAPE_SETS", "ShapeGroups", "lent_group"]

MAX_SHAPE_SETS = 64
"""Sets of input shapes whose executors a :class:`~lazynd_sym.module.Module` keeps (see :meth:`Module.reshape`)."""


class ShapeGroups(dict[tuple, ModuleExecutorGroup]):
    """The executor groups by their set of input shapes (``((name, shape), ...)``), the least recently used first."""

    def switch(
        self, data: list[DataDesc], labels: list[DataDesc], bind: Callable[[], ModuleExecutorGroup]
    ) -> ModuleExecutorGroup:
        """The group of these shapes, made the most recently used; ``bind()`` makes it if there is none.

        Past :data:`MAX_SHAPE_SETS` groups the least recently used one leaves (never this one).
        """
        key = tuple((d.name, tuple(d.shape)) for d in data + labels)
        group = self.pop(key, None)
        if group is None:
            group = bind()
        self[key] = group
        if len(self) > MAX_SHAPE_SETS:
            del self[next(iter(self))]
        return group


def lent_group(
    shared_module: Any, module_type: type[Any], needed: list[str] | None = None
) -> ModuleExecutorGroup | None:
    """The executor group whose arrays ``shared_module`` lends to ``bind`` (None: no ``shared_module``).

    ``needed`` are the binding module's parameters and auxiliary states: each must be one the
    lender has, as in MXNet, whose bind fails there (a bucket's own parameter would otherwise be
    bound to zeros that no ``init_params`` reaches: the buckets initialise only the lender's).

    Raises
    ------
    ArgumentTypeError
        When it is not a ``module_type`` (a :class:`~lazynd_sym.module.Module`).
    LazyNDError
        When it is not bound or its parameters are not initialized.
    DataValueError
        When it lacks a parameter or auxiliary state in ``needed``.
    """
    if shared_module is None:
        return None
    if not isinstance(shared_module, module_type):
        raise ArgumentTypeError(f"Module.bind: shared_module is a {type(shared_module).__name__}, not a Module")
    if not (shared_module.binded and shared_module.params_initialized):
        raise LazyNDError("Module.bind: shared_module must be bound and have its parameters initialized")
    group = shared_module._exec_group
    missing = [name for name in needed or () if name not in group.param_names + group.aux_names]
    if missing:
        raise DataValueError(
            f"Module.bind: parameters {missing} are not in shared_module, which has "
            f"{group.param_names + group.aux_names}; a module bound with shared_module (a bucket of a "
            "BucketingModule) may use only the parameters of that module (the default bucket's)"
        )
    return group
