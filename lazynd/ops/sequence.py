"""Operators on padded batches of sequences: SequenceMask, SequenceLast, SequenceReverse.

``data`` holds the sequences along ``axis`` (0: ``(time, batch, ...)``, as MXNet 0.9;
SequenceMask and SequenceLast also take 1: ``(batch, time, ...)``).  With
``use_sequence_length`` a second input gives each sequence's length; without it every
sequence fills the whole time axis.  Kernels move the time axis first and index with
``kctx.xp``, so NumPy and CuPy run the same code.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .host_arithmetic import scalar_as
from .params import Param, parse_bool, parse_float, parse_int
from .registry import OpDef, merge_shape, refuse_empty_axis, register


def _inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "sequence_length") if attrs["use_sequence_length"] else ("data",)


# MXNet lists sequence_length before the parameters, whatever use_sequence_length
_POSITIONAL_INPUTS = ("data", "sequence_length")


def _params(*extra: str) -> dict[str, Param]:
    """The parameters, in MXNet's order (its generated functions read them positionally)."""
    params = {"use_sequence_length": Param(parse_bool, False, "read each sequence's length from sequence_length")}
    if "value" in extra:
        params["value"] = Param(parse_float, 0.0, "what the steps past a sequence's end become")
    params["axis"] = Param(parse_int, 0, "the time axis: 0 (time, batch, ...) or 1 (batch, time, ...)")
    return params


def _check_axis(op: str, attrs: dict, allowed: tuple[int, ...]) -> int:
    if attrs["axis"] not in allowed:
        raise OperatorError(f"{op}: axis must be one of {allowed}, got {attrs['axis']}")
    return attrs["axis"]


def _time_first(xp: Any, x: Any, axis: int) -> Any:
    return x if axis == 0 else xp.moveaxis(x, 1, 0)


def _lengths(xp: Any, attrs: dict, inputs: list, steps: int, batch: int, minimum: int) -> Any:
    """Each sequence's length as int64 (clipped to the time axis), or the full length."""
    if not attrs["use_sequence_length"]:
        return xp.full((batch,), steps, dtype=xp.int64)
    return xp.clip(inputs[1].reshape(-1).astype(xp.int64), minimum, steps)


def _infer(op: str, allowed: tuple[int, ...]) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        axis = _check_axis(op, attrs, allowed)
        data = in_shapes[0]
        if data is None:
            return in_shapes, [None], aux_shapes
        if len(data) < 2:
            raise ShapeError(f"{op}: data must have at least 2 axes (time and batch), got {tuple(data)}")
        batch = data[1 - axis]
        if attrs["use_sequence_length"]:
            in_shapes[1] = merge_shape(op, "sequence_length", in_shapes[1], (batch,))
        if op == "SequenceLast":  # each of the batch's sequences gives its last step
            refuse_empty_axis(op, "data", tuple(data), axis, batch)
        out = tuple(data) if op != "SequenceLast" else tuple(d for i, d in enumerate(data) if i != axis)
        return in_shapes, [out], aux_shapes

    return infer


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    types = [in_types[0]] + [t or in_types[0] for t in in_types[1:]]
    return types, [in_types[0]], aux_types


def _mask_infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    """As :func:`_infer_type`, and ``value`` must have a value in the data's dtype: checked here, at the
    call (the kernel's cast raised an OverflowError inside an EngineError at the wait)."""
    if in_types[0] is not None:
        try:
            scalar_as(in_types[0], attrs["value"])
        except OperatorError:
            raise OperatorError(
                f"SequenceMask: value={attrs['value']} has no value in data of {in_types[0]} (expected a finite "
                "number within int64's range, or float data)"
            ) from None
    return _infer_type(attrs, in_types, aux_types)


def _none_for_lengths(inputs: list) -> list:
    return [None] * (len(inputs) - 1)


# -- SequenceMask --------------------------------------------------------------------------------------
def _steps_mask(xp: Any, lengths: Any, steps: int, ndim: int) -> Any:
    """(time, batch, 1, ...): True where the step lies inside its sequence."""
    inside = xp.arange(steps)[:, None] < lengths[None, :]
    return inside.reshape(inside.shape + (1,) * (ndim - 2))


