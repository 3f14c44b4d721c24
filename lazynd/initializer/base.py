"""The initializer base class and what every initializer shares: ``Initializer`` (filling a parameter as its
name's suffix asks, or as its ``__init__`` attribute says), ``InitDesc``, the registry, ``create`` (an
initializer from a name or a ``dumps()`` string) and the bilinear upsampling filter.
"""

from __future__ import annotations

import importlib
import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..class_registry import check_arguments, is_config, make_register, parse_config
from ..errors import ArgumentValueError, DataError, DataTypeError, DataValueError, ShapeError
from ..log import get_logger

_REGISTRY: dict[str, type[Initializer]] = {}
_log = get_logger("lazynd.initializer")  # the package's logger, as users know it


register = make_register(_REGISTRY)
"""Register an initializer class under its lower-case name (and aliases) for ``create`` and ``__init__``
attributes: ``@register``, ``@register("alias")`` or ``register(klass)``."""


class InitDesc(str):
    """A parameter name carrying the variable's attributes and a fallback initializer."""

    attrs: dict[str, str]
    global_init: Initializer | None

    def __new__(
        cls, name: str, attrs: dict[str, str] | None = None, global_init: Initializer | None = None
    ) -> InitDesc:
        if attrs is not None and not isinstance(attrs, Mapping):
            raise DataTypeError(f"InitDesc {name!r}: attrs must be a dict of attribute -> value, got {attrs!r}")
        desc = super().__new__(cls, name)
        desc.attrs = dict(attrs or {})
        desc.global_init = global_init
        return desc


