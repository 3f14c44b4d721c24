"""The public ``lazynd.nd.<Op>`` functions and NDArray methods (``x.sum(axis=1)``) of the registry's operators.

Each function sorts its arguments into input arrays and parameters the way MXNet's
generated functions do (arrays by position or by input name, parameters by keyword or
by position after the arrays) and calls :func:`.dispatch.invoke`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import OperatorError
from ..ops import registry
from ..ops.registry import OpDef
from ..ops.signature import name_positional_params, positional_param_names, refuse_value_at_input
from .dispatch import invoke

NDArray: Any = None  # bound by ndarray.py (circular import)


def make_function(op: OpDef, public_name: str, is_train: bool = False, unrecorded: bool = False) -> Callable[..., Any]:
    """The ``lazynd.nd.<name>`` function of an operator.

    ``is_train`` and ``unrecorded`` are passed on to :func:`.dispatch.invoke`: autograd's
    backward makes functions of its own that call operators in its pass's mode, unrecorded
    (the ``F`` of gradient rules); ``lazynd.nd``'s take the defaults.
    """
    param_names = positional_param_names(op)
    # input names that do not depend on parameters (most operators): computed once
    static_names = None if (op.variadic or callable(op._inputs)) else list(op._inputs)
    # keywords that the common call never uses: naming an input, or asking for training mode
    special = None if static_names is None else frozenset((*static_names, *op.aux, "is_train"))
    # operators whose inputs depend on their parameters (multi_sgd_update...): keywords that are
    # all parameters name no input either
    param_set = frozenset(op.params)
    # the input slots MXNet's generated function lists by position, where a value that is not an
    # array is refused (``softmax(x, 1)``: 1 is no ``length``) rather than read as a parameter
    slots = op.positional_input_names()
    value_slots = None if slots is None else len(slots)
    # how many arrays a fixed-arity operator takes by position (its inputs, then its auxiliary states,
    # which MXNet's legacy functions leave out of their signature); MXNet reads the ones after them
    # as its parameters, then ``out`` and ``name`` (``nd.tanh(x, y)`` writes into y)
    array_slots = None if static_names is None else max(len(static_names) + len(op.aux), value_slots or 0)

    def function(*args: Any, out: Any = None, name: str | None = None, **kwargs: Any) -> Any:
        common = (
            special.isdisjoint(kwargs) if special is not None else (not op.variadic and param_set.issuperset(kwargs))
        )
        if common and (array_slots is None or len(args) <= array_slots):
            # the common call, ``f(x, y, param=value)``: arrays by position, parameters by name
            for a in args:
                if a.__class__ is not NDArray:
                    break
            else:
                return invoke(op, args, kwargs, out, is_train, unrecorded)
        train = bool(kwargs.pop("is_train", False)) or is_train
        attrs_given: dict[str, Any] = {}
        inputs: list[Any] = []
        positional_params: list[Any] = []
        for a in args:
            if isinstance(a, NDArray) and not positional_params:
                inputs.append(a)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(v, NDArray) for v in a) and op.variadic:
                inputs.extend(a)
            elif a is None and not positional_params and op.takes_input_at(len(inputs)):
                inputs.append(None)  # an input left out, as MXNet's generated functions read None there
            else:
                if not positional_params and (value_slots is None or len(inputs) < value_slots):
                    _refuse_host_array_input(op, a, len(inputs), slots or [])
                    refuse_value_at_input(op, a, len(inputs), "NDArray")
                positional_params.append(a)
        while inputs and inputs[-1] is None:
            inputs.pop()
        if array_slots is not None and len(inputs) > array_slots:
            # arrays past the inputs take the positions of the parameters, then of ``out``
            positional_params[:0] = inputs[array_slots:]
            del inputs[array_slots:]
        if static_names is not None:
            names = static_names
        elif all(key in op.params for key in kwargs):
            names = []  # no keyword can name an input: no parse needed to find the input names
        else:
            probe = {k: v for k, v in kwargs.items() if k in op.params}
            try:
                names = op.input_names(op.parse(probe)) if not op.variadic else []
            except OperatorError:
                names = op.input_names({k: p.default for k, p in op.params.items()}) if not op.variadic else []
        named_inputs = {}
        for key in list(kwargs):
            if key in names or key in op.aux:
                named_inputs[key] = kwargs.pop(key)
        for key, value in kwargs.items():
            attrs_given[key] = value
        extra = positional_params[len(param_names) :]
        if extra:
            if out is not None or not _out_and_name_by_position(extra, name):
                raise OperatorError(f"{op.name}: too many positional arguments ({len(args)})")
            out, name = extra[0], (extra[1] if len(extra) == 2 else name)
            del positional_params[len(param_names) :]
        attrs_given.update(name_positional_params(op, positional_params, attrs_given))
        if named_inputs:
            if not op.variadic:
                ordered = list(inputs)
                for key in names + list(op.aux):
                    if key in named_inputs:
                        ordered.append(named_inputs[key])
                inputs = ordered
        return invoke(op, inputs, attrs_given, out, train, unrecorded)

    function.__name__ = public_name
    function.__qualname__ = public_name
    function.__doc__ = _function_doc(op)
    function.op = op  # type: ignore[attr-defined]  # the operator it calls (autograd calls some directly)
    return function


def _out_and_name_by_position(extra: list[Any], name: str | None) -> bool:
    """Whether the positional arguments past the parameters are ``out`` (an NDArray) and maybe
    ``name`` (a string), the places MXNet's generated functions give them."""
    if not isinstance(extra[0], NDArray) or len(extra) > 2:
        return False
    return len(extra) == 1 or (name is None and isinstance(extra[1], str))


