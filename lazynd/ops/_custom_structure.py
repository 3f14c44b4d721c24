"""What a ``Custom`` node looks like, asked of the user's :class:`lazynd.operator.CustomOpProp` and checked.

``Custom``'s parameters (``op_type`` and any other keyword, as a string: :class:`AnyStringParams`);
the property object of each configuration (:func:`properties`, made once); and the names, shapes
and dtypes of its inputs, outputs and auxiliary states, from the property's ``list_*``,
``infer_shape`` and ``infer_type``, and which values its backward takes
(``declare_backward_dependency``), each answer checked so that a wrong one is an
:class:`~lazynd.errors.OperatorError` naming the op_type.  The ``Custom`` operator itself, its
kernels and its definitions are in :mod:`lazynd.ops.custom`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import LazyNDError, OperatorError
from .params import SYMBOL_ATTRIBUTE_KEYS, Param, parse_str

# op_type -> the registered CustomOpProp subclass (filled by lazynd.operator.register)
PROPERTIES: dict[str, type] = {}

# (op_type, keywords) -> the property object; the same keywords make the same structure
_prop_cache: dict[tuple, Any] = {}
# configurations kept, here and in lazynd.ops.custom's specialised definitions: a program that
# passes ever-new keyword values (a decaying scale, a step number) starts the tables again
MAX_CONFIGURATIONS = 1024
_cache_lock = threading.RLock()  # a buffer freed while it is held drops an entry (custom._forget)

_STRING_PARAM = Param(parse_str, None, "handed to the operator's properties as a string")


class AnyStringParams(dict):
    """``Custom``'s parameters: ``op_type``, and any other keyword as a string.

    Symbol attributes (``__xxx__``, ``ctx_group``, ``lr_mult``...) stay attributes.
    """

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and not _is_attribute(key))

    def get(self, key: Any, default: Any = None) -> Any:
        found = dict.get(self, key)
        if found is not None:
            return found
        return _STRING_PARAM if isinstance(key, str) and not _is_attribute(key) else default


def _is_attribute(key: str) -> bool:
    return key in SYMBOL_ATTRIBUTE_KEYS or (key.startswith("__") and key.endswith("__"))


def _custom_params() -> AnyStringParams:
    return AnyStringParams(op_type=Param(parse_str, doc="the name a CustomOpProp was registered under"))


def _config(attrs: dict) -> tuple[str, tuple]:
    op_type = attrs.get("op_type")
    if not isinstance(op_type, str):
        raise OperatorError("Custom: required parameter 'op_type' is missing")
    kwargs = tuple(sorted((k, v) for k, v in attrs.items() if k != "op_type"))
    return op_type, kwargs


def properties(attrs: dict) -> Any:
    """The CustomOpProp object of a ``Custom`` call's parameters (made once per configuration)."""
    key = _config(attrs)
    prop = _prop_cache.get(key)
    if prop is None:
        op_type, kwargs = key
        cls = PROPERTIES.get(op_type)
        if cls is None:
            known = ", ".join(sorted(PROPERTIES)) or "none"
            raise OperatorError(f"Custom: op_type {op_type!r} is not registered (registered: {known})")
        try:
            prop = cls(**dict(kwargs))
        except TypeError as err:  # a keyword the constructor does not take
            raise OperatorError(f"Custom: cannot create the properties of op_type {op_type!r}: {err}") from None
        except Exception as err:  # the constructor refused a value (float('abc')...)
            raise OperatorError(
                f"Custom: the properties of op_type {op_type!r} refused the keywords {dict(kwargs)}: "
                f"{type(err).__name__}: {err}"
            ) from err
        _check_need_top_grad(op_type, prop)
        with _cache_lock:
            if len(_prop_cache) >= MAX_CONFIGURATIONS:
                _prop_cache.clear()
            prop = _prop_cache.setdefault(key, prop)
    return prop


def _check_need_top_grad(op_type: str, prop: Any) -> None:
    """A property whose ``__init__`` skipped CustomOpProp's has no ``need_top_grad_``: say so."""
    try:
        prop.need_top_grad()
    except AttributeError as err:
        raise OperatorError(
            f"Custom: the properties of op_type {op_type!r} cannot say whether they need the output "
            f"gradient ({err}); their __init__ must call super().__init__(need_top_grad=...)"
        ) from None


