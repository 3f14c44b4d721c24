"""``mx.autograd.Function``: a differentiable function written in Python, forward and backward by hand.

Subclass it, define ``forward(*inputs)`` and ``backward(*output_grads)`` (NDArrays in, NDArrays
out; ``backward`` returns one gradient per input of ``forward``), and call an instance once on
NDArrays.  ``forward`` runs unrecorded; inside :func:`~lazynd.autograd.record` its outputs are
recorded as the outputs of one node whose gradient rule is ``backward``.  As in MXNet 1.x, an
instance is called once (make a new one per call), and ``save_for_backward`` keeps the arrays
``backward`` needs in ``saved_tensors``.  Those saved arrays are checked at backward, as every
recorded operator's are: one written in place since the call is an error, not a wrong gradient.
"""

from __future__ import annotations

from typing import Any

from ..errors import LazyNDError
from ..ndarray import dispatch
from .graph import Node, entry_of
from .state import flags, set_flags


class Function:
    """A user-defined differentiable function (MXNet 1.x's ``mx.autograd.Function``).

    Examples
    --------
    >>> import lazynd as mx
    >>> class Sigmoid(mx.autograd.Function):
    ...     def forward(self, x):
    ...         y = 1 / (1 + mx.nd.exp(-x))
    ...         self.save_for_backward(y)
    ...         return y
    ...     def backward(self, dy):
    ...         (y,) = self.saved_tensors
    ...         return dy * y * (1 - y)
    >>> x = mx.nd.array([0.0, 2.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = Sigmoid()(x)
    >>> y.backward()
    >>> x.grad.asnumpy().round(4)
    array([0.25 , 0.105], dtype=float32)
    """

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *args: Any) -> None:
        """Keep ``args`` (NDArrays or anything else) in :attr:`saved_tensors` for :meth:`backward`."""
        self.saved_tensors = args

    def forward(self, *inputs: Any) -> Any:
        """The function: NDArrays in, one NDArray or a tuple or list of them out (to override)."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def backward(self, *output_grads: Any) -> Any:
        """The gradients of the inputs of :meth:`forward`, one NDArray (or a tuple of them, one per
        input) from the gradients of its outputs, one per output (to override)."""
        raise NotImplementedError(f"{type(self).__name__}.backward is not defined")

    def __call__(self, *inputs: Any) -> Any:
        name = type(self).__name__
        if self._used:
            raise LazyNDError(
                f"autograd.Function '{name}': an instance is called once; create another instance for each call"
            )
        self._used = True
        for i, x in enumerate(inputs):
            if not isinstance(x, dispatch.NDArray):
                raise LazyNDError(f"autograd.Function '{name}': input {i} must be an NDArray, got {type(x).__name__}")
        recording, training = flags.recording, flags.training
        set_flags(False, training)
        try:
            result = self.forward(*inputs)
        finally:
            set_flags(recording, training)
        outputs = [result] if isinstance(result, dispatch.NDArray) else result
        if not isinstance(outputs, (list, tuple)) or not all(isinstance(o, dispatch.NDArray) for o in outputs):
            raise LazyNDError(
                f"autograd.Function '{name}': forward must return an NDArray or a tuple or list of NDArrays, "
                f"got {type(result).__name__}"
            )
        entries = [entry_of(x) for x in inputs]
        if not recording or not any(entries):
            return result
        # an output that is an input handed back, another output again, or in a graph already is
        # recorded on an alias of its memory: the caller's arrays keep their own history
        taken = {id(x) for x in inputs}
        recorded = []
        for o in outputs:
            if id(o) in taken or entry_of(o) is not None:
                o = o.detach()
            taken.add(id(o))
            recorded.append(o)
        node = Node(name, _FunctionGradient(self), {}, list(inputs), entries, recorded)
        # what backward may read, checked before it runs (Node.check_unmodified): the inputs and
        # outputs, as for any rule, and any other array saved for it
        watched = [x.var for x in inputs] + [o.var for o in recorded]
        watched += [t.var for t in self.saved_tensors if isinstance(t, dispatch.NDArray) and t.var not in watched]
        node.watched, node.versions = watched, [var.version for var in watched]
        for i, o in enumerate(recorded):
            o._ag = (node, i)
        if isinstance(result, dispatch.NDArray):
            return recorded[0]
        return type(result)(recorded) if isinstance(result, tuple) else recorded


class _FunctionGradient:
    """The gradient rule of a recorded :class:`Function` call: its ``backward``, checked."""

    def __init__(self, function: Function) -> None:
        self.function = function

    def __call__(self, F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        function, name = self.function, type(self.function).__name__
        # private copies: an output gradient may be another input's gradient too (``y + w`` hands
        # one array to both) or the shared default head gradient, and a backward may write into
        # its arguments (``dy *= 2``; MXNet makes them read-only)
        result = function.backward(*[g if g is None else g.copy() for g in out_grads])
        grads = [result] if isinstance(result, dispatch.NDArray) else result
        if not isinstance(grads, (list, tuple)) or len(grads) != len(inputs):
            count = len(grads) if isinstance(grads, (list, tuple)) else type(result).__name__
            raise LazyNDError(
                f"autograd.Function '{name}': backward must return one NDArray per input of forward "
                f"({len(inputs)}), got {count}"
            )
        checked = []
        for i, (g, x) in enumerate(zip(grads, inputs, strict=True)):
            if not isinstance(g, dispatch.NDArray) or g.shape != x.shape:
                given = f"shape {g.shape}" if isinstance(g, dispatch.NDArray) else type(g).__name__
                raise LazyNDError(
                    f"autograd.Function '{name}': backward's gradient {i} must be an NDArray of shape {x.shape} "
                    f"(input {i}'s), got {given}"
                )
            if g.context != x.context:
                g = g.as_in_context(x.context)
            checked.append(g if g.dtype == x.dtype else g.astype(x.dtype))
        return checked
