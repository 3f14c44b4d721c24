"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: MXNet 1.x's control flow, run imperatively.

In MXNet's NDArray API these are Python functions, not operators: the loop runs on the host and
calls the user's functions, which push ordinary operators.  Under ``mx.autograd.record()`` every
operator those calls push is recorded (the slices of ``data``, the body's own operators, the
stacking of the outputs), so gradients flow through the loop as through the same code written out.
A condition is read on the host (this waits for it), as in MXNet.

The results follow MXNet 1.9.1: a step output given as an NDArray comes back as one NDArray, a
(nested) list of them as a list of the same nesting, each element the step outputs stacked along
a new axis 0; loop states come back as the body last returned them.  ``while_loop`` pads its
stacked outputs to ``max_iterations`` rows, which MXNet leaves undefined and lazynd fills with
zeros.  The symbol forms (``mx.sym.contrib.foreach``...) are in :mod:`lazynd_sym.control_flow`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ArgumentTypeError, OperatorError

# the format of a flattened value: None for one NDArray, else a list of the formats of its items
Format = Any


def _flatten(value: Any, where: str, what: str, leaf: type | None = None) -> tuple[list[Any], Format]:
    """The leaves of ``value`` (a ``leaf``, NDArray by default, or a nested list/tuple of them) in order,
    and its nesting (the symbol forms in :mod:`lazynd_sym.control_flow` pass ``leaf=Symbol``)."""
    if leaf is None:
        from .ndarray import NDArray

        leaf = NDArray
    if isinstance(value, leaf):
        return [value], None
    if not isinstance(value, (list, tuple)):
        kind = leaf.__name__
        raise OperatorError(
            f"{where}: {what} must be a {kind} or a (nested) list of {kind}s, got {type(value).__name__}"
        )
    flat: list[Any] = []
    formats = []
    for item in value:
        items, form = _flatten(item, where, what, leaf)
        flat.extend(items)
        formats.append(form)
    return flat, formats


def _regroup(flat: list[Any], form: Format) -> Any:
    """Undo :func:`_flatten`: ``flat`` nested as ``form`` says (lists where the input had lists or tuples)."""
    position = 0

    def build(node: Format) -> Any:
        nonlocal position
        if node is None:
            position += 1
            return flat[position - 1]
        return [build(child) for child in node]

    return build(form)


def _host_scalar(value: Any, convert: type, where: str, what: str) -> Any:
    """``value`` (a one-element NDArray, which is read and so waited for, or a Python/NumPy scalar) as ``convert``."""
    if hasattr(value, "asscalar"):
        if value.size != 1:
            raise OperatorError(f"{where}: {what} must hold exactly one element, got shape {value.shape}")
        value = value.asscalar()
    try:
        return convert(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int() of an infinity
        raise OperatorError(
            f"{where}: {what} must be a one-element NDArray or a scalar, got {type(value).__name__}"
        ) from None


def _check_callable(function: Any, where: str, what: str) -> None:
    # a TypeError, as MXNet's (it calls the object): ``except TypeError`` in users' code still catches it
    if not callable(function):
        raise ArgumentTypeError(f"{where}: {what} must be a Python function, got {type(function).__name__}")


def _split_step(result: Any, where: str, what: str) -> tuple[Any, Any]:
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        raise OperatorError(f"{where}: {what} must return a pair (outputs, states), got {type(result).__name__}")
    return result[0], result[1]


def _same_shapes(steps: list[Any], where: str, position: int) -> None:
    first = steps[0]
    for step, item in enumerate(steps):
        if item.shape != first.shape or item.dtype != first.dtype:
            raise OperatorError(
                f"{where}: output {position} has shape {item.shape} ({item.dtype}) at step {step}, "
                f"expected {first.shape} ({first.dtype}) as at step 0"
            )


def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any) -> tuple[Any, Any]:
    """Run ``body`` on each slice of ``data`` along axis 0, carrying states; stack its outputs.

    ``out, states = body(data[i], states)`` for each ``i`` (``data`` an NDArray, or a list of
    NDArrays sliced together, the body then given the list of slices), starting from
    ``init_states``.  Returns ``(outputs, states)``: each output stacked along a new axis 0, with
    the nesting the body gave it, and the states of the last step.

    Examples
    --------
    >>> import lazynd as mx
    >>> step = lambda x, states: (x + states[0], [states[0] * 2])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.array([[1, 1], [2, 2]]), [mx.nd.ones(2)])
    >>> outs.asnumpy().tolist(), states[0].asnumpy().tolist()
    ([[2.0, 2.0], [4.0, 4.0]], [4.0, 4.0])
    """
    from . import stack  # type: ignore[attr-defined]
    from .ndarray import NDArray

    where = "foreach"
    _check_callable(body, where, "'body'")
    single = isinstance(data, NDArray)
    sequences, data_form = _flatten(data, where, "'data'")
    if not single and any(form is not None for form in data_form):
        raise OperatorError(f"{where}: 'data' must be an NDArray or a flat list of NDArrays, got a nested list")
    _flatten(init_states, where, "'init_states'")
    if not sequences or any(d.ndim == 0 for d in sequences):
        raise OperatorError(f"{where}: 'data' must hold at least one NDArray of at least one axis")
    length = sequences[0].shape[0]
    if any(d.shape[0] != length for d in sequences):
        raise OperatorError(
            f"{where}: the arrays of 'data' must have one length along axis 0, got shapes {[d.shape for d in sequences]}"
        )
    if length == 0:
        raise OperatorError(f"{where}: 'data' has length 0 along axis 0, expected at least one step to run")

    states = init_states
    steps: list[list[Any]] = []
    out_form: Format = None
    for i in range(length):
        piece = sequences[0][i] if single else [d[i] for d in sequences]
        outs, states = _split_step(body(piece, states), where, "'body'")
        flat, form = _flatten(outs, where, "the outputs of 'body'")
        if steps and form != out_form:
            raise OperatorError(f"{where}: 'body' returned outputs nested as {form} at step {i}, expected {out_form}")
        out_form = form
        steps.append(flat)
    stacked = []
    for position, items in enumerate(zip(*steps, strict=True)):
        _same_shapes(list(items), where, position)
        stacked.append(stack(*items, axis=0))
    return _regroup(stacked, out_form), states


