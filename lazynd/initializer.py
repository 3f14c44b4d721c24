"""Parameter initializers (``mx.init``).

An initializer is called with a parameter's name and its NDArray and fills
the array according to the name's suffix (``*_weight``, ``*_bias``,
``*_gamma``, ``*_beta``, ``*_moving_mean``, ``*_moving_var``).  A variable's
``__init__`` attribute (an initializer's ``dumps()``) overrides that choice.
Random draws go through ``lazynd.random``, so ``mx.random.seed`` makes them
reproducible.
"""

from __future__ import annotations

import importlib
import inspect
import json
import numbers
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import ndarray as nd
from . import random as _random
from .class_registry import make_register
from .errors import DataError, ShapeError
from .log import get_logger

_REGISTRY: dict[str, type[Initializer]] = {}
_log = get_logger(__name__)


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
        desc = super().__new__(cls, name)
        desc.attrs = dict(attrs or {})
        desc.global_init = global_init
        return desc


class Initializer:
    """Base class; subclasses override ``_init_weight`` (and others if they need to).

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
        >>> Uniform().set_verbosity(True)._verbose
        True
        """
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
            raise DataError(f"initializer: the first argument must be the parameter name, got {type(desc).__name__}")
        if not isinstance(arr, nd.NDArray):
            raise DataError(f"initializer: {str(desc)!r} must be filled in an NDArray, got {type(arr).__name__}")
        if isinstance(desc, InitDesc) and desc.global_init is None:
            desc.global_init = self
        init = getattr(desc, "attrs", {}).get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        self._init_by_name(str(desc), arr)
        self._verbose_print(desc, "default", arr)

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
        raise DataError(
            f"initializer: do not know how to initialize {name!r}: the name must end in weight, bias, gamma, beta, "
            "moving_mean or moving_var, or the variable needs an __init__ attribute"
        )


@register()
class Load(Initializer):
    """Take values from saved parameters (a dict or an ``nd.save`` file), else ``default_init``.

    ``arg:``/``aux:`` prefixes of checkpoint files are stripped.
    """

    def __init__(
        self, param: str | dict[str, Any], default_init: Initializer | None = None, verbose: bool = False
    ) -> None:
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise DataError(f"Load: expected a dict of named arrays, got {type(param).__name__}")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose
        super().__init__()

    def __call__(self, name: str, arr: Any) -> None:
        if name in self.param:
            value = self.param[name]
            if tuple(value.shape) != tuple(arr.shape):
                raise ShapeError(
                    f"Load: parameter {name!r} has shape {tuple(value.shape)} in the file but {tuple(arr.shape)} in the model"
                )
            arr[:] = value.asnumpy() if hasattr(value, "asnumpy") else value
        elif self.default_init is not None:
            self.default_init(name, arr)
        else:
            raise DataError(f"Load: {name!r} is not among the loaded parameters and no default_init was given")


@register()
class Mixed(Initializer):
    """Pick the initializer of the first regular expression that matches the name.

    Examples
    --------
    >>> import lazynd as mx
    >>> init = Mixed(["conv.*", ".*"], [Constant(0.5), Uniform(0.1)])
    >>> arr = mx.nd.zeros((2, 2)); init("conv1_weight", arr); arr.asnumpy().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """

    def __init__(self, patterns: Sequence[str], initializers: Sequence[Initializer]) -> None:
        if len(patterns) != len(initializers):
            raise DataError(f"Mixed: {len(patterns)} patterns but {len(initializers)} initializers")
        for init in initializers:
            if not callable(init):
                raise DataError(f"Mixed: each initializer must be an Initializer, got {init!r}")
        self.map = [(_compiled("Mixed", p), init) for p, init in zip(patterns, initializers, strict=False)]
        super().__init__()

    def __call__(self, name: str, arr: Any) -> None:
        for pattern, init in self.map:
            if pattern.match(name):
                init(name, arr)
                return
        raise DataError(f"Mixed: no pattern matches {name!r}; add a '.*' pattern as the default")


def _root_mean_square(arr: Any) -> str:
    """``norm(arr) / sqrt(size)`` as text: what :meth:`Initializer.set_verbosity` logs by default."""
    values = _host_array(arr).astype(np.float64)
    return str(float(np.sqrt(np.mean(values * values)))) if values.size else "0.0"


