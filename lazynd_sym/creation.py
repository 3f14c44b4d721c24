"""Creating symbols: free variables, groups, registered operators applied to symbols, and
symbols composed (a graph's free variables replaced by other symbols).

``invoke`` is the body of every ``lazynd_sym.<op>`` function (``make_function`` makes
them) and of the arithmetic operators of :class:`~lazynd_sym.symbol.Symbol`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd.base import _Null
from lazynd.errors import ArgumentTypeError, ArgumentValueError, LazyNDError, OperatorError
from lazynd.ndarray.sparse import check_dense
from lazynd.ops import registry
from lazynd.ops.registry import OpDef
from lazynd.ops.signature import (
    name_and_attr_by_position,
    name_positional_params,
    positional_param_names,
    refuse_value_at_input,
)

from .attribute import AttrScope, dtype_to_attr, is_attribute_key, normalize_attrs, parse_shape_hint
from .graph import Entry, Node, refuse_operator_aux
from .name import NameManager
from .symbol import Symbol


def Variable(
    name: str,
    attr: dict | None = None,
    shape: Sequence[int] | None = None,
    lr_mult: float | None = None,
    wd_mult: float | None = None,
    dtype: Any = None,
    init: Any = None,
    stype: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """A free input of a graph (``stype``, MXNet 1.x's storage type, may only be dense ``'default'``).

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> sym.Variable("data", shape=(2, 3)).attr("__shape__")
    '(2, 3)'
    """
    if not isinstance(name, str) or not name:  # a TypeError for a name that is no string, as in MXNet
        error = ArgumentValueError if isinstance(name, str) else ArgumentTypeError
        raise error(f"Variable: name must be a non-empty string, got {name!r}")
    check_dense(stype, f"Variable {name!r}")
    user = AttrScope.current.get(attr, f"Variable {name!r}")
    if stype is not None:
        user["__storage_type__"] = "0"  # MXNet's flag for dense 'default', the one storage type lazynd has
    if shape is not None:
        parsed = parse_shape_hint(shape, f"Variable {name!r}")
        user["__shape__"] = str(list(parsed) if isinstance(shape, list) else parsed)  # MXNet's text: str(shape)
    if lr_mult is not None:
        user["__lr_mult__"] = str(_multiplier(name, "lr_mult", lr_mult))
    if wd_mult is not None:
        user["__wd_mult__"] = str(_multiplier(name, "wd_mult", wd_mult))
    if dtype is not None:
        user["__dtype__"] = dtype_to_attr(dtype, f"Variable {name!r}")
    if init is not None:
        if not isinstance(init, str) and not callable(getattr(init, "dumps", None)):
            raise ArgumentTypeError(
                f"Variable {name!r}: init must be an Initializer or its name/JSON (mx.init.Xavier()...), got {init!r}"
            )
        user["__init__"] = init if isinstance(init, str) else init.dumps()
    user.update(normalize_attrs(kwargs, f"Variable {name!r}"))
    return Symbol([(Node(None, name, user=user), 0)])


var = Variable


def _multiplier(name: str, what: str, value: Any) -> Any:
    """A variable's ``lr_mult``/``wd_mult`` as given (a number, or its text as symbol JSON holds it),
    or an ``ArgumentTypeError``: the optimizer reads it as a float at its first update."""
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ArgumentTypeError(f"Variable {name!r}: {what} must be a finite number, got {value!r}")
    return value


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """One symbol holding the outputs of several (at least one, as MXNet requires; anything else is
    an :class:`~lazynd.errors.ArgumentTypeError`, a ``TypeError`` as MXNet's)."""
    if isinstance(symbols, Symbol) or not hasattr(symbols, "__iter__"):
        raise ArgumentTypeError(f"Group: expected a list of symbols, got {type(symbols).__name__}")
    symbols = list(symbols)
    if not symbols:
        raise ArgumentTypeError("Group: expected a non-empty list of symbols, got an empty one")
    entries: list[Entry] = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise ArgumentTypeError(f"Group: expected symbols, got {type(s).__name__}")
        entries += s._outputs
    return Symbol(entries)


# scalar comparisons, which MXNet calls by their own names (no CamelCase alias such as _PlusScalar)
_KEEP_SCALAR_SUFFIX = ("_equal", "_not_equal", "_greater", "_greater_equal", "_lesser", "_lesser_equal")


def name_hint(op: OpDef) -> str:
    """The prefix of automatic names, as MXNet's: the lowercase op name, ``_plus_scalar`` as
    ``_plusscalar`` (its alias ``_PlusScalar``), but ``_greater_scalar`` kept."""
    name = op.name.lower()
    if name.endswith("_scalar") and name[: -len("_scalar")] not in _KEEP_SCALAR_SUFFIX:
        name = name[: -len("_scalar")] + "scalar"
    return name


def _param_text(value: Any) -> str:
    """A parameter as MXNet writes it in a node's attributes (and its JSON)."""
    if isinstance(value, list):  # str(value), as MXNet writes it: '[2, -1]'
        return "[" + ", ".join(_param_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_param_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, (np.generic, bool, int, float))):
        # a dtype given as a type (np.float16, float): its name, not "<class 'numpy.float16'>"
        return np.dtype(value).name
    return str(value)


def _input_names(op: OpDef) -> list[str]:
    """The inputs MXNet's generated function lists by position (none known for a variadic one)."""
    return op.positional_input_names() or []


def _refuse_array_input(op: OpDef, value: Any, input_name: str) -> None:
    """Name the input when an array (an NDArray, a NumPy array) is given where a symbol is expected:
    it would otherwise be read as a parameter and refused for a reason that says nothing of it."""
    if hasattr(value, "__array__") and not isinstance(value, (Symbol, np.generic)):
        raise ArgumentTypeError(
            f"{op.name}: input {input_name!r} must be a Symbol, got {type(value).__module__}.{type(value).__name__}; "
            "call the mx.nd function for arrays, or pass a variable (mx.sym.Variable) and bind the array to it"
        )


def invoke(op_name: str | OpDef, args: Sequence[Any], kwargs: dict[str, Any], hint: str | None = None) -> Symbol:
    """Apply an operator to symbols: the body of every ``lazynd_sym.<op>`` function.

    ``hint`` prefixes the automatic node name; MXNet takes the lowercase name the operator was
    called by (``sym.split`` -> ``split0``, ``sym.SliceChannel`` -> ``slicechannel0``, ``sym.linalg.gemm2``
    -> ``gemm20``), and :func:`name_hint` where the symbol's arithmetic calls it.
    """
    op = op_name if isinstance(op_name, OpDef) else registry.get(op_name)
    kwargs = dict(kwargs)
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    positional: list[Symbol | None] = []
    positional_params: list[Any] = []
    slots = op.positional_input_names()
    for a in args:
        if isinstance(a, Symbol) and not positional_params:
            positional.append(a)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(s, Symbol) for s in a) and not positional_params:
            positional.extend(a)
        elif isinstance(a, Symbol):
            raise OperatorError(f"{op.name}: input symbols must come before the parameters given by position")
        elif a is None and not positional_params and op.takes_input_at(len(positional)):
            positional.append(None)  # an input left out: a variable is made for it, if the operator takes it
        else:
            if not positional_params and (slots is None or len(positional) < len(slots)):
                label = slots[len(positional)] if slots is not None else f"#{len(positional)}"
                _refuse_array_input(op, a, label)
                refuse_value_at_input(op, a, len(positional), "Symbol")
            positional_params.append(a)
    while positional and positional[-1] is None:
        positional.pop()
    param_count = len(positional_param_names(op))
    if len(positional_params) > param_count:
        name, attr = name_and_attr_by_position(op, positional_params[param_count:], name, attr)
        del positional_params[param_count:]
    user = AttrScope.current.get(attr, op.name)
    kwargs.update(name_positional_params(op, positional_params, kwargs))
    named: dict[str, Symbol] = {}
    params: dict[str, Any] = {}
    for key, value in kwargs.items():
        if isinstance(value, Symbol):
            named[key] = value
            continue
        if value is _Null:
            continue  # MXNet's "not given": the parameter keeps its default and stays out of the JSON
        if key not in op.params and (key in _input_names(op) or callable(op._inputs)):
            _refuse_array_input(op, value, key)
        if value is None and key not in op.params:
            continue  # an input left out (``bias=None``), made a variable as MXNet's generated functions do
        elif key in op.params:
            params[key] = value
        elif is_attribute_key(key):
            user.update(normalize_attrs({key: value}, op.name))
        else:
            params[key] = value  # parse() names the unknown parameter
    if op.variadic and params.get("num_args") is None:
        params["num_args"] = len(positional) - len(op.aux)
    attrs = op.parse(params)
    op = op.specialize(attrs)
    node_name = NameManager.current.get(name, hint or name_hint(op))
    input_names = op.input_names(attrs) + list(op.aux)
    if len(positional) > len(input_names):
        raise OperatorError(
            f"{op.name}: {len(positional)} input symbols given, it takes {len(input_names)} ({input_names})"
        )
    inputs: list[Entry] = []
    variable_attrs = op.attrs_of_input_variables(attrs)
    params_text = {k: _param_text(v) for k, v in params.items()}
    for i, input_name in enumerate(input_names):
        if i < len(positional) and input_name in named:
            raise OperatorError(f"{op.name}: input {input_name!r} is given both by position and by keyword")
        source = positional[i] if i < len(positional) else named.pop(input_name, None)
        if source is None:
            # as MXNet's, a variable made for a missing input carries its operator's parameters
            source = Symbol([(Node(None, f"{node_name}_{input_name}", params_text, user=dict(user)), 0)])
        if len(source._outputs) != 1:
            raise OperatorError(
                f"{op.name}: input '{input_name}' is a group of {len(source._outputs)} outputs, expected one"
            )
        entry = source._outputs[0]
        if entry[0].op is None:  # as MXNet's, the user's own variable is marked too, keeping what it has
            for key, value in variable_attrs.get(input_name, {}).items():
                entry[0].user.setdefault(key, value)
        inputs.append(entry)
    if named:
        raise OperatorError(f"{op.name}: unknown input(s) {sorted(named)}; inputs are {input_names}")
    node = Node(op, node_name, params_text, attrs, user, inputs)
    refuse_operator_aux(node)
    return Symbol([(node, i) for i in range(node.num_visible_outputs())])


