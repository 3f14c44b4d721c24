"""A module's parameters on the host: made to the executors' shapes, filled from given values or an initializer.

The host copies (``arg_params``, ``aux_params``) are what ``get_params`` returns
and checkpoints save; :func:`fill_params` gives each a value as MXNet's
``init_params`` does: from the given dict where it names the parameter, from
the initializer otherwise (with the variable's attributes, so an ``init``
attribute on a variable wins), a missing name being an error unless allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lazynd import initializer as init_module
from lazynd import ndarray as nd
from lazynd.arguments import flag
from lazynd.errors import ArgumentTypeError, DataError, DataTypeError, ParameterError, ShapeError

__all__ = ["fill_params", "reject_unknown_params", "zeros_like_first"]


def zeros_like_first(names: Sequence[str], per_device: Sequence[list[Any]]) -> dict[str, Any]:
    """Host arrays of zeros shaped like each name's array on the first device.

    Examples
    --------
    >>> import lazynd as mx
    >>> {k: v.shape for k, v in zeros_like_first(["w"], [[mx.nd.ones((2, 3))]]).items()}
    {'w': (2, 3)}
    """
    return {
        name: nd.zeros(arrays[0].shape, dtype=arrays[0].dtype) for name, arrays in zip(names, per_device, strict=True)
    }


def fill_params(
    table: dict[str, Any],
    given: dict[str, Any] | None,
    initializer: Any,
    allow_missing: bool,
    attrs: dict[str, dict[str, str]],
) -> None:
    """Set every array of ``table`` from ``given`` (same name and shape) or, where it is not named, ``initializer``.

    A name ``given`` lacks is an error unless ``allow_missing``; with no
    initializer such a parameter keeps its value.  Names are visited in sorted
    order, as MXNet's ``init_params`` visits them: an initializer that logs or
    draws from one random stream sees the same sequence.

    Examples
    --------
    >>> import lazynd as mx
    >>> table = {"fc_weight": mx.nd.zeros((2,)), "fc_bias": mx.nd.ones((2,))}
    >>> fill_params(table, {"fc_weight": mx.nd.ones((2,))}, mx.init.Constant(3.0), True, {})
    >>> table["fc_weight"].asnumpy().tolist(), table["fc_bias"].asnumpy().tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """
    if initializer is not None and not callable(initializer):
        raise ArgumentTypeError(
            f"init_params: initializer must be an Initializer (a callable), got {type(initializer).__name__}"
        )
    for name, target in sorted(table.items()):
        if given is not None and name in given:
            source = given[name]
            if not isinstance(source, (nd.NDArray, np.ndarray)):
                raise DataError(f"init_params: {name!r} is given as {type(source).__name__}; expected an NDArray")
            if tuple(source.shape) != tuple(target.shape):
                raise ShapeError(
                    f"init_params: {name!r} is given with shape {tuple(source.shape)}, "
                    f"the module needs {tuple(target.shape)}"
                )
            if isinstance(source, np.ndarray):  # a host value, as nd.array would take it
                target[:] = source
            elif source is not target:
                source.copyto(target)
        elif given is not None and not allow_missing:
            raise DataError(f"init_params: {name!r} is not in the given parameters (pass allow_missing=True)")
        elif initializer is not None:
            initializer(init_module.InitDesc(name, attrs.get(name, {})), target)
        elif given is None:
            raise DataError(f"init_params: no initializer and no value for {name!r}")


def check_param_dicts(where: str, arg_params: Any, aux_params: Any) -> None:
    """Refuse, naming it, an ``arg_params`` or ``aux_params`` that is neither a dict nor None (a list,
    a number), before a lookup in it fails with ``argument of type 'float' is not iterable``.

    Examples
    --------
    >>> check_param_dicts("set_params", [1.0], {})
    Traceback (most recent call last):
    ...
    lazynd.errors.DataTypeError: set_params: arg_params must be a dict of name -> NDArray (or None), got list
    """
    for what, given in (("arg_params", arg_params), ("aux_params", aux_params)):
        if given is not None and not isinstance(given, Mapping):
            raise DataTypeError(
                f"{where}: {what} must be a dict of name -> NDArray (or None), got {type(given).__name__}"
            )


def reject_unknown_params(where: str, symbol: Any, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
    """Raise :class:`~lazynd.errors.ParameterError` if the dicts name an argument or state ``symbol`` lacks.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> reject_unknown_params("set_params", net, {"fc_weight": mx.nd.ones((2, 3)), "fc2_bias": mx.nd.ones(2)}, {})
    Traceback (most recent call last):
    ...
    lazynd.errors.ParameterError: set_params: arg_params names 'fc2_bias', which the symbol does not have \
(its arguments: ['data', 'fc_weight', 'fc_bias']); pass allow_extra=True to ignore it
    """
    for what, given, known in (
        ("arg_params", arg_params, symbol.list_arguments()),
        ("aux_params", aux_params, symbol.list_auxiliary_states()),
    ):
        for name in given or {}:
            if name not in known:
                kind = "arguments" if what == "arg_params" else "auxiliary states"
                raise ParameterError(
                    f"{where}: {what} names {name!r}, which the symbol does not have "
                    f"(its {kind}: {known}); pass allow_extra=True to ignore it"
                )


def init_flags(owner: str, allow_missing: Any, force_init: Any) -> tuple[bool, bool]:
    """``allow_missing`` and ``force_init`` of ``owner``'s ``init_params`` as flags (an array of several
    elements, which has no truth, refused by name)."""
    return flag(owner, "allow_missing", allow_missing), flag(owner, "force_init", force_init)


def check_set_params(
    symbol: Any, arg_params: Any, aux_params: Any, allow_missing: Any, force_init: Any, allow_extra: Any
) -> tuple[bool, bool]:
    """The checks of ``set_params``: the dicts, the three flags (an array of several elements, which
    has no truth, refused by name) and, with ``allow_missing`` but not ``allow_extra``, names that
    ``symbol`` lacks; returns ``allow_missing`` and ``force_init`` for ``init_params``."""
    check_param_dicts("set_params", arg_params, aux_params)
    allow_missing, force_init, allow_extra = (
        flag("set_params", name, value)
        for name, value in (("allow_missing", allow_missing), ("force_init", force_init), ("allow_extra", allow_extra))
    )
    if allow_missing and not allow_extra and symbol is not None:
        reject_unknown_params("set_params", symbol, arg_params, aux_params)
    return allow_missing, force_init
