"""Device placement: give every node a context from its ``ctx_group``, and copy across devices.

``place_device`` follows MXNet's rule.  A node whose ``__ctx_group__`` is named in
``group2ctx`` runs there; variables bound to arrays live where their arrays are.  Any
other operator runs where its first placed data input is (forward sweep), any other
variable lives where its first reader runs (backward sweep), and what is still
unplaced goes to the default context.  Gradient nodes carry the group of the forward
node they differentiate (the gradient pass sets it), so backward runs beside forward.

``insert_copies`` then copies the graph and puts a ``_CrossDeviceCopy`` node on every
edge whose two ends are on different contexts (one copy per value and target device,
shared by its readers), and on every head that must be delivered elsewhere (a
gradient whose array lives on another device).
"""

from __future__ import annotations

from typing import Any

from lazynd.context import Context
from lazynd.errors import ContextError
from lazynd.ops.registry import OpDef

from ..graph import Entry, Node, topo_order


def place_device(
    nodes: list[Node], default_ctx: Context, group2ctx: dict[str, Context], fixed: dict[int, Context]
) -> dict[int, Context]:
    """The context of every node (by ``id``); ``fixed`` holds the variables bound to arrays.

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> with sym.AttrScope(ctx_group="dev1"):
    ...     h = sym.relu(sym.Variable("x"), name="h")
    >>> y = sym.exp(h, name="y")
    >>> nodes = y._nodes()
    >>> placed = place_device(nodes, mx.cpu(0), {"dev1": mx.cpu(1)}, {})
    >>> [str(placed[id(n)]) for n in nodes]
    ['cpu(1)', 'cpu(1)', 'cpu(1)']
    """
    where: dict[int, Context] = dict(fixed)
    for node in nodes:
        if id(node) in where:
            continue
        group = node.user.get("__ctx_group__")
        if group is not None and group in group2ctx:
            where[id(node)] = group2ctx[group]
        elif node.op is not None:
            for child, _ in node.inputs[: node.num_data_inputs()]:
                if id(child) in where:
                    where[id(node)] = where[id(child)]
                    break
    for node in reversed(nodes):
        if id(node) in where:
            for child, _ in node.inputs:
                where.setdefault(id(child), where[id(node)])
    for node in nodes:
        where.setdefault(id(node), default_ctx)
    return where


def _copy_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    import numpy as np

    from lazynd.backend.cuda import copies

    src, dst = inputs[0], outputs[0]
    src_gpu, dst_gpu = not _is_numpy(src), not _is_numpy(dst)
    if not src_gpu and not dst_gpu:
        np.copyto(dst, src, casting="unsafe")
    elif not src_gpu:
        copies.copy_from_host(src, dst)
    elif not dst_gpu:
        copies.copy_to_host_now(src, dst)  # the step is over when it returns
    else:
        copies.copy_between_devices(src, dst)


def _is_numpy(array: Any) -> bool:
    import numpy as np

    return isinstance(array, np.ndarray)


CROSS_DEVICE_COPY = OpDef(
    "_CrossDeviceCopy",
    _copy_forward,
    gradient=lambda F, attrs, inputs, outputs, out_grads: [out_grads[0]],
    doc="Copy a value from one device to another (inserted by device placement).",
)


def insert_copies(
    heads: list[Entry], where: dict[int, Context], head_targets: list[Context | None]
) -> tuple[list[Entry], dict[int, Node], dict[int, Context]]:
    """A copy of the graph with ``_CrossDeviceCopy`` nodes on edges between devices.

    ``head_targets[k]`` is the context head ``k`` must end on (None: where it is
    computed).  Returns the new heads, ``id(old node) -> new node`` (variables map to
    themselves) and the context of every new node.
    """
    new: dict[int, Node] = {}
    placed: dict[int, Context] = {}
    copies: dict[tuple[int, int, Context], Entry] = {}

    def on(entry: Entry, ctx: Context) -> Entry:
        child, k = entry
        source = (new[id(child)], k)
        if where[id(child)] == ctx:
            return source
        key = (id(child), k, ctx)
        if key not in copies:
            node = Node(CROSS_DEVICE_COPY, f"{child.output_name(k)}_copy_to_{ctx.device_type}{ctx.device_id}")
            node.inputs = [source]
            placed[id(node)] = ctx
            copies[key] = (node, 0)
        return copies[key]

    for node in topo_order(heads):
        ctx = where[id(node)]
        if node.op is None:
            new[id(node)] = node
            placed[id(node)] = ctx
            continue
        n_data = node.num_data_inputs()
        inputs = [on(e, ctx) for e in node.inputs[:n_data]]
        for child, _ in node.inputs[n_data:]:
            if where[id(child)] != ctx:
                raise ContextError(
                    f"bind: auxiliary state '{child.name}' of '{node.name}' is on {where[id(child)]}, "
                    f"but '{node.name}' runs on {ctx}; auxiliary states must live where their operator runs"
                )
            inputs.append((new[id(child)], 0))
        copy = Node(node.op, node.name, node.params, node.attrs, node.user, inputs)
        new[id(node)] = copy
        placed[id(copy)] = ctx
    new_heads = []
    for entry, target in zip(heads, head_targets, strict=False):
        new_heads.append(on(entry, target) if target is not None else (new[id(entry[0])], entry[1]))
    return new_heads, new, placed
