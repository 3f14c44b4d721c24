"""lazynd_sym: symbolic graphs of lazynd's operators, their passes and executors.

``import lazynd as mx; mx.sym.Variable('data')``.  One function per registered
operator is generated here; operators registered after import resolve on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from lazynd.ndarray.contrib_updates import contrib_update_functions as _contrib_update_functions
from lazynd.ndarray.namespaces import PREFIXES as _PREFIXES
from lazynd.ndarray.namespaces import OperatorNamespace as _OperatorNamespace
from lazynd.ops import registry as _registry

from . import _internal as _internal  # mx.sym._internal, MXNet's module of underscore operators
from . import passes, random
from . import sparse as sparse  # mx.sym.sparse: refused by name (lazynd arrays are all dense)
from .attribute import AttrScope
from .control_flow import FUNCTIONS as _CONTROL_FLOW
from .creation import Group, Variable, make_function, var
from .executor import Executor
from .functions import (
    arange,
    eye,
    full,
    histogram,
    hypot,
    linspace,
    maximum,
    minimum,
    ones,
    pow,  # noqa: A004 - MXNet's name
    power,
    split_v2,
    zeros,
)
from .functions import rand_zipfian as _rand_zipfian
from .json_format import load, load_json
from .name import NameManager, Prefix
from .symbol import Symbol

_LAZY_MODULES = {
    "model": "lazynd_sym.model",
    "module": "lazynd_sym.module",
    "mod": "lazynd_sym.module",
    "visualization": "lazynd_sym.visualization",
    "viz": "lazynd_sym.visualization",
}


def _install_ops() -> None:
    for public, op in _registry.all_names().items():
        if public not in globals():
            globals()[public] = make_function(op, public)


_install_ops()


def _namespace(namespace: str, functions: dict | None = None) -> _OperatorNamespace:
    """``mx.sym.<namespace>``: its functions name their nodes by the short name, as MXNet's
    (``mx.sym.linalg.gemm2`` -> ``gemm20``)."""
    prefixes = [p for p in _PREFIXES[namespace] if p]

    def resolve(name: str) -> Any:
        short = next((name[len(p) :] for p in prefixes if name.startswith(p)), name)
        return make_function(_registry.get(name), short)

    return _OperatorNamespace("mx.sym", namespace, resolve, functions)


# mx.sym.linalg.gemm2, mx.sym.contrib.<op>, mx.sym.image.<op>, mx.sym.op.<op>: MXNet's sub-namespaces
op = _namespace("op")


def _scale_input(value: Any, like: Symbol) -> Symbol:
    """``rescale_grad`` of the contrib updates as a (1,) input."""
    return value if isinstance(value, Symbol) else full((1,), value)


def _underscore_operator(name: str) -> Any:
    return make_function(_registry.get(name), name.lstrip("_"))


# foreach, while_loop, cond: control-flow nodes (lazynd_sym.control_flow); rand_zipfian: a Python function, as in MXNet; the
# list-taking optimizer updates as in mx.nd.contrib
_CONTRIB_FUNCTIONS = {
    **_CONTROL_FLOW,
    "rand_zipfian": _rand_zipfian,
    **_contrib_update_functions(_underscore_operator, _scale_input),
}
contrib = _namespace("contrib", _CONTRIB_FUNCTIONS)
linalg = _namespace("linalg")
image = _namespace("image")


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        module = importlib.import_module(_LAZY_MODULES[name])
        globals()[name] = module
        return module
    if not name.startswith("__") and _registry.exists(name):
        function = make_function(_registry.get(name), name)
        globals()[name] = function
        return function
    raise AttributeError(f"module 'lazynd_sym' has no attribute {name!r} (no such operator is registered)")


__all__ = [
    "AttrScope",
    "arange",
    "eye",
    "full",
    "histogram",
    "hypot",
    "linspace",
    "maximum",
    "minimum",
    "ones",
    "pow",
    "power",
    "random",
    "split_v2",
    "zeros",
    "Executor",
    "Group",
    "NameManager",
    "Prefix",
    "Symbol",
    "Variable",
    "load",
    "load_json",
    "passes",
    "var",
]