def compose(symbol: Symbol, args: tuple, kwargs: dict[str, Any]) -> Symbol:
    """``symbol(*args, **kwargs)``: a copy of its graph with free variables replaced by the symbols given.

    ``args`` replace the arguments in ``list_arguments`` order, ``kwargs`` any input by name
    (an auxiliary state too, by another variable, as MXNet's); with ``name=...`` among ``kwargs``,
    the copy's head operator takes that name, as in MXNet (whose graph composition renames its
    first output's node), and every other name stays.  See ``Symbol.__call__``.
    """
    name = kwargs.pop("name", None)
    if name is not None and (not isinstance(name, str) or not name):
        error = ArgumentValueError if isinstance(name, str) else ArgumentTypeError
        raise error(f"compose: name must be a non-empty string, got {name!r}")
    result = symbol.__copy__()
    arguments = result.list_arguments()
    mapping: dict[str, Symbol] = {}
    if len(args) > len(arguments):
        raise LazyNDError(f"compose: {len(args)} positional symbols given, the symbol has {len(arguments)} arguments")
    for arg_name, value in zip(arguments, args, strict=False):
        mapping[arg_name] = value
    inputs = result.list_inputs()
    for arg_name, value in kwargs.items():
        if arg_name not in inputs:
            raise LazyNDError(f"compose: {arg_name!r} is not an input of the symbol; inputs are {inputs}")
        mapping[arg_name] = value
    entries = {}
    for arg_name, value in mapping.items():
        if not isinstance(value, Symbol):  # a TypeError, as MXNet's
            raise ArgumentTypeError(f"compose: {arg_name!r} must be a symbol, got {type(value).__name__}")
        if len(value._outputs) != 1:
            raise LazyNDError(f"compose: {arg_name!r} must be a symbol with one output")
        entries[arg_name] = value._outputs[0]
    own_nodes = result._nodes()
    head = result._outputs[0][0]
    if name is not None and head.op is not None:
        head.name = name
    for node in own_nodes:
        node.inputs = [entries.get(c.name, (c, i)) if c.op is None else (c, i) for c, i in node.inputs]
        refuse_operator_aux(node)
    result._outputs = [entries.get(n.name, (n, i)) if n.op is None else (n, i) for n, i in result._outputs]
    return result


def make_function(op: OpDef, public_name: str) -> Any:
    """The ``lazynd_sym.<public_name>`` function of ``op``."""

    hint = public_name.lower()

    def function(*args: Any, **kwargs: Any) -> Symbol:
        return invoke(op, args, kwargs, hint)

    function.__name__ = public_name
    function.__qualname__ = public_name
    function.__doc__ = op.doc or f"Symbolic {op.name}."
    return function
