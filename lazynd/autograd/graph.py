"""The recorded graph: variables (:class:`Leaf`), recorded operations (:class:`Node`) and the
*entries* that tie arrays to them.

An array autograd knows carries an *entry* in its ``_ag`` slot: ``(node, i)``, output ``i``
of a recorded :class:`Node`, or ``(leaf, 0)`` for a variable (a :class:`Leaf`, made by
``attach_grad`` or :func:`~.recording.mark_variables`).  There is no global tape: a node is
held by the entries of its outputs and by the nodes that read them, so a graph nobody can
reach any more is freed with its arrays.

A node keeps what its gradient rule reads (the inputs and outputs of a registered operator)
with the engine version of each (:attr:`lazynd.engine.Var.version`, counted at every push
that writes a var; views share their parent's var), and :func:`.backward.backward` refuses
to run a rule whose arrays were written since.  :mod:`.recording` makes the nodes and the
variables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import LazyNDError
from ..ops.registry import OpDef


class Leaf:
    """A variable: where backward puts its gradient (``grad``, None for ``'null'``), and how (``grad_req``).

    The owner of an entry, a :class:`Leaf` or a :class:`Node`, has a ``grad``: what
    :attr:`lazynd.NDArray.grad` gives for the array carrying the entry.
    """

    __slots__ = ("grad", "grad_req")
    freed = False  # a variable stays one until marked again

    def __init__(self, grad: Any, grad_req: str) -> None:
        self.grad = grad
        self.grad_req = grad_req


class Node:
    """One recorded operation.

    ``rule(F, attrs, inputs, outputs, out_grads) -> list`` gives the gradients of ``inputs``
    (a registered operator's ``gradient``); ``entries`` are the inputs' entries when it was
    recorded; ``outputs`` are the outputs' arrays (without entries: a node never holds its
    own); ``watched`` holds the engine vars of the arrays the rule reads (the inputs, then the
    outputs; a backward operator's rule, :class:`~lazynd.ops.registry.BackwardOpGradient`, only
    its first inputs), and ``versions`` their versions when the node was recorded (both empty:
    the rule reads none of them; a version None: an input the call itself updates in place, a
    Custom operator's auxiliary state, whose later writes are expected).
    ``plan`` is the call plan of a registered operator's call (None for the other nodes: views,
    copies, assignments): with the graph around it, it says what the rule will push
    (:mod:`.replay`).
    """

    __slots__ = (
        "name", "op", "rule", "attrs", "inputs", "entries", "outputs", "watched", "versions", "n_visible", "freed",
        "plan", "__weakref__",
    )  # fmt: skip
    grad = None  # an array recorded from an operation is no variable: it has no gradient buffer (NDArray.grad)

    def __init__(
        self,
        name: str,
        rule: Callable[..., list] | None,
        attrs: dict[str, Any],
        inputs: list[Any],
        entries: list[Any],
        outputs: list[Any],
        op: OpDef | None = None,
        n_visible: int | None = None,
        plan: Any = None,
    ) -> None:
        self.name = name
        self.op = op
        self.plan = plan
        self.rule = rule
        self.attrs = attrs
        self.inputs = inputs
        self.entries = entries
        self.outputs = [o.detach() for o in outputs]
        self.watched: list[Any] = []
        self.versions: list[int | None] = []
        self.n_visible = len(outputs) if n_visible is None else n_visible
        self.freed = False

    @property
    def is_loss(self) -> bool:
        """A loss operator: its rule takes no head gradient (as its parameters make it:
        ``SoftmaxOutput(out_grad=True)`` takes one, :meth:`OpDef.specialize`)."""
        return self.op is not None and self.op.specialize(self.attrs).is_loss

    def input_label(self, i: int) -> str:
        """How errors name input ``i``: the operator's name for it where it has one."""
        if self.op is not None and not self.op.variadic:
            names = self.op.input_names(self.attrs)
            if i < len(names):
                return f"input '{names[i]}'"
        return f"input {i}"

    def check_unmodified(self) -> None:
        """Raise if an array the rule reads was written since it was recorded."""
        for k, (var, version) in enumerate(zip(self.watched, self.versions, strict=True)):
            if version is not None and var.version != version:
                n_in, n_out = len(self.inputs), len(self.outputs)
                if k < n_in:
                    label, shape = self.input_label(k), f" (shape {self.inputs[k].shape})"
                elif k < n_in + n_out:
                    label, shape = f"output {k - n_in}", f" (shape {self.outputs[k - n_in].shape})"
                else:  # an autograd.Function's array saved for its backward
                    label, shape = f"array {k - n_in - n_out} saved for backward", ""
                raise LazyNDError(
                    f"autograd: {label} of operator '{self.name}'{shape} was modified in place after "
                    "it was recorded, so its gradient would be wrong; write into a copy instead, or record again"
                )

    def free(self) -> None:
        """Drop what the node holds for its gradient (after a backward without ``retain_graph``)."""
        self.inputs = self.outputs = self.watched = self.versions = []
        self.freed = True


def _plain(array: Any) -> Any:
    """``array``'s memory as an array without an autograd entry."""
    return array.detach()


def entry_of(array: Any) -> Any:
    """The autograd entry of ``array``: None for an array autograd never saw, or whose graph a
    backward has freed (its values are then constants to a new recording, as in MXNet)."""
    entry = array._ag
    if entry is not None and entry[0].freed:
        return None
    return entry
