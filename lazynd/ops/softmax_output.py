"""``SoftmaxOutput`` (alias ``Softmax``): softmax in the forward pass, a loss head's gradient.

The gradient is ``(softmax(data) - one_hot(label)) * grad_scale``, normalised as MXNet
does, with ignore labels, label smoothing, probabilities as labels and ``out_grad``;
one label per row takes a one-pass path (a cached identity table on the host,
``softmax.cu``'s kernel on the GPU); the other modes take masks on both devices.  A label out
of range is an error on every path: at once on the host, by a device check on a GPU (made by
``softmax.cu``'s kernel itself on the one-pass path), so that no GPU pass reads the host and an
executor's backward can be captured into a CUDA graph.  The shared loss-head pieces (the normalization
parameter and the label type rule) are in :mod:`~lazynd.ops.loss`.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError, ShapeError
from .host_reduce import identity
from .label_classes import label_error, named_classes
from .loss import _NORMALIZATION, _label_type
from .params import FRACTION, Param, parse_bool, parse_float
from .registry import OpDef, merge_shape, register
from .softmax import softmax_into

_SOURCE = load_file("softmax.cu")  # read once; each kernel compiles on first use


# -- SoftmaxOutput ---------------------------------------------------------------------------------


def _softmax_axis(attrs: dict, ndim: int) -> int:
    if attrs["multi_output"]:
        if ndim < 2:
            raise OperatorError(f"SoftmaxOutput: multi_output needs data with at least 2 dimensions, got {ndim}")
        return 1
    return ndim - 1


def _softmax_view(attrs: dict, x: Any) -> Any:
    # without multi_output or preserve_shape the class axis is everything after the batch axis
    if not attrs["multi_output"] and not attrs["preserve_shape"] and x.ndim != 2:
        return x.reshape(x.shape[0], -1)
    return x


def _softmax_label_shape(attrs: dict, data: tuple[int, ...]) -> tuple[int, ...]:
    if attrs["multi_output"]:
        # MXNet's default: the positions after the class axis flattened, one row per sample
        return (data[0], int(np.prod(data[2:], dtype=np.int64)))
    if attrs["preserve_shape"]:
        return tuple(data[:-1])
    return (data[0],)


def _multi_output_label_shapes(data: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """The label shapes MXNet accepts with ``multi_output``, by their number of axes (first wins).

    The positions after the class axis flattened ``(n, d1*d2...)`` (the default), unflattened
    ``(n, d1, d2...)``, or data's shape with one class ``(n, 1, d1, d2...)``, as detection
    programs pass the RPN label.
    """
    candidates = [
        _softmax_label_shape({"multi_output": True}, data),
        (data[0],) + tuple(data[2:]),
        (data[0], 1) + tuple(data[2:]),
    ]
    by_ndim: dict[int, tuple[int, ...]] = {}
    for shape in candidates:
        by_ndim.setdefault(len(shape), shape)
    return by_ndim


def _one_label_per_position(attrs: dict, data: tuple[int, ...], label: Any) -> bool:
    """Whether ``label`` holds one class per position of the last axis, ``data.shape[:-1]``.

    Time-major language models written for MXNet 0.9 pass such labels (then the softmax ran
    over the last axis); MXNet 1.x still accepts them, but its softmax runs over every axis
    after the first and its gradient takes the first labels one per sample: numbers that
    mean nothing, so the shape rule refuses the label and names ``preserve_shape``.
    """
    return label is not None and not attrs["preserve_shape"] and len(data) > 2 and tuple(label) == tuple(data[:-1])


def _softmax_output_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data, label = in_shapes
    if data is None:
        return in_shapes, [None], aux_shapes
    if not data:
        raise ShapeError("SoftmaxOutput: data is 0-d, expected at least one axis (the batch)")
    if label is not None and tuple(label) == tuple(data):
        return [tuple(data), tuple(label)], [tuple(data)], aux_shapes  # probabilities as labels
    expected = _softmax_label_shape(attrs, tuple(data))
    if attrs["multi_output"] and label is not None:
        accepted = _multi_output_label_shapes(tuple(data))
        if len(label) not in accepted:
            listed = " or ".join(str(shape) for shape in accepted.values())
            raise ShapeError(f"SoftmaxOutput: shape of 'label' is {tuple(label)}, expected {listed}")
        expected = accepted[len(label)]
    elif _one_label_per_position(attrs, tuple(data), label):
        raise ShapeError(
            f"SoftmaxOutput: shape of 'label' is {tuple(label)}, expected {expected}: without preserve_shape "
            f"the softmax runs over all axes after the first of data {tuple(data)}, one label per sample; "
            "for one label per position over the last axis pass preserve_shape=True "
            "(MXNet 1.x accepts this label but pairs the first labels with whole samples)"
        )
    label = merge_shape("SoftmaxOutput", "label", label, expected)
    return [tuple(data), label], [tuple(data)], aux_shapes


def _softmax_output_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = _softmax_view(attrs, inputs[0]), outputs[0]
    target = _softmax_view(attrs, out)
    softmax_into(kctx, x, target, _softmax_axis(attrs, x.ndim))
    if target is not out and not out.flags.c_contiguous:  # reshape may have copied: write the result back
        out[...] = target.reshape(out.shape)


def _one_hot_rows(given: np.ndarray, classes: int, dtype: np.dtype) -> np.ndarray:
    """The one-hot rows of the host labels ``given``, gathered from a cached identity table.

    Float labels are compared with the range as given, before their conversion to integers
    (undefined for NaN, infinities and floats beyond int64: x86 gives -2**63, aarch64 0, i.e. class
    0), by their minimum and maximum: NaN propagates through both and fails the comparison, so NaN
    costs no pass of its own.  Integer labels need only their minimum: ``take`` refuses a label of
    ``classes`` or more itself, and a negative one it would wrap around.  (A label check costs 3 us
    a batch this way, against 6 for a separate range check, in a training loop whose caches the
    GEMMs evict.)
    """
    if given.size:
        if given.dtype.kind == "f":
            inside = np.minimum.reduce(given) > -1 and np.maximum.reduce(given) < classes  # trunc(-0.5) is 0
        else:
            inside = np.minimum.reduce(given) >= 0
        if not inside:
            raise label_error("SoftmaxOutput", "label", named_classes(np, given), 0, classes)
    try:
        return identity(classes, dtype).take(given.astype(np.int64, copy=False), axis=0)
    except IndexError:
        raise label_error("SoftmaxOutput", "label", named_classes(np, given), 0, classes) from None


_OUTPUT_GRAD_LABELS = ("float32", "float64", "int32", "int64")


def _output_grad_kernel(p: Any, label: Any) -> Any:
    """softmax.cu's one-pass gradient for device probabilities ``p`` and labels ``label``, or None
    for dtypes it has no kernel for."""
    value, kind = dtype_name(p.dtype), dtype_name(label.dtype)
    if value not in ("float32", "float64") or kind not in _OUTPUT_GRAD_LABELS or not p.flags.c_contiguous:
        return None
    return _SOURCE.function(p.device.id, f"lazynd_softmax_output_grad_{value}_{kind}")


def _softmax_output_backward_rows(kctx: Any, attrs: dict, p: Any, label: Any, grad: Any) -> None:
    """The common case (one label per row, no ignore label, no smoothing), written into ``grad``.

    On the host ``(p - one_hot(label)) * scale``, one pass for the gradient, as hand NumPy
    writes it (``p - eye[label]``).  On a GPU a label out of range is found by a device check,
    raised at the next wait (see :func:`_checked_labels`); softmax.cu's one-pass kernel makes that
    check itself as it reads the labels, so the common step of a training loop launches nothing
    more for it.
    """
    xp = kctx.xp
    rows, classes = p.shape
    scale = attrs["grad_scale"]
    if attrs["normalization"] in ("batch", "valid"):
        scale /= max(rows, 1)
    if xp is np:
        given = label.reshape(-1)
        np.subtract(p, _one_hot_rows(given, classes, p.dtype), out=grad)
        if scale != 1.0:
            grad *= p.dtype.type(scale)
        return
    kernel = _output_grad_kernel(p, label)
    if kernel is not None:
        report, check = kctx.backend.check_report("SoftmaxOutput", "label", 0, classes)
        grid, block = launch_config(p.size)
        kernel(
            grid,
            block,
            (
                p,
                xp.ascontiguousarray(label),
                grad,
                np.int64(rows),
                np.int32(classes),
                p.dtype.type(scale),
                np.float64(check),
                report,
            ),
        )
        return
    # no one-pass kernel for these types (float16 data, other label types): the check launched on its own
    named = named_classes(xp, label.reshape(-1))
    kctx.backend.check_range("SoftmaxOutput", "label", named, 0, classes)
    xp.multiply(p, p.dtype.type(scale), out=grad)
    # each row's label entry, by flat index (one per row, so ``-=`` is exact): cheaper than
    # grad[arange(rows), labels], which indexes two arrays.  A label outside [0, classes)
    # subtracts nothing, as in the kernel above: its flat index would land in another row
    inside = (named >= 0) & (named < classes)
    labels = xp.where(inside, named, 0).astype(np.int64)
    labels += xp.arange(0, rows * classes, classes)
    grad.reshape(-1)[labels] -= inside.astype(p.dtype) * p.dtype.type(scale)


def _softmax_output_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    prob, label = inputs[0], inputs[1]
    grad = outputs[0]
    if label.shape == prob.shape:
        # a probability per class as the label: (output - label) * grad_scale, weighted by the
        # head gradient with out_grad (MXNet applies no normalization here)
        xp.subtract(prob, label, out=grad)
        grad *= grad.dtype.type(attrs["grad_scale"])
        if attrs["out_grad"]:
            grad *= inputs[2]
        return
    p = _softmax_view(attrs, prob)
    axis = _softmax_axis(attrs, p.ndim)
    if (
        p.ndim == 2
        and axis == 1
        and not attrs["use_ignore"]
        and not attrs["smooth_alpha"]
        and grad.flags.c_contiguous
        and label.size == p.shape[0]
    ):
        # grad has prob's shape: p's itself when 2-D
        _softmax_output_backward_rows(kctx, attrs, p, label, grad if grad.ndim == 2 else grad.reshape(p.shape))
        if attrs["out_grad"]:
            grad *= inputs[2]
        return
    _softmax_output_backward_positions(kctx, attrs, p, label, grad)
    if attrs["out_grad"]:  # weighted by the head gradient, element by element (MXNet's documented out_grad)
        grad *= inputs[2]


def _checked_labels(kctx: Any, named: Any, valid: Any, classes: int) -> None:
    """Refuse a label (the class it names, :func:`~lazynd.ops.label_classes.named_classes`; not
    ignored where ``valid`` says so) outside ``0..classes-1``.

    On the host at once.  On a GPU reading the labels back would make the host wait for the
    device at every step and keep an executor's backward pass out of a CUDA graph: a device check
    (:meth:`~lazynd.backend.base.Backend.check_range`) raises at the next wait instead, and
    meanwhile such a label matches no class (its position's gradient is the probabilities), where
    CuPy's integer indexing would have wrapped it around to another class."""
    checked = named if valid is None else kctx.xp.where(valid, named, 0)
    if kctx.xp is np:
        if checked.size and not ((checked >= 0) & (checked < classes)).all():
            raise label_error("SoftmaxOutput", "label", checked, 0, classes)
        return
    kctx.backend.check_range("SoftmaxOutput", "label", checked, 0, classes)


def _softmax_output_backward_positions(kctx: Any, attrs: dict, p: Any, label: Any, grad: Any) -> None:
    """The gradient of several labels a sample, ignore labels or smoothing, written into ``grad``.

    One formulation for both devices, of masks and elementwise operations only: no host read of
    the labels and no index list found from them (``nonzero``), so on a GPU the pass needs no
    host synchronisation and can be captured into a CUDA graph.  The target of each position is
    a comparison of the class numbers with its label, subtracted where it holds; the valid count
    of ``normalization='valid'`` stays on the device.
    """
    xp = kctx.xp
    axis = _softmax_axis(attrs, p.ndim)
    outer, classes = int(np.prod(p.shape[:axis], dtype=np.int64)), p.shape[axis]
    # work in the output buffer when it is contiguous: no copy of the probabilities, no copy back
    direct = grad.flags.c_contiguous
    g = grad.reshape(outer, classes, -1) if direct else xp.empty((outer, classes, p.size // (outer * classes)), p.dtype)
    g[...] = p.reshape(g.shape)
    named = named_classes(xp, label.reshape(outer, -1))
    valid = named != int(attrs["ignore_label"]) if attrs["use_ignore"] else None
    _checked_labels(kctx, named, valid, classes)
    # (outer, classes, inner): true at each position's label; a label out of range matches nothing
    target = xp.arange(classes, dtype=np.int64)[None, :, None] == named[:, None, :]
    alpha = attrs["smooth_alpha"]
    if alpha and classes > 1:
        # smoothed target: 1 - alpha on the label, alpha / (classes - 1) elsewhere
        g -= alpha / (classes - 1)
        g -= target * g.dtype.type(1 - alpha - alpha / (classes - 1))
    else:
        g -= target
    if valid is not None:
        g *= valid[:, None, :]
    if attrs["normalization"] == "valid" and valid is not None:
        # the count stays on the device: grad_scale / count in float64 there, then in g's type
        count = xp.maximum(valid.sum(), 1)
        g *= xp.true_divide(attrs["grad_scale"], count).astype(g.dtype)
    else:
        scale = attrs["grad_scale"]
        if attrs["normalization"] == "valid":
            scale /= max(named.size, 1)  # nothing ignored: every position is valid
        else:
            if attrs["multi_output"]:
                scale /= g.shape[2]  # MXNet divides by the positions per sample unless normalizing by 'valid'
            if attrs["normalization"] == "batch":
                # MXNet's batch is the rows of the data seen as 2-D: every position but the class
                # axis's with preserve_shape, the first axis otherwise
                scale /= max(outer, 1)
        if scale != 1.0:
            g *= scale
    if not direct:
        grad[...] = g.reshape(grad.shape)


_SOFTMAX_PARAMS = {
    "grad_scale": Param(parse_float, 1.0, "scale of the gradient"),
    "ignore_label": Param(parse_float, -1.0, "label whose positions get no gradient when use_ignore"),
    "multi_output": Param(parse_bool, False, "softmax over axis 1, one label per remaining position"),
    "use_ignore": Param(parse_bool, False, "give no gradient where the label is ignore_label"),
    "preserve_shape": Param(parse_bool, False, "softmax over the last axis, label shape = data.shape[:-1]"),
    "normalization": _NORMALIZATION,
    "out_grad": Param(
        parse_bool, False, "with probability labels, weight the gradient by the head gradient (which is then needed)"
    ),
    "smooth_alpha": Param(
        FRACTION, 0.0, "label smoothing: target 1 - alpha on the label, alpha / (classes - 1) elsewhere"
    ),
}


def _softmax_output_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    head = [out_grads[0]] if attrs["out_grad"] else []
    return [F._backward_SoftmaxOutput(outputs[0], inputs[1], *head, **attrs), None]


class _SoftmaxOutputDef(OpDef):
    """``SoftmaxOutput``: a loss head, unless ``out_grad`` asks for the head gradient."""

    def specialize(self, attrs: dict) -> OpDef:
        if not attrs.get("out_grad"):
            return self
        weighted = copy.copy(self)
        weighted.is_loss = False
        return weighted


register(
    _SoftmaxOutputDef(
        "SoftmaxOutput",
        _softmax_output_forward,
        inputs=("data", "label"),
        params=_SOFTMAX_PARAMS,
        float_data=True,
        infer_shape=_softmax_output_shape,
        infer_type=_label_type,
        gradient=_softmax_output_gradient,
        is_loss=True,
        # as MXNet's: the probabilities may overwrite the scores (the gradient reads the output only)
        inplace=((0, 0),),
        aliases=("Softmax",),
        doc="Softmax in the forward pass; (softmax - one_hot(label)) * grad_scale as the gradient.",
    )
)
register(
    OpDef(
        "_backward_SoftmaxOutput",
        _softmax_output_backward,
        inputs=lambda attrs: ("output", "label", "head_grad") if attrs.get("out_grad") else ("output", "label"),
        params=_SOFTMAX_PARAMS,
        infer_shape=lambda attrs, s, a: (s, [s[0]], a),
        infer_type=_label_type,
        doc="Gradient of SoftmaxOutput with respect to its data.",
    )
)