def ask(attrs: dict, method: str, *args: Any) -> Any:
    """The answer of the property's ``method`` to ``args``; what it raises becomes an
    :class:`~lazynd.errors.OperatorError` naming the op_type and the method."""
    try:
        return getattr(properties(attrs), method)(*args)
    except LazyNDError:
        raise
    except Exception as err:
        raise OperatorError(f"Custom ({attrs['op_type']}): {method} raised {type(err).__name__}: {err}") from err


# -- structure ------------------------------------------------------------------------------------
def _names(attrs: dict, method: str) -> list[str]:
    """The names the property's ``method`` (``list_arguments``...) gives: a list of strings."""
    names = ask(attrs, method)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise OperatorError(
            f"Custom ({attrs['op_type']}): {method}() returned {names!r}, expected a list of names (strings)"
        )
    return list(names)


def _groups(attrs: dict, method: str, result: Any, counts: Sequence[int]) -> list[list]:
    """The (inputs, outputs[, auxiliary states]) lists of what ``infer_shape``/``infer_type``
    returned, each checked against the number of names the property lists."""
    what = ("input", "output", "auxiliary state")
    if not isinstance(result, (list, tuple)) or len(result) not in (2, 3):
        raise OperatorError(
            f"Custom ({attrs['op_type']}): {method} returned {result!r}, expected a tuple of "
            "(input, output) or (input, output, auxiliary state) lists"
        )
    groups = [list(g) if isinstance(g, (list, tuple)) else g for g in result]
    if len(groups) == 2:
        groups.append(None)
    for kind, group, count in zip(what, groups, counts, strict=True):
        if group is None and kind == "auxiliary state":
            continue
        if not isinstance(group, list) or len(group) != count:
            raise OperatorError(
                f"Custom ({attrs['op_type']}): {method} returned {group!r} as the {kind}s, expected a list of {count}"
            )
    return groups


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list, with_aux: bool) -> tuple[list, list, list]:
    """Shapes from the property's ``infer_shape`` once every argument's shape is known.

    ``with_aux``: ``in_shapes`` ends with the auxiliary states (imperative calls).
    """
    prop = properties(attrs)
    n_args = len(_names(attrs, "list_arguments"))
    n_out = len(_names(attrs, "list_outputs"))
    n_aux = len(_names(attrs, "list_auxiliary_states"))
    if with_aux:
        in_shapes, aux_shapes = in_shapes[:n_args], in_shapes[n_args:]
    unknown = list(in_shapes) + (list(aux_shapes) if with_aux else []), [None] * n_out, list(aux_shapes)
    partial = any(s is None or 0 in s for s in in_shapes)
    if in_shapes and all(s is None for s in in_shapes):  # an operator without inputs is asked at once
        return unknown
    try:
        # unknown shapes reach the property as [] (MXNet's convention): a loss often infers
        # its label's shape from the data's
        result = prop.infer_shape([list(s) if s is not None else [] for s in in_shapes])
    except Exception as err:
        if partial:
            return unknown
        raise OperatorError(f"Custom ({attrs['op_type']}): infer_shape failed: {type(err).__name__}: {err}") from err
    arg_shapes, out_shapes, new_aux = _groups(attrs, "infer_shape", result, (n_args, n_out, n_aux))
    if new_aux is None and n_aux and not partial:  # MXNet refuses this too
        raise OperatorError(
            f"Custom ({attrs['op_type']}): infer_shape returned no auxiliary state shapes, expected {n_aux} "
            "(return (input shapes, output shapes, auxiliary state shapes))"
        )
    if new_aux is None:
        new_aux = [None] * n_aux
    args, outs, aux = ([_shape(attrs, s) for s in group] for group in (arg_shapes, out_shapes, new_aux))
    if in_shapes and in_shapes[0] is not None and 0 not in in_shapes[0]:
        # with its first input known, an unknown input the property hands back empty is MXNet's 0-d
        # shape: a loss that passes its label's [] on leaves a graph MXNet calls complete (print_summary works)
        empty = [
            given is None and shape is not None and len(shape) == 0
            for given, shape in zip(in_shapes, arg_shapes, strict=True)
        ]
        args = [() if is_empty else shape for shape, is_empty in zip(args, empty, strict=True)]
    return (args + aux if with_aux else args), outs, aux