def _compiled(owner: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except (re.error, TypeError) as err:
        raise DataError(f"{owner}: {pattern!r} is not a regular expression: {err}") from None


def _check_number(owner: str, name: str, value: object) -> None:
    if not _is_number(value):
        raise DataError(f"{owner}: {name} must be a number, got {value!r}")


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


@register("zeros")
class Zero(Initializer):
    """All zeros."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 0.0


@register("ones")
class One(Initializer):
    """All ones."""

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = 1.0


@register()
class Constant(Initializer):
    """Every weight equal to ``value``."""

    def __init__(self, value: float) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: str, arr: Any) -> None:
        arr[:] = self.value


@register()
class LSTMBias(Initializer):
    """An LSTM's biases: zeros, except the forget gate's (the second of the four gates) set to ``forget_bias``.

    Examples
    --------
    >>> import lazynd as mx
    >>> bias = mx.nd.empty((8,))
    >>> mx.init.LSTMBias(forget_bias=1.0)._init_weight("lstm_i2h_bias", bias)
    >>> bias.asnumpy()
    array([0., 0., 1., 1., 0., 0., 0., 0.], dtype=float32)
    """

    def __init__(self, forget_bias: float = 1.0) -> None:
        _check_number("LSTMBias", "forget_bias", forget_bias)
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, _: str, arr: Any) -> None:
        num_hidden = arr.shape[0] // 4
        arr[:] = 0.0
        arr[num_hidden : 2 * num_hidden] = self.forget_bias


@register()
class Uniform(Initializer):
    """Weights drawn from U(-scale, scale).

    Examples
    --------
    >>> import lazynd as mx
    >>> arr = mx.nd.zeros((100,)); Uniform(0.1)("w_weight", arr)
    >>> bool(abs(arr.asnumpy()).max() <= 0.1)
    True
    """

    def __init__(self, scale: float = 0.07) -> None:
        _check_number("Uniform", "scale", scale)
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: Any) -> None:
        _random.uniform(-self.scale, self.scale, out=arr)


@register()
class Normal(Initializer):
    """Weights drawn from N(0, sigma^2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        _check_number("Normal", "sigma", sigma)
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: Any) -> None:
        _random.normal(0, self.sigma, out=arr)


@register()
class Orthogonal(Initializer):
    """Orthogonal rows (or columns) from the SVD of a random matrix, times ``scale``."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        if rand_type not in ("uniform", "normal"):
            raise DataError(f"Orthogonal: rand_type must be 'uniform' or 'normal', got {rand_type!r}")
        _check_number("Orthogonal", "scale", scale)
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, name: str, arr: Any) -> None:
        if len(arr.shape) < 2:
            raise ShapeError(f"Orthogonal: {name!r} needs at least 2 dimensions, got shape {tuple(arr.shape)}")
        rows, cols = arr.shape[0], int(np.prod(arr.shape[1:]))
        draw = _random.uniform if self.rand_type == "uniform" else _random.normal
        sample = (
            draw(-1.0, 1.0, shape=(rows, cols)) if self.rand_type == "uniform" else draw(0.0, 1.0, shape=(rows, cols))
        )
        u, _, v = np.linalg.svd(sample.asnumpy().astype(np.float64), full_matrices=False)
        basis = u if u.shape == (rows, cols) else v
        arr[:] = (self.scale * basis).reshape(arr.shape).astype(np.float32)


@register()
class Xavier(Initializer):
    """Scale from fan-in/fan-out: ``sqrt(magnitude / factor)``.

    Parameters
    ----------
    rnd_type : {'uniform', 'gaussian'}
    factor_type : {'avg', 'in', 'out'}
        ``factor`` is the mean of fan-in and fan-out, fan-in, or fan-out.
    magnitude : float
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3) -> None:
        if rnd_type not in ("uniform", "gaussian"):
            raise DataError(f"Xavier: rnd_type must be 'uniform' or 'gaussian', got {rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise DataError(f"Xavier: factor_type must be 'avg', 'in' or 'out', got {factor_type!r}")
        _check_number("Xavier", "magnitude", magnitude)
        if magnitude < 0:
            raise DataError(f"Xavier: magnitude must be a number >= 0, got {magnitude!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: Any) -> None:
        shape = tuple(arr.shape)
        if len(shape) < 2:
            raise ShapeError(f"Xavier: {name!r} needs at least 2 dimensions, got shape {shape}")
        if 0 in shape:
            return  # nothing to fill, and a fan of 0 has no scale
        receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            _random.uniform(-scale, scale, out=arr)
        else:
            _random.normal(0, scale, out=arr)


@register()
class MSRAPrelu(Xavier):
    """He/MSRA initialization for PReLU nets: Gaussian Xavier with magnitude ``2 / (1 + slope^2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        _check_number("MSRAPrelu", "slope", slope)
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register()
class Bilinear(Initializer):
    """Bilinear upsampling weights for a ``Deconvolution`` (see :func:`bilinear_filter`)."""

    def _init_weight(self, name: str, arr: Any) -> None:
        arr[:] = bilinear_filter(name, tuple(arr.shape))


def create(spec: str | Initializer, **kwargs: Any) -> Initializer:
    """An initializer from a name (``'xavier'``), a ``dumps()`` string, or an instance.

    Examples
    --------
    >>> create('["uniform", {"scale": 0.5}]').scale
    0.5
    """
    if isinstance(spec, Initializer):
        return spec
    if not isinstance(spec, str):
        raise DataError(f"initializer.create: expected a name or JSON string, got {type(spec).__name__}")
    if spec.lstrip().startswith("["):
        try:
            name, params = json.loads(spec)
        except (ValueError, TypeError) as exc:
            raise DataError(f"initializer.create: {spec!r} is not a JSON [name, kwargs] pair") from exc
        if not isinstance(params, dict):
            raise DataError(f"initializer.create: the arguments of {name!r} must be a JSON object, got {params!r}")
        params = {**params, **kwargs}
    else:
        name, params = spec, kwargs
    if str(name).lower() == "fusedrnn" and "fusedrnn" not in _REGISTRY:
        _fused_rnn()  # registers itself
    cls = _REGISTRY.get(str(name).lower())
    if cls is None:
        raise DataError(f"initializer.create: unknown initializer {name!r}; known: {sorted(_REGISTRY)}")
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as err:
        raise DataError(f"initializer.create: {name!r} cannot take {sorted(params)}: {err}") from None
    return cls(**params)


def _fused_rnn() -> type[Initializer]:
    """``FusedRNN``, which lives with ``mx.rnn.FusedRNNCell`` in the symbolic package (imported when first asked)."""
    return importlib.import_module("lazynd_sym.rnn.fused").FusedRNN


def __getattr__(name: str) -> Any:
    if name == "FusedRNN":
        return _fused_rnn()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