def while_loop(
    cond: Callable[..., Any], func: Callable[..., tuple[Any, Any]], loop_vars: Any, max_iterations: Any = None
) -> tuple[Any, Any]:
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times; stack its step outputs.

    Each step reads ``cond(*loop_vars)`` on the host (a one-element NDArray: this waits for it)
    and, while it is nonzero, runs ``step_output, loop_vars = func(*loop_vars)``.  Returns
    ``(outputs, loop_vars)``: each step output stacked along a new axis 0 and padded to
    ``max_iterations`` rows (MXNet leaves the padding undefined; here it is zeros), an empty list
    when no step ran, and the final loop variables (one NDArray if ``loop_vars`` was one).

    Examples
    --------
    >>> import lazynd as mx
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> outs, (i, s) = mx.nd.contrib.while_loop(cond, func, (mx.nd.array([0]), mx.nd.array([1])), max_iterations=8)
    >>> outs[0].shape, outs[0][:6, 0].asnumpy().tolist(), s.asnumpy().tolist()
    ((8, 1), [1.0, 2.0, 4.0, 7.0, 11.0, 16.0], [16.0])
    """
    from . import concat, zeros  # type: ignore[attr-defined]
    from .ndarray import NDArray

    where = "while_loop"
    _check_callable(cond, where, "'cond'")
    _check_callable(func, where, "'func'")
    if max_iterations is None:
        raise OperatorError(f"{where}: 'max_iterations' must be given (the stacked outputs have that many rows)")
    max_iterations = _host_scalar(max_iterations, int, where, "'max_iterations'")
    single = isinstance(loop_vars, NDArray)
    variables = [loop_vars] if single else loop_vars
    if not isinstance(variables, (list, tuple)) or not variables:
        raise OperatorError(
            f"{where}: 'loop_vars' must be an NDArray or a non-empty list of NDArrays, got {loop_vars!r}"
        )
    variables = list(variables)
    _flatten(variables, where, "'loop_vars'")

    steps: list[list[Any]] = []
    out_form: Format = None
    while len(steps) < max_iterations and _host_scalar(cond(*variables), bool, where, "the value of 'cond'"):
        step_output, new_variables = _split_step(func(*variables), where, "'func'")
        step_output = [] if step_output is None else step_output
        new_variables = [] if new_variables is None else new_variables
        new_variables = [new_variables] if isinstance(new_variables, NDArray) else list(new_variables)
        if len(new_variables) != len(variables):
            raise OperatorError(
                f"{where}: 'func' returned {len(new_variables)} loop variables, expected {len(variables)} as given"
            )
        flat, form = _flatten(step_output, where, "the step outputs of 'func'")
        if steps and form != out_form:
            raise OperatorError(
                f"{where}: 'func' returned step outputs nested as {form} at step {len(steps)}, expected {out_form}"
            )
        out_form = form
        steps.append(flat)
        variables = new_variables

    stacked = []
    for position, items in enumerate(zip(*steps, strict=True)):
        _same_shapes(list(items), where, position)
        rows = [item.expand_dims(0) for item in items]
        if len(steps) < max_iterations:
            first = items[0]
            rows.append(zeros((max_iterations - len(steps), *first.shape), ctx=first.context, dtype=first.dtype))
        stacked.append(concat(*rows, dim=0))
    outputs = _regroup(stacked, out_form) if steps else []
    return outputs, variables[0] if single else variables


def cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any]) -> Any:
    """``then_func()`` if ``pred`` (a one-element NDArray, read on the host) is nonzero, else ``else_func()``.

    Examples
    --------
    >>> import lazynd as mx
    >>> a, b = mx.nd.array([1]), mx.nd.array([2])
    >>> mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5)).asnumpy().tolist()
    [42.0]
    """
    where = "cond"
    _check_callable(then_func, where, "'then_func'")
    _check_callable(else_func, where, "'else_func'")
    return then_func() if _host_scalar(pred, bool, where, "'pred'") else else_func()


# mx.nd.contrib's Python functions (no operator is registered for them)
FUNCTIONS: dict[str, Callable[..., Any]] = {"foreach": foreach, "while_loop": while_loop, "cond": cond}