def _mask_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    axis = attrs["axis"]
    x = _time_first(xp, inputs[0], axis)
    lengths = _lengths(xp, attrs, inputs, x.shape[0], x.shape[1], 0)
    # cast as MXNet's static_cast: -1 is 255 in uint8 data, 2.7 is 2 in integers
    masked = xp.where(_steps_mask(xp, lengths, x.shape[0], x.ndim), x, scalar_as(x.dtype, attrs["value"]))
    _time_first(xp, outputs[0], axis)[...] = masked


def _mask_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    if not attrs["use_sequence_length"]:
        return [out_grads[0]]
    return [F.SequenceMask(out_grads[0], inputs[1], **{**attrs, "value": 0.0}), None]


register(
    OpDef(
        "SequenceMask",
        _mask_forward,
        inputs=_inputs,
        positional_inputs=_POSITIONAL_INPUTS,
        params=_params("value"),
        infer_shape=_infer("SequenceMask", (0, 1)),
        infer_type=_mask_infer_type,
        gradient=_mask_gradient,
        doc="Set the steps past each sequence's length to ``value``.",
    )
)


# -- SequenceLast --------------------------------------------------------------------------------------
def _last_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    x = _time_first(xp, inputs[0], attrs["axis"])
    lengths = _lengths(xp, attrs, inputs, x.shape[0], x.shape[1], 1)
    outputs[0][...] = x[lengths - 1, xp.arange(x.shape[1])]


def _last_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    grad = _time_first(xp, outputs[0], attrs["axis"])
    grad[...] = 0
    lengths = _lengths(xp, attrs, inputs[1:], grad.shape[0], grad.shape[1], 1)
    grad[lengths - 1, xp.arange(grad.shape[1])] = inputs[0]


def _last_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_SequenceLast(out_grads[0], *inputs, **attrs), *_none_for_lengths(inputs)]


register(
    OpDef(
        "SequenceLast",
        _last_forward,
        inputs=_inputs,
        positional_inputs=_POSITIONAL_INPUTS,
        params=_params(),
        infer_shape=_infer("SequenceLast", (0, 1)),
        infer_type=_infer_type,
        gradient=_last_gradient,
        doc="The last step of each sequence (by its length): ``data`` without the time axis.",
    )
)
register(
    OpDef(
        "_backward_SequenceLast",
        _last_backward,
        inputs=lambda attrs: ("out_grad",) + _inputs(attrs),
        params=_params(),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of SequenceLast: the output gradient at each sequence's last step, zeros elsewhere.",
    )
)


# -- SequenceReverse -----------------------------------------------------------------------------------
def reversal_source(xp: Any, lengths: Any, steps: int) -> Any:
    """(time, batch) source steps of each sequence reversed inside its length (padding stays in place):
    step t of sequence n reads step ``length - 1 - t``.  The permutation is its own inverse; the
    fused RNN runs its backward direction in this order too."""
    t = xp.arange(steps)[:, None]
    return xp.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)


def _reverse_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    x = inputs[0]
    steps, batch = x.shape[0], x.shape[1]
    lengths = _lengths(xp, attrs, inputs, steps, batch, 0)
    outputs[0][...] = x[reversal_source(xp, lengths, steps), xp.arange(batch)[None, :]]


register(
    OpDef(
        "SequenceReverse",
        _reverse_forward,
        inputs=_inputs,
        positional_inputs=_POSITIONAL_INPUTS,
        params=_params(),
        infer_shape=_infer("SequenceReverse", (0,)),
        infer_type=_infer_type,
        # the reversal is a permutation that is its own inverse and transpose
        gradient=lambda F, attrs, inputs, outputs, og: (
            [F.SequenceReverse(og[0], *inputs[1:], **attrs)] + _none_for_lengths(inputs)
        ),
        doc="Reverse each sequence's first ``length`` steps along axis 0; the padding after them stays.",
    )
)
