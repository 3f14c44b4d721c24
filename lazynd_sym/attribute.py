"""Symbol attributes: the allowed keys and the ``AttrScope`` that applies them to new symbols."""

from __future__ import annotations

import threading
from typing import Any

from lazynd.errors import ArgumentTypeError, LazyNDError, OperatorError, ShapeError
from lazynd.formats.ndarray_record import DTYPE_TO_FLAG, FLAG_TO_DTYPE
from lazynd.ops.params import SYMBOL_ATTRIBUTE_KEYS, parse_dtype, parse_shape
from lazynd.util import is_np_shape

PLAIN_KEYS = SYMBOL_ATTRIBUTE_KEYS  # plain keys a user may give; stored as __key__


def is_attribute_key(key: str) -> bool:
    """Whether ``key`` names a symbol attribute (as opposed to an operator parameter)."""
    return key in PLAIN_KEYS or (len(key) > 4 and key.startswith("__") and key.endswith("__"))


def listed_attrs(attrs: dict[str, str]) -> dict[str, str]:
    """Attributes as MXNet's ``list_attr``/``attr_dict`` list them: each of the plain keys stored as
    ``__key__`` also under ``key``.

    Examples
    --------
    >>> listed_attrs({"__lr_mult__": "2", "__shape__": "(2,)"})
    {'__lr_mult__': '2', '__shape__': '(2,)', 'lr_mult': '2'}
    """
    out = dict(attrs)
    for key in PLAIN_KEYS:
        if f"__{key}__" in attrs:
            out.setdefault(key, attrs[f"__{key}__"])
    return out


def normalize_attrs(attrs: dict[str, Any] | None, where: str = "symbol") -> dict[str, str]:
    """Check attribute keys and store them as ``__key__`` strings.

    Examples
    --------
    >>> normalize_attrs({"ctx_group": "dev1", "__mood__": "ok"})
    {'__ctx_group__': 'dev1', '__mood__': 'ok'}
    """
    if attrs is not None and not isinstance(attrs, dict):
        raise ArgumentTypeError(
            f"{where}: attributes must be a dict of str to str such as {{'ctx_group': 'dev1'}}, "
            f"got {type(attrs).__name__} {attrs!r}"
        )
    out: dict[str, str] = {}
    for key, value in (attrs or {}).items():
        if not isinstance(key, str) or not is_attribute_key(key):
            # a ValueError, as MXNet's Variable raises for it
            raise OperatorError(
                f"{where}: attribute {key!r} is not allowed; use one of {', '.join(PLAIN_KEYS)} "
                "or a name of the form __xxx__"
            )
        stored = key if key.startswith("__") else f"__{key}__"
        out[stored] = value if isinstance(value, str) else str(value)
    return out


def parse_shape_hint(value: Any, where: str) -> tuple[int, ...]:
    """A variable's shape (``shape=`` or its ``__shape__`` attribute) as a tuple: 0 is an unknown size,
    or under ``mx.np_shape`` a zero size, where -1 is the unknown one.

    Examples
    --------
    >>> parse_shape_hint("(2, 0)", "Variable 'x'")
    (2, 0)
    """
    try:
        shape = parse_shape(value)
    except (ValueError, TypeError, OverflowError):
        shape = None
    lowest = -1 if is_np_shape() else 0
    if shape is None or any(d < lowest for d in shape):
        raise ShapeError(
            f"{where}: shape {value!r} is not a shape; expected a tuple of non-negative ints such as (2, 3) "
            "(-1 for an unknown size under mx.np_shape)"
        )
    return tuple(shape)


def check_dtype_hint(value: Any, where: str) -> str:
    """A variable's dtype (``dtype=`` or its ``__dtype__`` attribute) as a NumPy name."""
    try:
        return parse_dtype(value)
    except ValueError as err:
        raise LazyNDError(f"{where}: dtype {value!r} is not supported: {err}") from None


def dtype_to_attr(value: Any, where: str) -> str:
    """A variable's dtype as MXNet stores it in ``__dtype__``: mshadow's type flag, as text.

    Examples
    --------
    >>> dtype_to_attr("float64", "Variable 'x'")
    '1'
    """
    import numpy as np

    return str(DTYPE_TO_FLAG[np.dtype(check_dtype_hint(value, where))])


def dtype_from_attr(value: str, where: str) -> str:
    """The NumPy name of a ``__dtype__`` attribute: MXNet's type flag (``'1'``) or a dtype name.

    Examples
    --------
    >>> dtype_from_attr("2", "__dtype__"), dtype_from_attr("float64", "__dtype__")
    ('float16', 'float64')
    """
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("-").isdigit():
        flag = int(text)
        if flag not in FLAG_TO_DTYPE:
            known = ", ".join(f"{k} ({d.name})" for k, d in FLAG_TO_DTYPE.items())
            raise LazyNDError(f"{where}: dtype flag {value!r} is not supported; expected one of {known}")
        return FLAG_TO_DTYPE[flag].name
    return check_dtype_hint(value, where)


class AttrScope:
    """Attributes given to every symbol created inside the scope.

    Examples
    --------
    >>> with AttrScope(ctx_group="stage1"):
    ...     AttrScope.current.get(None)
    {'__ctx_group__': 'stage1'}
    """

    _local = threading.local()

    def __init__(self, **attrs: Any) -> None:
        self._attr = normalize_attrs(attrs, "AttrScope")
        self._old: AttrScope | None = None

    def get(self, attr: dict[str, Any] | None, where: str = "symbol") -> dict[str, str]:
        """The scope's attributes updated with ``attr`` (which wins); ``where`` names the caller in errors."""
        merged = dict(self._attr)
        merged.update(normalize_attrs(attr, where))
        return merged

    def __enter__(self) -> AttrScope:
        self._old = _current()
        # nested scopes accumulate
        merged = dict(self._old._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._local.value = self
        return self

    def __exit__(self, *exc: Any) -> None:
        AttrScope._local.value = self._old

    class _Current:
        def __get__(self, obj: Any, owner: Any) -> AttrScope:
            return _current()

    current = _Current()


_default = AttrScope()


def _current() -> AttrScope:
    return getattr(AttrScope._local, "value", None) or _default
