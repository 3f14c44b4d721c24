"""One backward pass: the graph's order, the gradients gathered, each node's rule called.

:class:`_Backward` is what :func:`.backward.backward` and :func:`.backward.grad` run once
their arguments are checked.  The nodes that lead from the heads to the wanted variables are
visited consumers first; each node's rule (the registry's ``gradient``, with ``F`` the
operator functions of :class:`_RuleOperators`, or ``lazynd.nd`` under ``create_graph``) is
called on the sum of the gradients its outputs received, and what it returns goes to its
inputs' entries.  A pass met again is captured, and later ones replayed (:mod:`.replay`).
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as _ndarray
from ..errors import LazyNDError
from ..ndarray.copying import copy_into
from ..ndarray.dispatch import new_array
from ..ndarray.functions import make_function
from ..ops.registry import BackwardOpGradient, sum_gradients
from . import replay
from .graph import Leaf, Node, _plain
from .state import set_flags

nd: Any = _ndarray  # the operator functions are module attributes made at import time (F of every rule)


class _RuleOperators:
    """The ``F`` of the gradient rules of a backward pass that records nothing.

    ``F.<op>`` is ``lazynd.nd``'s function of that operator made to call
    :func:`lazynd.ndarray.dispatch.invoke` unrecorded, in the pass's mode: without the
    recorder's checks, which are there for user calls.  Any name that is not an operator
    function (``zeros``, ``NDArray``) is ``lazynd.nd``'s.
    """

    def __init__(self, is_train: bool) -> None:
        self._is_train = is_train

    def __getattr__(self, name: str) -> Any:  # a name's first use: what it gives is kept on the instance
        function = getattr(nd, name)
        op = getattr(function, "op", None)
        if op is not None:
            function = make_function(op, name, is_train=self._is_train, unrecorded=True)
        setattr(self, name, function)
        return function


_RULE_OPERATORS = {False: _RuleOperators(False), True: _RuleOperators(True)}  # by training mode
# backward()'s default head gradients on the host, by the head's signature (see _default_head_gradient)
_shared_ones: dict[Any, Any] = {}
_MAX_SHARED_ONES = 64


class _Backward:
    """One backward pass: the graph's order, the gradients gathered, the rules called.

    Gradient terms are gathered per entry key ``(id of node or leaf, output index)``; ``flows``
    holds the keys whose gradients are kept: the wanted ones (``targets``) and the outputs of
    the nodes that lead to one (the ``needed`` nodes; the others have nothing to compute).
    """

    def __init__(self, heads: list, head_grads: list, variables: list | None, create_graph: bool, train_mode: bool):
        self.heads = heads
        self.head_grads = head_grads
        self.variables = variables  # the arrays whose gradients grad() returns; None: every variable (backward)
        self.wanted = None if variables is None else [v._ag for v in variables]
        self.create_graph = create_graph
        self.train_mode = train_mode
        # the rules' F: lazynd.nd when their operations are recorded, else calls without the recorder
        self.F = nd if create_graph else _RULE_OPERATORS[bool(train_mode)]
        self.grads: dict[tuple[int, int], list] = {}  # entry key -> gradient terms
        self.leaves: dict[int, Leaf] = {}  # backward(): the variables reached that take a gradient
        self.flows: set[tuple[int, int]] = set()
        self.direct: dict[int, Leaf] = {}  # variables whose one gradient term is written into .grad at once
        self.written: set[int] = set()  # those of them a backward operator wrote
        self.shape: replay.Structure | None = None  # the graph's, while the pass is captured for replay
        self.checked: list[int] = []  # with shape: the nodes checked for in-place writes, by position
        self.positions: dict[int, int] = {}  # with shape: id of each node -> its position in the order

    def run(self, retain_graph: bool) -> Any:
        order = self._order()
        self._fill_head_grads()
        captured = shape = None
        if self.variables is None and not self.create_graph and replay.replay_enabled():
            shape = replay.structure(order, self.heads, self.head_grads, self.train_mode)
            if shape is not None:
                program = replay.lookup(shape)
                if program is replay.CAPTURE:  # a graph met again: run its rules and keep what they push
                    self.shape, captured = shape, replay.capture()
                    self.positions = {id(node): k for k, node in enumerate(order)}
                elif program is not None:
                    program.replay(shape, order)
                    self._free(order, retain_graph)
                    return None
        needed = self._find_flows(order)
        if self.variables is None and not self.create_graph:
            self.direct = self._direct_leaves(order, needed)
        before = set_flags(self.create_graph, self.train_mode)
        try:
            if captured is None:
                result = self._gradients(order, needed)
            else:
                with captured:
                    result = self._gradients(order, needed)
                assert shape is not None
                replay.remember(shape, captured, self.checked)
        finally:
            set_flags(*before)
        self._free(order, retain_graph)
        return result

    def _gradients(self, order: list[Node], needed: set[int]) -> Any:
        self._seed()
        for node in reversed(order):
            if id(node) in needed:
                self._through(node)
        return self._finish(order)

    @staticmethod
    def _free(order: list[Node], retain_graph: bool) -> None:
        if not retain_graph:
            for node in order:
                node.free()

    # -- the graph ------------------------------------------------------------------------------
    def _order(self) -> list[Node]:
        """The nodes that lead to the heads, each after the nodes it reads (depth first, no recursion)."""
        order: list[Node] = []
        seen: set[Node] = set()  # by the node itself (it hashes by identity): no id() call per input
        for head in self.heads:
            start = head._ag[0]
            if start.__class__ is Leaf or start in seen:
                continue
            seen.add(start)
            stack = [(start, iter(start.entries))]
            while stack:
                node, pending = stack[-1]
                if node.freed:
                    raise LazyNDError(
                        f"backward: the graph recorded for operator '{node.name}' was freed by an earlier backward; "
                        "pass retain_graph=True to the first backward to differentiate it again"
                    )
                for entry in pending:
                    if entry is not None and entry[0].__class__ is Node and entry[0] not in seen:
                        seen.add(entry[0])
                        stack.append((entry[0], iter(entry[0].entries)))
                        break
                else:
                    stack.pop()
                    order.append(node)
        return order

    def _find_flows(self, order: list[Node]) -> set[int]:
        """Fill ``flows`` (and ``leaves`` for backward()); return the ids of the needed nodes."""
        flows = self.flows
        if self.wanted is not None:  # grad(): its variables, which must be reached
            reached = {(id(e[0]), e[1]) for e in [h._ag for h in self.heads] if e is not None}
            reached.update((id(e[0]), e[1]) for node in order for e in node.entries if e is not None)
            for k, (owner, i) in enumerate(self.wanted):
                if (id(owner), i) not in reached:
                    raise LazyNDError(f"grad: variable {k} is not reached from the heads: no recorded path leads to it")
                flows.add((id(owner), i))
            needed: set[int] = set()
            for node in order:  # inputs first
                for entry in node.entries:
                    if entry is not None and (id(entry[0]), entry[1]) in flows:
                        needed.add(id(node))
                        flows.update((id(node), i) for i in range(len(node.outputs)))
                        break
            return needed
        # backward(): every variable reached that takes a gradient, and the nodes that lead to one
        # (a node's output flows when the node is needed: one pass, inputs first)
        leaves, needed = self.leaves, set()
        for head in self.heads:
            owner = head._ag[0]
            if owner.__class__ is Leaf and owner.grad_req != "null":
                leaves[id(owner)] = owner
        for node in order:
            is_needed = False
            for entry in node.entries:
                if entry is None:
                    continue
                owner = entry[0]
                if owner.__class__ is Leaf:
                    if owner.grad_req != "null":
                        leaves[id(owner)] = owner
                        is_needed = True
                elif id(owner) in needed:
                    is_needed = True
            if is_needed:
                key = id(node)
                needed.add(key)
                flows.update([(key, i) for i in range(len(node.outputs))])
        if not leaves:
            raise LazyNDError(
                "backward: no variable in the recorded graph takes a gradient: mark inputs with attach_grad() "
                "(grad_req 'write' or 'add') before recording"
            )
        flows.update([(key, 0) for key in leaves])
        return needed

    def _direct_leaves(self, order: list[Node], needed: set[int]) -> dict[int, Leaf]:
        """The ``'write'`` variables that receive exactly one gradient term, from a node whose rule is a
        backward operator (:class:`BackwardOpGradient`): that operator writes the gradient into the
        variable's buffer, as an executor does, instead of into a new array copied there at the end.
        Not where the graph or a head gradient reads that buffer: writing it before the end would
        change what a rule reads."""
        terms: dict[int, int] = {id(head._ag[0]): 1 for head in self.heads}  # a head's term: its seed
        candidates: dict[int, Leaf] = {}
        for node in order:
            if id(node) not in needed:
                continue
            by_operator = node.rule.__class__ is BackwardOpGradient
            for x, entry in zip(node.inputs, node.entries, strict=True):
                if entry is not None and entry[0].__class__ is Leaf:
                    leaf, key = entry[0], id(entry[0])
                    terms[key] = terms.get(key, 0) + 1
                    if by_operator and leaf.grad_req == "write" and x.dtype == leaf.grad.dtype:
                        candidates[key] = leaf
        direct = {key: leaf for key, leaf in candidates.items() if terms[key] == 1}
        if direct:
            read = {g.var for g in self.head_grads if g is not None}
            for node in order:
                read.update(node.watched)  # the vars of every array a rule reads
            direct = {key: leaf for key, leaf in direct.items() if leaf.grad.var not in read}
        return direct

    # -- gradients ------------------------------------------------------------------------------
    def _fill_head_grads(self) -> None:
        """The head gradients the pass uses: None for a loss operator's head (its rule takes none),
        the default ones for a head given none."""
        self.loss_heads: set[int] = set()
        for k, head in enumerate(self.heads):
            owner = head._ag[0]
            if owner.__class__ is Node and owner.is_loss:
                self.loss_heads.add(id(owner))
                self.head_grads[k] = None
            elif self.head_grads[k] is None:
                self.head_grads[k] = self._default_head_gradient(head)

    def _seed(self) -> None:
        for head, head_grad in zip(self.heads, self.head_grads, strict=True):
            if head_grad is not None:
                owner, i = head._ag
                self.grads.setdefault((id(owner), i), []).append(head_grad)

    def _default_head_gradient(self, head: Any) -> Any:
        """Ones like ``head`` (MXNet's default head gradient).  For backward() on the host, one
        read-only array per signature, shared by every pass: a rule only reads its head gradients,
        and what backward() makes of them goes into the variables' own buffers.  grad() hands its
        gradients back (a head's may be its ones), so it gets fresh ones, as a GPU does."""
        if self.variables is not None or self.create_graph or head.context.device_type != "cpu":
            return nd.ones(head.shape, ctx=head.context, dtype=head.dtype)
        signature = head.signature
        ones = _shared_ones.get(signature)
        if ones is None:
            ones = nd.ones(head.shape, ctx=head.context, dtype=head.dtype)
            ones.wait_to_read()
            ones.data_array.flags.writeable = False  # a write into it fails loudly, never changes a later pass
            if len(_shared_ones) >= _MAX_SHARED_ONES:  # a program of ever-new head shapes
                _shared_ones.clear()
            _shared_ones[signature] = ones
        return ones

    def _through(self, node: Node) -> None:
        """Call ``node``'s rule on its outputs' gradients; hand the results to its inputs."""
        grads, key = self.grads, id(node)
        terms = [grads.get((key, i)) for i in range(len(node.outputs))]
        is_loss_head = key in self.loss_heads
        if not is_loss_head and not any(terms):
            if not node.is_loss:
                return  # no gradient reaches this node
            # a loss operator below a BlockGrad: its rule reads no head gradient, so it is a
            # source of gradient all the same, as in MXNet
            is_loss_head = True
        rule = node.rule
        if rule is None:
            raise LazyNDError(
                f"backward: operator '{node.name}' has no gradient rule, and a gradient must flow through it "
                "to a variable; compute that part outside record(), or detach() its input"
            )
        node.check_unmodified()
        if self.shape is not None:
            self.checked.append(self.positions[id(node)])
        out_grads: list[Any] = []
        for i, t in enumerate(terms):
            if t:
                out_grads.append(sum_gradients(self.F, t))
            elif i < node.n_visible and not is_loss_head:
                out_grads.append(self._zeros_like(node.outputs[i]))
            else:
                out_grads.append(None)
        entries = node.entries
        if self.create_graph:  # the rule's own operations are recorded: give it the recorded arrays
            inputs = [_with_entry(x, e) for x, e in zip(node.inputs, entries, strict=True)]
            outputs = [_with_entry(o, (node, i)) for i, o in enumerate(node.outputs)]
            result = rule(nd, node.attrs, inputs, outputs, out_grads)
        elif rule.__class__ is BackwardOpGradient:
            result = rule.into(self.F, node.attrs, node.inputs, out_grads, self._destinations(node, rule))
        else:
            result = rule(self.F, node.attrs, node.inputs, node.outputs, out_grads)
        if len(result) != len(entries):
            raise LazyNDError(
                f"backward: the gradient rule of '{node.name}' gave {len(result)} gradients for {len(entries)} inputs"
            )
        flows, direct = self.flows, self.direct
        for entry, g in zip(entries, result, strict=True):
            if g is None or entry is None:
                continue
            owner = id(entry[0])
            if owner in direct:
                self.written.add(owner)  # the gradient is in the variable's buffer already
                continue
            entry_key = (owner, entry[1])
            if entry_key in flows:
                grads.setdefault(entry_key, []).append(g)

    def _destinations(self, node: Node, rule: BackwardOpGradient) -> list:
        """Where ``rule``'s backward operator writes each input's gradient: the variable's own buffer
        (:meth:`_direct_leaves`), a new array, or nowhere (None) for a gradient nobody needs, where
        the operator can skip it."""
        skips, flows, direct = rule.skips_unneeded, self.flows, self.direct
        out: list[Any] = []
        for x, entry in zip(node.inputs, node.entries, strict=True):
            if entry is not None and id(entry[0]) in direct:
                out.append(entry[0].grad)
            elif skips and (entry is None or (id(entry[0]), entry[1]) not in flows):
                out.append(None)
            else:
                out.append(new_array(x.shape, x.dtype, x.context))
        return out

    def _total(self, key: tuple[int, int], like: Any) -> Any:
        terms = self.grads.get(key)
        if terms:
            return sum_gradients(self.F, terms)
        if self.create_graph and like._ag is not None:
            # grad(create_graph=True) of a variable nothing reaches (floor's, round's): zeros recorded
            # from the variable, so that differentiating them again gives zeros, as in MXNet 1.9.1
            return self.F.zeros_like(like)
        return self._zeros_like(like)

    def _zeros_like(self, like: Any) -> Any:
        """Zeros shaped as ``like``, for a gradient nothing sends: made by an operation (``_zeros``)
        of the pass, so a captured pass can replay it (:mod:`.replay`), as it cannot an array
        made without one."""
        return self.F._zeros(shape=like.shape, ctx=like.context, dtype=like.dtype)

    def _finish(self, order: list[Node]) -> Any:
        if self.variables is not None:
            assert self.wanted is not None
            totals = [self._total((id(e[0]), e[1]), v) for e, v in zip(self.wanted, self.variables, strict=True)]
            return self._unshared(totals, order)
        for key, leaf in self.leaves.items():
            if key in self.written:
                continue
            total = self._total((key, 0), leaf.grad)
            if leaf.grad_req == "write":
                copy_into(total, leaf.grad)
            else:  # 'add'
                nd.elemwise_add(leaf.grad, total, out=leaf.grad)
        return None

    def _unshared(self, totals: list, order: list[Node]) -> list:
        """``totals``, each in memory of its own: a gradient a rule passed on unchanged (``x + w``
        hands its head gradient to both inputs, ``reshape`` a view of it) is copied, so that what
        grad() returns shares no memory with a head gradient, an array of the graph or another
        result (MXNet returns new arrays)."""
        taken = {g.var for g in self.head_grads if g is not None}
        for node in order:
            taken.update(x.var for x in node.inputs)
            taken.update(o.var for o in node.outputs)
        results = []
        for total in totals:
            if total.var in taken:
                total = total.copy()
            taken.add(total.var)
            results.append(total)
        return results


def _with_entry(array: Any, entry: Any) -> Any:
    """``array``'s memory, carrying the autograd ``entry`` (for a rule recorded by ``create_graph``)."""
    alias = _plain(array)
    if entry is not None:
        alias._ag = entry
    return alias