def _refuse_host_array_input(op: OpDef, value: Any, position: int, names: list[str]) -> None:
    """Name the input when an array that is not an NDArray (NumPy, CuPy) is given where one is expected.

    MXNet refuses it too, but lazynd would otherwise take it for a parameter and report
    "too many positional arguments", which does not say what is wrong.
    """
    if not hasattr(value, "__array__") or isinstance(value, NDArray) or not op.takes_input_at(position):
        return
    name = names[position] if position < len(names) else f"#{position}"
    raise OperatorError(
        f"{op.name}: input {name!r} must be an NDArray, got {type(value).__module__}.{type(value).__name__}; "
        "wrap it with mx.nd.array(...)"
    )


def _function_doc(op: OpDef) -> str:
    lines = [op.doc.strip() or f"The {op.name} operator.", "", "Parameters", "----------"]
    for name in op.input_names({k: p.default for k, p in op.params.items()}) if not op.variadic else ["*data"]:
        lines.append(f"{name} : NDArray")
    for name, p in op.params.items():
        default = "required" if p.required else f"default {p.default!r}"
        lines.append(f"{name} : {getattr(p.parser, '__name__', 'value')}, {default}")
        if p.doc:
            lines.append(f"    {p.doc}")
    lines.append("out : NDArray, optional\n    Write the result here instead of a new array.")
    return "\n".join(lines)


_functions: dict[str, Callable[..., Any]] = {}


def method(name: str) -> Callable[..., Any] | None:
    """The registered operator ``name`` as an NDArray method (``x.sum(axis=1)``), if any."""
    fn = _functions.get(name)
    if fn is None and not name.startswith("_") and registry.exists(name):
        fn = make_function(registry.get(name), name)
        _functions[name] = fn
    return fn


def install_methods(cls: type) -> None:
    """Make each public registered operator a method of ``cls`` (``x.sum(axis=1)``, ``x.exp()``)
    where ``cls`` defines nothing of that name.

    Called once, when every operator is registered: the methods are plain class attributes, so
    that the class needs no ``__getattr__`` (which would slow every attribute read of every array).
    """
    for name in registry.all_names():
        if not name.startswith("_") and not hasattr(cls, name):
            setattr(cls, name, method(name))