class Initializer:
    """Base class; subclasses override ``_init_weight`` (and others if they need to).

    A parameter is filled as its ``__init__`` attribute says, else as its name's suffix asks
    (``*_weight``, ``*_bias``, ``*_gamma``...).  A name given as a plain string (MXNet 0.9's call)
    also follows MXNet's older rule for a SpatialTransformer's localisation layer: ``stn_loc*``
    weights start at zero and biases at the identity transform ``[1, 0, 0, 0, 1, 0]``.

    Two initializers are equal when they are of one class with the same arguments, as in MXNet.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[Any], str] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._arguments_text() == other._arguments_text()

    def __hash__(self) -> int:
        return hash((type(self), self._arguments_text()))

    def _arguments_text(self) -> str:
        """The constructor's arguments as sorted JSON (arrays as lists; other objects by ``repr``)."""
        return json.dumps(getattr(self, "_kwargs", {}), sort_keys=True, default=_json_value_or_repr)

    def set_verbosity(self, verbose: bool = False, print_func: Callable[[Any], str] | None = None) -> Initializer:
        """Log each array this initializer fills (MXNet's switch); returns the initializer.

        ``print_func(array)`` gives the text logged; by default the array's root mean square.

        Examples
        --------
        >>> from lazynd.initializer import Uniform
        >>> Uniform().set_verbosity(True)._verbose
        True
        """
        if print_func is not None and not callable(print_func):
            raise DataTypeError(f"set_verbosity: print_func must be a function of the array, got {print_func!r}")
        self._verbose = bool(verbose)
        self._print_func = print_func if print_func is not None else _root_mean_square
        return self

    def _verbose_print(self, desc: str, init: Any, arr: Any) -> None:
        if getattr(self, "_verbose", False) and self._print_func is not None:
            _log.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """JSON ``[name, kwargs]`` as MXNet stores it in a variable's ``__init__`` attribute.

        Examples
        --------
        >>> from lazynd.initializer import Constant, Xavier
        >>> Xavier(factor_type="in", magnitude=2).dumps()
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2}]'

        An array argument (``Constant``'s value) is written as a nested list, as MXNet writes it:

        >>> import numpy as np
        >>> Constant(np.array([1.0, 2.0])).dumps()
        '["constant", {"value": [1.0, 2.0]}]'
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs], default=_json_value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())})"

    def __call__(self, desc: str, arr: Any) -> None:
        if not isinstance(desc, str):
            raise DataTypeError(
                f"initializer: the first argument must be the parameter name, got {type(desc).__name__}"
            )
        if not isinstance(arr, nd.NDArray):
            raise DataTypeError(f"initializer: {str(desc)!r} must be filled in an NDArray, got {type(arr).__name__}")
        if isinstance(desc, InitDesc) and desc.global_init is None:
            desc.global_init = self
        init = getattr(desc, "attrs", {}).get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        name = str(desc)
        if not isinstance(desc, InitDesc) and name.startswith("stn_loc") and name.endswith(("weight", "bias")):
            # MXNet's rule for a name given as a plain string (MXNet 0.9's call, and 1.x's legacy one): a
            # SpatialTransformer's localisation layer starts at the identity transform.  An InitDesc
            # (Module, FeedForward) goes by its suffix alone, as in MXNet 1.x.
            self._init_localisation(name, arr)
        else:
            self._init_by_name(name, arr)
        self._verbose_print(desc, "default", arr)

    def _init_localisation(self, name: str, arr: Any) -> None:
        if name.endswith("weight"):
            self._init_zero(name, arr)
        elif tuple(arr.shape) != (6,):
            raise ShapeError(
                f"initializer: {name!r} is a SpatialTransformer's affine bias, of shape (6,); got {tuple(arr.shape)}"
            )
        else:
            arr[:] = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])

    def _init_by_name(self, name: str, arr: Any) -> None:
        """Fill ``arr`` as its name's suffix asks (``*_weight``, ``*_bias``, ``*_gamma``...)."""
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.endswith("bias"):
            self._init_bias(name, arr)
        elif name.endswith("gamma"):
            self._init_gamma(name, arr)
        elif name.endswith("beta"):
            self._init_beta(name, arr)
        elif name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith("moving_mean") or name.endswith("moving_inv_var") or name.endswith("moving_avg"):
            self._init_zero(name, arr)
        elif name.endswith("moving_var"):
            self._init_one(name, arr)
        elif name.endswith("min"):
            self._init_zero(name, arr)
        elif name.endswith("max"):
            self._init_one(name, arr)
        else:
            self._init_default(name, arr)

    def _init_bilinear(self, name: str, arr: Any) -> None:
        arr[:] = bilinear_filter(name, tuple(arr.shape))

    def _init_zero(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_one(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_bias(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_gamma(self, _: str, arr: Any) -> None:
        arr[:] = 1.0

    def _init_beta(self, _: str, arr: Any) -> None:
        arr[:] = 0.0

    def _init_weight(self, name: str, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not initialize weights ({name})")

    def _init_default(self, name: str, _: Any) -> None:
        raise ArgumentValueError(
            f"initializer: do not know how to initialize {name!r}: the name must end in weight, bias, gamma, beta, "
            "moving_mean or moving_var, or the variable needs an __init__ attribute"
        )


def _root_mean_square(arr: Any) -> str:
    """``norm(arr) / sqrt(size)`` as text: what :meth:`Initializer.set_verbosity` logs by default."""
    values = _host_array(arr).astype(np.float64)
    return str(float(np.sqrt(np.mean(values * values)))) if values.size else "0.0"


def _check_number(owner: str, name: str, value: object) -> None:
    if not _is_number(value):
        raise DataTypeError(f"{owner}: {name} must be a number, got {value!r}")


def _is_number(value: object) -> bool:
    """Whether ``value`` is a real number (Python's or NumPy's)."""
    return isinstance(value, numbers.Real)


def _host_array(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _json_value(value: Any) -> Any:
    """``json.dumps``'s ``default``: an NDArray, NumPy array or NumPy scalar as plain lists and numbers."""
    if hasattr(value, "asnumpy") or isinstance(value, (np.ndarray, np.generic)):
        return _host_array(value).tolist()
    raise DataError(f"initializer: cannot write an argument of type {type(value).__name__} as JSON")


def _json_value_or_repr(value: Any) -> Any:
    try:
        return _json_value(value)
    except DataError:
        return repr(value)


def bilinear_filter(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The float32 weights of a bilinear upsampling filter of ``shape`` (N, C, H, W), as MXNet fills them.

    Every (n, c) slice holds the same H x W tent ``(1 - |x/f - c|) * (1 - |y/f - c|)``, with
    ``f = ceil(W / 2)`` (the upsampling factor of a kernel of width ``2f - f % 2``) and ``c`` the
    tent's centre in units of ``f``; both axes use the width's ``f``.

    Examples
    --------
    >>> bilinear_filter("up_weight", (1, 1, 4, 4))[0, 0, 0]
    array([0.0625, 0.1875, 0.1875, 0.0625], dtype=float32)
    """
    if len(shape) != 4:
        raise ShapeError(f"Bilinear: {name!r} must have 4 dimensions (N, C, H, W), got shape {shape}")
    f = float(np.ceil(shape[3] / 2.0))
    centre = (2 * f - 1 - f % 2) / (2.0 * f)
    across = 1 - np.abs(np.arange(shape[3]) / f - centre)
    down = 1 - np.abs(np.arange(shape[2]) / f - centre)
    tent = (down[:, None] * across[None, :]).astype(np.float32)
    return np.broadcast_to(tent, shape).copy()


def create(spec: str | dict[str, Any] | Initializer, **kwargs: Any) -> Initializer:
    """An initializer from a name (``'xavier'``), a ``dumps()`` string, or an instance.

    Examples
    --------
    >>> create('["uniform", {"scale": 0.5}]').scale
    0.5
    """
    if isinstance(spec, Initializer):
        return spec
    if is_config(spec):
        name, params = parse_config(spec, "init", "initializer.create")
        params = {**params, **kwargs}
    elif isinstance(spec, str):
        name, params = spec, kwargs
    else:
        raise DataTypeError(f"initializer.create: expected a name or JSON string, got {type(spec).__name__}")
    if str(name).lower() == "fusedrnn" and "fusedrnn" not in _REGISTRY:
        _fused_rnn()  # registers itself
    cls = _REGISTRY.get(str(name).lower())
    if cls is None:
        raise DataValueError(f"initializer.create: unknown initializer {name!r}; known: {sorted(_REGISTRY)}")
    check_arguments("initializer.create", name, cls, (), params)
    return cls(**params)


def _fused_rnn() -> type[Initializer]:
    """``FusedRNN``, which lives with ``mx.rnn.FusedRNNCell`` in the symbolic package (imported when first asked)."""
    return importlib.import_module("lazynd_sym.rnn.fused").FusedRNN
