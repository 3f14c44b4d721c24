"""How a call's positional arguments fall on an operator's inputs and parameters: MXNet's generated
signature, which ``lazynd.nd.<op>`` and ``lazynd_sym.<op>`` both follow.

MXNet 1.9.1 generates, for each operator, ``f(input0=None, input1=None, ..., param0=_Null,
param1=_Null, ..., out=None, name=None, **kwargs)`` (the symbol face has ``name``, ``attr`` and
``out`` there instead), or ``f(*data, **kwargs)`` for an operator of any number of inputs.  So:

- every input slot comes before the first parameter: a value that is not an array (or symbol) in
  an input slot is refused, naming the input (``softmax(x, 1)``: ``length`` must be an array),
  rather than read as a parameter (:meth:`OpDef.positional_input_names` lists the slots);
- the values after the inputs are the parameters in declaration order, MXNet's order, whatever
  keywords the call also gives, so a parameter given both by position and by keyword is an error,
  as Python's ``got multiple values for argument`` is in MXNet (:func:`name_positional_params`);
- an ``f(*data, **params)`` operator takes its parameters by keyword only;
- past the parameters come ``out`` and ``name`` in ``nd`` (which the ``nd`` face reads itself), ``name``
  and ``attr`` in ``sym`` (:func:`name_and_attr_by_position`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ArgumentTypeError, OperatorError
from .opdef import OpDef


def positional_param_names(op: OpDef) -> list[str]:
    """The parameters a call may give by position after the inputs, in order (none for ``f(*data)``)."""
    if not op.positional_params:
        return []
    return [name for name in op.params if name != "num_args"]


def refuse_value_at_input(op: OpDef, value: Any, position: int, kind: str) -> None:
    """Raise :class:`~lazynd.errors.ArgumentTypeError` for ``value``, not a ``kind`` (``NDArray`` or
    ``Symbol``), given at ``position`` where MXNet's generated function lists an input, naming the input,
    as MXNet refuses it ("Argument length must have NDArray type")."""
    names = op.positional_input_names()
    if names is None:
        where = f"input #{position} (position {position})"
        hint = f"its positional arguments are all inputs, each a {kind}; give its parameters by keyword"
    else:
        where = f"input {names[position]!r} (position {position})"
        hint = f"parameters given by position come after all its inputs {names}"
    article = "an" if kind[0] in "AEIOUN" else "a"  # an NDArray, a Symbol
    raise ArgumentTypeError(
        f"{op.name}: {where} must be {article} {kind}, got {type(value).__name__} {value!r:.80} ({hint})"
    )


def name_positional_params(op: OpDef, values: Sequence[Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Name ``values``, given by position after the inputs, as the operator's parameters in order
    (``sum(x, 1, True)``: axis, keepdims), refusing a parameter also in ``given`` (the keywords) and
    more values than the operator has parameters, each with an :class:`~lazynd.errors.OperatorError`
    naming the operator and the parameter."""
    if not values:
        return {}
    order = positional_param_names(op)
    if len(values) > len(order):
        raise OperatorError(
            f"{op.name}: {len(values)} parameters given by position, it takes {len(order)} that way ({order})"
        )
    named = dict(zip(order, values, strict=False))
    for key, value in named.items():
        if key in given:
            raise OperatorError(
                f"{op.name}: parameter {key!r} given twice, by position ({value!r:.40}) and by keyword "
                f"({given[key]!r:.40}); the values after the inputs are the parameters {order[: len(values)]} in order"
            )
    return named


def name_and_attr_by_position(op: OpDef, extra: list[Any], name: Any, attr: Any) -> tuple[Any, Any]:
    """A symbol's ``name`` and ``attr`` from ``extra``, the values given by position after every parameter
    (``sym.relu(x, "relu1")``), the places MXNet's generated symbol functions give them (then ``out``,
    which a symbol ignores); ``name`` and ``attr`` are the keywords.  Any other value there is one
    parameter too many, and a name or attr given both ways is refused, each an
    :class:`~lazynd.errors.OperatorError`."""
    count = len(positional_param_names(op))
    fits = (
        len(extra) <= 3
        and isinstance(extra[0], str)
        and (len(extra) < 2 or extra[1] is None or isinstance(extra[1], dict))
    )
    if not fits:
        raise OperatorError(
            f"{op.name}: {count + len(extra)} parameters given by position, it takes {count} that way "
            f"({positional_param_names(op)}), then name and attr"
        )
    for key, given, value in (("name", name, extra[0]), ("attr", attr, extra[1] if len(extra) > 1 else None)):
        if given is not None and value is not None:
            raise OperatorError(f"{op.name}: {key} given twice, by position ({value!r:.40}) and by keyword")
    return extra[0], attr if len(extra) < 2 or extra[1] is None else extra[1]
