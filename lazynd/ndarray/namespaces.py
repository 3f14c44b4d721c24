"""MXNet's operator sub-namespaces (``mx.nd.linalg.gemm2``, ``mx.nd.contrib.X``, ``mx.sym.image.X``).

MXNet registers such operators under a prefixed name (``linalg_gemm2``, ``_contrib_X``,
``_image_X``) and exposes them again, unprefixed, in a sub-namespace of ``nd`` and ``sym``.
An :class:`OperatorNamespace` resolves a name through the registry when it is asked for, so
operators registered later are found too, and a name with no operator says so.  A few names
are Python functions that are no operator (``mx.nd.contrib.foreach``): a namespace is given
those by name and finds them first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UnsupportedError
from ..ops import registry

# namespace -> the prefixes its operators are registered under, most usual first
PREFIXES: dict[str, tuple[str, ...]] = {
    "op": ("",),
    "contrib": ("_contrib_",),
    "linalg": ("linalg_", "_linalg_"),
    "image": ("_image_",),
}


class OperatorNamespace:
    """``<face>.<namespace>.<name>``: the face's function of the operator ``<prefix><name>``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.op.relu(mx.nd.array([-1.0, 2.0])).asnumpy()
    array([0., 2.], dtype=float32)
    """

    def __init__(
        self,
        face: str,
        namespace: str,
        resolve: Callable[[str], Any],
        functions: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        self._where = f"{face}.{namespace}"
        self._prefixes = PREFIXES[namespace]
        self._resolve = resolve
        self._functions = dict(functions or {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._functions:
            return self._functions[name]
        for prefix in self._prefixes:
            if registry.exists(prefix + name):
                return self._resolve(prefix + name)
        raise UnsupportedError(
            f"{self._where}.{name}: not supported by lazynd (no operator {self._prefixes[0]}{name} is registered)"
        )

    def __dir__(self) -> list[str]:
        names = registry.all_names()
        operators = {n[len(p) :] for n in names for p in self._prefixes if n.startswith(p) and len(n) > len(p)}
        return sorted(operators | set(self._functions))

    def __repr__(self) -> str:
        return f"<operator namespace {self._where}>"
