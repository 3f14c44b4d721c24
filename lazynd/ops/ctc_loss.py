"""Connectionist temporal classification loss (``CTCLoss``), as in MXNet 1.9.1.

``data`` holds unnormalised activations of shape (sequence_length, batch, alphabet_size);
the operator applies a softmax over the alphabet itself.  ``label`` (batch, label_length)
holds each sequence's labels.  With ``blank_label='first'`` the blank is class 0, labels are
1 .. alphabet_size-1 and 0 pads a short label; with ``'last'`` the blank is the last class,
labels are 0 .. alphabet_size-2 and -1 pads.  Without ``use_label_lengths`` a label ends at its
first padding value; without ``use_data_lengths`` every sequence is ``sequence_length`` long.

Like MXNet, the forward pass also computes the gradient with respect to ``data`` (a hidden
second output), so the gradient rule only scales it by the head gradient of each sequence.
On the host the forward-backward recursions run in log space with NumPy, in float64, vectorised
over the batch and the extended label positions, one step of a Python loop per time step.  On a
GPU a kernel of ours runs them, a block per sequence (:mod:`.ctc_loss_gpu`, ``kernels/ctc.cu``),
reading nothing back to the host.  What the parameters mean is written once (:func:`_sequences`),
for both devices.

A label that no alignment of its sequence can produce (more labels plus blanks between
repeated labels than time steps) is refused: MXNet returns a loss of 0 and an uninitialised
gradient there.  Bad labels and lengths raise at once on the host; on a GPU the device's range
checks raise them at the next wait, and meanwhile the kernel runs on values put in range.  Where
the activations give every alignment probability 0 (a -inf activation), the loss is inf and the
gradient the softmax, as in MXNet 1.9.1.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import OperatorError, ShapeError
from .ctc_loss_gpu import ctc_loss_gpu
from .params import Param, enum, parse_bool
from .registry import OpDef, merge_shape, register

NAME = "CTCLoss"
_NEG_INF = -np.inf


def _input_names(attrs: dict) -> list[str]:
    names = ["data", "label"]
    if attrs.get("use_data_lengths"):
        names.append("data_lengths")
    if attrs.get("use_label_lengths"):
        names.append("label_lengths")
    return names


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    names = _input_names(attrs)
    data, label = in_shapes[0], in_shapes[1]
    if data is not None and len(data) != 3:
        raise ShapeError(f"{NAME}: 'data' must be 3-D (sequence_length, batch, alphabet_size), got shape {tuple(data)}")
    if label is not None and len(label) != 2:
        raise ShapeError(f"{NAME}: 'label' must be 2-D (batch, label_length), got shape {tuple(label)}")
    batch = (data[1] if data is not None else 0) or (label[0] if label is not None else 0)
    data = merge_shape(NAME, "data", data, (0, batch, 0)) if data is not None else None
    label = merge_shape(NAME, "label", label, (batch, 0)) if label is not None else None
    steps, width = (data[0] if data else 0), (label[1] if label else 0)
    if steps and width and width > steps:
        raise ShapeError(
            f"{NAME}: label_length {width} exceeds the sequence length {steps} of 'data' "
            "(a sequence emits at most one label per time step)"
        )
    shapes = [data, label]
    for name, given in zip(names[2:], in_shapes[2:], strict=True):
        shapes.append(merge_shape(NAME, name, given, (batch,) if batch else None))
    out = (batch,) if batch else None
    return shapes, [out, data], list(aux_shapes)


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = in_types[0] or "float32"
    rest = [t if t is not None else dtype for t in in_types[1:]]
    return [dtype, *rest], [dtype, dtype], aux_types


class Sequences(NamedTuple):
    """The labels and lengths of one call in the form both devices' kernels take (on the inputs'
    device): values out of range are replaced by ones in range, so that no kernel indexes outside
    its arrays; the checks (:func:`_check_on_host`, :func:`_check_on_device`) report them."""

    classes: Any  # (batch, width) int64: class indices; the lowest label past a label's end
    label_lengths: Any  # (batch,) int64 in [0, width]
    data_lengths: Any  # (batch,) int64 in [1, steps]
    needed: Any  # (batch,) int64: the fewest steps that emit each label


def _label_range(attrs: dict, alphabet: int) -> tuple[int, int]:
    """The classes a label may hold: every class but the blank."""
    return (1, alphabet - 1) if attrs["blank_label"] == "first" else (0, alphabet - 2)


def _blank(attrs: dict, alphabet: int) -> int:
    return 0 if attrs["blank_label"] == "first" else alphabet - 1


def _in_range(xp: Any, values: Any, low: int, high: int, fallback: int) -> Any:
    """``values`` as int64, those outside [low, high] (NaN too) replaced by ``fallback``."""
    return xp.where((values >= low) & (values <= high), values, fallback).astype(np.int64)


def _sequences(xp: Any, attrs: dict, given: dict, alphabet: int) -> Sequences:
    """What the parameters make of the inputs ``given`` (by name), on either device (``xp``):
    without ``use_label_lengths`` a label ends at its first padding value (0 with
    ``blank_label='first'``, -1 with ``'last'``), without ``use_data_lengths`` every sequence is
    ``sequence_length`` long.  A label needs a step per class and one more between repeated classes."""
    label = given["label"]
    steps, batch = given["data"].shape[:2]
    low, high = _label_range(attrs, alphabet)
    width = label.shape[1]
    if width == 0:
        # no label positions: every label is empty (one ignored position keeps the extended label's
        # blank, label, blank layout, which the recursions index)
        classes = xp.full((batch, 1), low, dtype=np.int64)
        label_lengths = needed = xp.zeros(batch, dtype=np.int64)
    else:
        if "label_lengths" in given:
            label_lengths = _in_range(xp, given["label_lengths"], 0, width, width)
        else:
            is_pad = label == (0 if attrs["blank_label"] == "first" else -1)
            label_lengths = xp.where(is_pad.any(axis=1), is_pad.argmax(axis=1), width).astype(np.int64)
        inside = xp.arange(width)[None, :] < label_lengths[:, None]
        classes = _in_range(xp, xp.where(inside, label, low), low, high, low)
        repeats = (classes[:, 1:] == classes[:, :-1]) & inside[:, 1:]
        needed = label_lengths + repeats.sum(axis=1)
    if "data_lengths" in given:
        data_lengths = _in_range(xp, given["data_lengths"], 1, steps, steps)
    else:
        data_lengths = xp.full(batch, steps, dtype=np.int64)
    return Sequences(classes, label_lengths, data_lengths, needed)


def _checked_lengths(lengths: np.ndarray, name: str, low: int, high: int) -> None:
    """Refuse a lengths input ``name`` unless it holds whole numbers in [low, high]."""
    if np.any(lengths != np.round(lengths)) or np.any(lengths < low) or np.any(lengths > high):
        shown = ", ".join(f"{v:g}" for v in lengths.ravel())
        raise OperatorError(f"{NAME}: '{name}' must hold whole numbers in [{low}, {high}], got [{shown}]")


def _check_on_host(attrs: dict, given: dict, sequences: Sequences, alphabet: int) -> None:
    """Refuse, at once, lengths that are not whole numbers in range, labels outside the alphabet and
    labels their sequences cannot emit."""
    label = given["label"]
    width = label.shape[1]
    if "label_lengths" in given:
        _checked_lengths(given["label_lengths"], "label_lengths", 0, width)
    low, high = _label_range(attrs, alphabet)
    inside = np.arange(width)[None, :] < sequences.label_lengths[:, None]
    bad = inside & ((label < low) | (label > high) | (label != np.round(label)))
    if bad.any():
        b, i = np.argwhere(bad)[0]
        raise OperatorError(
            f"{NAME}: label[{b}, {i}] = {label[b, i]:g} is outside the alphabet: with blank_label="
            f"'{attrs['blank_label']}' and alphabet_size {alphabet} labels are {low} .. {high}"
            + (" (padding after a label's end is ignored)" if "label_lengths" not in given else "")
        )
    if "data_lengths" in given:
        _checked_lengths(given["data_lengths"], "data_lengths", 1, given["data"].shape[0])
    short = np.flatnonzero(sequences.needed > sequences.data_lengths)
    if short.size:
        b = int(short[0])
        raise OperatorError(
            f"{NAME}: the label of sequence {b} (length {sequences.label_lengths[b]}, "
            f"{sequences.needed[b]} steps with blanks between repeated labels) cannot be "
            f"aligned to its {sequences.data_lengths[b]} time steps"
        )


def _check_whole_on_device(kctx: Any, name: str, values: Any, low: float, high: float) -> None:
    kctx.backend.check_range(NAME, name, values, low, high, inclusive=True)
    if values.dtype.kind == "f":
        kctx.backend.check_range(NAME, f"fractional part of {name}", values - kctx.xp.floor(values), 0, 0, True)


def _check_on_device(kctx: Any, attrs: dict, given: dict, sequences: Sequences, alphabet: int) -> None:
    """The checks of :func:`_check_on_host` as the device's range checks, raised at the host's next
    wait (:meth:`~lazynd.backend.base.Backend.check_range`): reading the values back would make the
    host wait for the device at every step and keep an executor's pass out of a CUDA graph.
    Meanwhile the kernel runs on the values :func:`_sequences` put in range."""
    xp, label = kctx.xp, given["label"]
    width = label.shape[1]
    if "label_lengths" in given:
        _check_whole_on_device(kctx, "label_lengths", given["label_lengths"], 0, width)
    if width:
        low, high = _label_range(attrs, alphabet)
        inside = xp.arange(width)[None, :] < sequences.label_lengths[:, None]
        name = f"label (blank_label='{attrs['blank_label']}', alphabet_size {alphabet}; before each label's end)"
        _check_whole_on_device(kctx, name, xp.where(inside, label, low), low, high)
    if "data_lengths" in given:
        _check_whole_on_device(kctx, "data_lengths", given["data_lengths"], 1, given["data"].shape[0])
    spare = sequences.data_lengths - sequences.needed
    # (position: the sequence; its label needs a step per label and one per blank between repeats)
    kctx.backend.check_range(NAME, "time steps a sequence has beyond what its label needs", spare, 0, np.inf, True)


def _prepared(kctx: Any, attrs: dict, inputs: list) -> tuple[dict, Sequences]:
    """The inputs by name and their labels and lengths, checked on their device."""
    given = dict(zip(_input_names(attrs), inputs, strict=True))
    steps, _, alphabet = given["data"].shape
    if alphabet < 2:
        raise OperatorError(f"{NAME}: alphabet_size (last axis of 'data') is {alphabet}, expected at least 2")
    if steps == 0:
        raise OperatorError(f"{NAME}: 'data' has sequence_length 0, expected at least 1 (a sequence emits a blank)")
    sequences = _sequences(kctx.xp, attrs, given, alphabet)
    if kctx.xp is np:
        _check_on_host(attrs, given, sequences, alphabet)
    else:
        _check_on_device(kctx, attrs, given, sequences, alphabet)
    return given, sequences


def _shift(values: np.ndarray, k: int) -> np.ndarray:
    """``values`` (batch, positions) moved ``k`` positions along the label (towards the end for
    ``k > 0``, the start for ``k < 0``); -inf fills the positions left empty."""
    out = np.full_like(values, _NEG_INF)
    if k > 0:
        out[:, k:] = values[:, :-k]
    else:
        out[:, :k] = values[:, -k:]
    return out


def _logsumexp(*terms: np.ndarray) -> np.ndarray:
    """The elementwise log of the sum of the exponentials of ``terms`` (all -inf gives -inf)."""
    top = np.maximum.reduce(terms)
    safe = np.where(np.isfinite(top), top, 0.0)
    return safe + np.log(sum(np.exp(t - safe) for t in terms))


def ctc_loss_and_gradient(
    data: np.ndarray, classes: np.ndarray, label_lengths: np.ndarray, data_lengths: np.ndarray, blank: int
) -> tuple[np.ndarray, np.ndarray]:
    """The CTC loss of each sequence and its gradient with respect to the activations ``data``.

    ``classes`` (batch, label_length) holds class indices (entries past a label's length are
    ignored); the computation is in float64.  Every label must be reachable in its sequence.
    """
    steps, batch, alphabet = data.shape
    x = data.astype(np.float64)
    shifted = x - x.max(axis=2, keepdims=True)
    log_prob = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))

    # the extended label: blanks around and between the labels
    positions = 2 * classes.shape[1] + 1
    extended = np.full((batch, positions), blank, dtype=np.int64)
    extended[:, 1::2] = classes
    ends = 2 * label_lengths + 1  # positions used by each sequence
    skip = np.zeros((batch, positions), dtype=bool)  # s-2 -> s allowed: a label differing from the one before
    skip[:, 3::2] = classes[:, 1:] != classes[:, :-1]
    emit = np.take_along_axis(log_prob, np.broadcast_to(extended, (steps, batch, positions)), axis=2)
    rows = np.arange(batch)

    alpha = np.full((steps, batch, positions), _NEG_INF)
    alpha[0, :, 0] = emit[0, :, 0]
    alpha[0, :, 1] = np.where(ends > 1, emit[0, :, 1], _NEG_INF)
    for t in range(1, steps):
        prev = alpha[t - 1]
        two_back = np.where(skip, _shift(prev, 2), _NEG_INF)
        alpha[t] = _logsumexp(prev, _shift(prev, 1), two_back) + emit[t]

    last = data_lengths - 1
    final = alpha[last, rows]  # (batch, positions) at each sequence's last step
    end_blank = final[rows, ends - 1]
    end_label = np.where(ends > 1, final[rows, np.maximum(ends - 2, 0)], _NEG_INF)
    log_likelihood = _logsumexp(end_blank, end_label)

    # beta[t, s]: log probability of emitting the rest of the label after step t, from position s
    beta = np.full((steps, batch, positions), _NEG_INF)
    start = np.full((batch, positions), _NEG_INF)
    start[rows, ends - 1] = 0.0
    start[rows[ends > 1], (ends - 2)[ends > 1]] = 0.0
    after = np.full((batch, positions), _NEG_INF)
    for t in range(steps - 1, -1, -1):
        if t < steps - 1:
            ahead = after + emit[t + 1]
            two_ahead = np.where(skip, ahead, _NEG_INF)
            after = _logsumexp(ahead, _shift(ahead, -1), _shift(two_ahead, -2))
        ended, ending = (last < t)[:, None], (last == t)[:, None]
        after = np.where(ending, start, np.where(ended, _NEG_INF, after))
        beta[t] = after

    # the occupancy of the positions each label uses; none where no alignment has any probability
    # (MXNet 1.9.1: an infinite loss, and the softmax as the gradient), NaN where the likelihood is
    used = (np.arange(positions)[None, :] < ends[:, None]) & ~(log_likelihood == _NEG_INF)[:, None]
    occupancy = np.where(used[None], np.exp(alpha + beta - log_likelihood[None, :, None]), 0.0)
    gradient = np.exp(log_prob)
    step_index = np.arange(steps)[:, None, None]
    batch_index = rows[None, :, None]
    np.subtract.at(gradient, (step_index, batch_index, np.broadcast_to(extended, occupancy.shape)), occupancy)
    gradient[np.arange(steps)[:, None] >= data_lengths[None, :]] = 0.0
    return -log_likelihood, gradient


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    given, sequences = _prepared(kctx, attrs, inputs)
    data = given["data"]
    blank = _blank(attrs, data.shape[2])
    loss, gradient = ctc_loss_and_gradient(
        data, sequences.classes, sequences.label_lengths, sequences.data_lengths, blank
    )
    outputs[0][...] = loss
    outputs[1][...] = gradient


def _forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    given, sequences = _prepared(kctx, attrs, inputs)
    data = given["data"]
    blank = _blank(attrs, data.shape[2])
    ctc_loss_gpu(
        kctx, data, sequences.classes, sequences.label_lengths, sequences.data_lengths, blank, outputs[0], outputs[1]
    )


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    # d loss[b] / d data[t, b, k] was computed in the forward pass; scale it by each sequence's head gradient
    head = F.reshape(out_grads[0], shape=(1, -1, 1))
    return [F.broadcast_mul(outputs[1], head)] + [None] * (len(inputs) - 1)


register(
    OpDef(
        NAME,
        _forward,
        inputs=_input_names,
        # MXNet lists both lengths before the parameters, whatever use_data_lengths and use_label_lengths
        positional_inputs=("data", "label", "data_lengths", "label_lengths"),
        outputs=("output0", "output1"),  # MXNet 1.9.1 names a kernel of two outputs so (the data gradient is hidden)
        num_visible_outputs=1,
        params={
            "use_data_lengths": Param(parse_bool, False, "read each sequence's length from 'data_lengths'"),
            "use_label_lengths": Param(parse_bool, False, "read each label's length from 'label_lengths'"),
            "blank_label": Param(
                enum("first", "last"), "first", "the blank is class 0 ('first', 0 pads) or the last ('last', -1 pads)"
            ),
        },
        infer_shape=_infer_shape,
        infer_type=_infer_type,
        forward_gpu=_forward_gpu,
        gradient=_gradient,
        aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
        float_data=True,
        doc=__doc__ or "",
    )
)
