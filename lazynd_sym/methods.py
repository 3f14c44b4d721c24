"""Symbol's method forms of operators (``x.reshape((0, -1))``, ``x.sum(axis=1)``) and its NDArray-only methods.

``Symbol.__getattr__`` finds the registered operator of a method name here and applies it
with the symbol as first input, as NDArray's methods do.  MXNet's Symbol also has NDArray's
value methods (``asnumpy``, ``wait_to_read``...) only to refuse them when called; they are
set on the class here.
"""

from __future__ import annotations

from typing import Any

from lazynd.base import NotImplementedForSymbol

from . import creation
from .symbol import Symbol


def method_operator(name: str) -> Any:
    """The registered operator that ``Symbol.<name>`` applies, if any (as NDArray's methods do)."""
    from lazynd.ops import registry

    return registry.get(name) if registry.exists(name) else None


def operator_method_names() -> set[str]:
    """The operator methods a symbol lists in ``dir``: an NDArray's public methods that are registered operators."""
    from lazynd.ndarray import NDArray

    return {name for name in dir(NDArray) if not name.startswith("_") and method_operator(name) is not None}


def apply_method(op: Any, name: str, data: Symbol, args: tuple, kwargs: dict[str, Any]) -> Symbol:
    """``data.<name>(*args, **kwargs)`` of the operator ``op``: symbols are further inputs, other positionals
    are parameters in order; the node is named for the method (``x.split()`` -> ``split0``), as MXNet's."""
    return creation.invoke(op, (data, *args), kwargs, name.lower())


def _ndarray_only(name: str) -> Any:
    def method(self: Symbol, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedForSymbol(
            f"Symbol.{name}: only an NDArray has it; a symbol holds no values (bind it to an executor, "
            "or use mx.nd for arrays)"
        )

    method.__name__ = name
    method.__doc__ = f"Not for symbols (MXNet's NotImplementedForSymbol): ``{name}`` is an NDArray method."
    return method


# MXNet's Symbol has these NDArray methods only to refuse them when called (hasattr stays True)
for _name in ("asnumpy", "asscalar", "as_in_context", "copy", "wait_to_read", "backward", "detach", "attach_grad"):
    setattr(Symbol, _name, _ndarray_only(_name))