def _shape(attrs: dict, shape: Any) -> tuple[int, ...] | None:
    """A shape from a property (a list or tuple); an empty one is unknown, a 0 an unknown dimension."""
    if shape is None:
        return None
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, (int, np.integer)) for d in shape):
        raise OperatorError(
            f"Custom ({attrs['op_type']}): infer_shape returned the shape {shape!r}, expected a list of integers"
        )
    if len(shape) == 0:
        return None
    return tuple(int(d) for d in shape)


def _infer_type(attrs: dict, in_types: list, aux_types: list, with_aux: bool) -> tuple[list, list, list]:
    n_args = len(_names(attrs, "list_arguments"))
    if with_aux:
        in_types, aux_types = in_types[:n_args], in_types[n_args:]
    known = next((t for t in in_types if t is not None), None)
    if known is None and in_types:  # an operator without inputs is asked at once
        n_out = len(_names(attrs, "list_outputs"))
        return list(in_types) + (list(aux_types) if with_aux else []), [None] * n_out, list(aux_types)
    filled = [np.dtype(t if t is not None else known).type for t in in_types]
    counts = (n_args, len(_names(attrs, "list_outputs")), len(_names(attrs, "list_auxiliary_states")))
    arg_types, out_types, new_aux = _groups(attrs, "infer_type", ask(attrs, "infer_type", filled), counts)
    if new_aux is None and counts[2] and not filled:
        raise OperatorError(
            f"Custom ({attrs['op_type']}): infer_type returned no auxiliary state types, expected {counts[2]} "
            "(an operator without inputs has no input type to give them)"
        )
    if new_aux is None:
        new_aux = [filled[0]] * counts[2]
    names, outs, aux = ([_dtype_name(attrs, t) for t in group] for group in (arg_types, out_types, new_aux))
    for k, (given, answer) in enumerate(zip(in_types, names, strict=True)):
        if given is not None and np.dtype(given).name != answer:  # as MXNet: the input's type stands
            raise OperatorError(
                f"Custom ({attrs['op_type']}): infer_type says input {k} is {answer}, but it is {np.dtype(given).name}"
            )
    return (names + aux if with_aux else names), outs, aux


def _dtype_name(attrs: dict, dtype: Any) -> str:
    """The name of a dtype ``infer_type`` returned (a NumPy type, dtype or name)."""
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise OperatorError(
            f"Custom ({attrs['op_type']}): infer_type returned {dtype!r}, expected a NumPy dtype"
        ) from None


def _declared(attrs: dict) -> tuple[set[int], int, int]:
    """What the property's declare_backward_dependency names (indices into out_grad + in_data +
    out_data), checked, and the counts of inputs and outputs."""
    prop = properties(attrs)
    n_in = len(_names(attrs, "list_arguments"))
    n_out = len(_names(attrs, "list_outputs"))
    out_grad = list(range(n_out)) if prop.need_top_grad() else []
    in_data = list(range(n_out, n_out + n_in))
    out_data = list(range(n_out + n_in, n_out + n_in + n_out))
    result = ask(attrs, "declare_backward_dependency", out_grad, in_data, out_data)
    if not isinstance(result, (list, tuple)) or not all(isinstance(d, (int, np.integer)) for d in result):
        raise OperatorError(
            f"Custom ({attrs['op_type']}): declare_backward_dependency returned {result!r}, "
            "expected a list of integer indices"
        )
    declared = {int(d) for d in result}
    if any(not 0 <= d < 2 * n_out + n_in for d in declared):
        raise OperatorError(
            f"Custom ({attrs['op_type']}): declare_backward_dependency returned {sorted(declared)}, "
            f"expected indices below {2 * n_out + n_in}"
        )
    return declared, n_out, n_in


def _backward_layout(attrs: dict) -> tuple[list[int], int, int, int]:
    """The backward inputs (indices into out_grad + in_data + out_data) and the three counts."""
    declared, n_out, n_in = _declared(attrs)
    # the inputs and outputs always come along: the inputs' shapes and dtypes are those of the
    # gradients, and both name the call whose CustomOp object ran forward (see _operator_cache)
    deps = declared | set(range(n_out, 2 * n_out + n_in))
    return sorted(deps), n_out, n_in, len(_names(attrs, "list_auxiliary_states"))
