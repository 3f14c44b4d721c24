"""Look at a network: a layer table (``print_summary``) and a Graphviz graph (``plot_network``).

Both read the symbol's JSON (the MXNet graph format), so they work for any
symbol that can be saved, including ones loaded from MXNet checkpoints.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from lazynd.errors import ArgumentTypeError, LazyNDError
from lazynd.log import warn_from_user_code

from .graphviz_source import Network, checked_format


def _document(symbol: Any) -> dict[str, Any]:
    """The symbol's JSON document (the graph both views read: ``nodes``, ``node_row_ptr``)."""
    if not callable(getattr(symbol, "tojson", None)):
        raise ArgumentTypeError(f"visualization: symbol must be a Symbol, got {type(symbol).__name__}")
    return json.loads(symbol.tojson())


def _output_shapes(symbol: Any, shape: dict[str, tuple] | None) -> dict[str, tuple]:
    """Shape of every internal output by its name (``fc1_output``, ``fc1_weight``...), if ``shape`` is given."""
    if shape is None or (isinstance(shape, Mapping) and not shape):
        return {}
    if not isinstance(shape, Mapping):
        raise ArgumentTypeError(f"visualization: shape must be a dict of input name -> shape, got {shape!r}")
    internals = symbol.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise LazyNDError(f"visualization: cannot infer the shapes of the network from {shape}")
    return dict(zip(internals.list_outputs(), out_shapes, strict=False))


def _output_types(symbol: Any, dtype: dict[str, Any] | None) -> dict[str, str]:
    """Type name of every internal output by its name (``fc1_output``: ``'float32'``), if ``dtype`` is given."""
    if dtype is None or (isinstance(dtype, Mapping) and not dtype):
        return {}
    if not isinstance(dtype, Mapping):
        raise ArgumentTypeError(f"visualization: dtype must be a dict of input name -> type, got {dtype!r}")
    internals = symbol.get_internals()
    _, out_types, _ = internals.infer_type(**dtype)
    if out_types is None or any(t is None for t in out_types):
        raise LazyNDError(f"visualization: cannot infer the types of the network from {dtype}")
    return {name: np.dtype(t).name for name, t in zip(internals.list_outputs(), out_types, strict=False)}


def _sample_shape(shape: tuple | None) -> str:
    """One sample's shape as MXNet writes it in summaries and edge labels: the batch axis dropped, ``20x24x24``."""
    return "x".join(str(d) for d in (shape or ())[1:])


def _outputs_by_node(symbol: Any, conf: dict[str, Any]) -> list[list[str]]:
    """The internal output names of each graph node, in the JSON's node order (``split_output0``, ...).

    An edge from a layer of several outputs (``SliceChannel``, ``topk(ret_typ='both')``) names the one it
    takes by index; the JSON's ``node_row_ptr`` says where each node's outputs start among the internals.
    """
    rows, names = conf.get("node_row_ptr"), symbol.get_internals().list_outputs()
    if not rows or len(rows) != len(conf["nodes"]) + 1 or rows[-1] != len(names):
        return []
    return [names[start:stop] for start, stop in zip(rows, rows[1:], strict=False)]


def _entry_name(nodes: list[dict[str, Any]], entry: list[int], outputs: list[list[str]]) -> str:
    """The internal output an edge carries: entry ``[node, index]`` of the JSON."""
    node_id, index = entry[0], entry[1]
    if node_id < len(outputs) and index < len(outputs[node_id]):
        return outputs[node_id][index]
    node = nodes[node_id]
    return node["name"] if node["op"] == "null" else f"{node['name']}_output"


def _layer_params(nodes: list[dict[str, Any]], node: dict[str, Any], shapes: dict[str, tuple], inputs: set[str]) -> int:
    total = 0
    for entry in node["inputs"]:
        source = nodes[entry[0]]
        # labels are inputs too, even when the caller gave no shape for them
        is_label = source["name"].endswith("label")
        if source["op"] == "null" and source["name"] not in inputs and not is_label and source["name"] in shapes:
            total += int(np.prod(shapes[source["name"]]))
    return total


def print_summary(
    symbol: Any,
    shape: dict[str, tuple] | None = None,
    line_length: int = 120,
    positions: tuple[float, ...] = (0.44, 0.64, 0.74, 1.0),
    file: Any = None,
) -> int:
    """Print one row per layer (name and type, output shape, parameter count, inputs); return the total parameter count.

    The layout is MXNet 1.9.1's: its columns and widths, each field cut or padded to its column,
    output shapes per sample (the batch axis dropped: ``20x24x24``),
    a layer's first input on its row and each further input on a row of its own, and the
    graph's first node (the data, as MXNet shows it) with the variables named in ``shape``.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=10, name="fc")
    >>> print_summary(net, {"data": (1, 784)})  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    ____...
    Layer (type)                ...
    Total params: 7850
    ...
    7850
    """
    nodes = _document(symbol)["nodes"]
    shapes = _output_shapes(symbol, shape)
    shown = set(shape or {}) | ({nodes[0]["name"]} if nodes and nodes[0]["op"] == "null" else set())
    auxiliary = set(symbol.list_auxiliary_states())
    columns = [int(line_length * p) if positions[-1] <= 1 else int(p) for p in positions]
    lines: list[str] = []

    def row(fields: list[str]) -> None:
        text = ""
        for field, stop in zip(fields, columns, strict=False):
            text = (text + field)[:stop].ljust(stop)
        lines.append(text)

    lines.append("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    lines.append("=" * line_length)
    total = 0
    rows = [node for node in nodes if node["op"] != "null" or node["name"] in shown]
    for position, node in enumerate(rows):
        if node["op"] == "null":
            row([f"{node['name']}(null)", _sample_shape(shapes.get(node["name"])), "0", ""])
        else:
            # auxiliary states (BatchNorm's moving mean and variance) are not parameters, as in MXNet
            params = _layer_params(nodes, node, shapes, set(shape or {}) | auxiliary)
            total += params
            previous = [
                nodes[e[0]]["name"]
                for e in node["inputs"]
                if nodes[e[0]]["op"] != "null" or nodes[e[0]]["name"] in shown
            ]
            out_shape = _sample_shape(shapes.get(f"{node['name']}_output"))
            row([f"{node['name']}({node['op']})", out_shape, str(params), previous[0] if previous else ""])
            for name in previous[1:]:
                row(["", "", "", name])
        lines.append(("=" if position == len(rows) - 1 else "_") * line_length)
    lines.append(f"Total params: {total}")
    lines.append("_" * line_length)
    print("\n".join(lines), file=file)
    return total


# MXNet's palette, by the kind of layer; any other operator takes the last colour
_INPUT, _WEIGHTED, _ACTIVATION, _NORM, _POOL, _SHAPE, _SOFTMAX, _OTHER = (
    "#8dd3c7",
    "#fb8072",
    "#ffffb3",
    "#bebada",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
)
_FILL = {
    "null": _INPUT,
    "Convolution": _WEIGHTED,
    "FullyConnected": _WEIGHTED,
    "Activation": _ACTIVATION,
    "LeakyReLU": _ACTIVATION,
    "BatchNorm": _NORM,
    "Pooling": _POOL,
    "Concat": _SHAPE,
    "Flatten": _SHAPE,
    "Reshape": _SHAPE,
    "Softmax": _SOFTMAX,
}
# inputs that hide_weights hides: learned parameters and auxiliary states, named as MXNet names them
_WEIGHT_SUFFIXES = (
    "_weight",
    "_bias",
    "_beta",
    "_gamma",
    "_moving_var",
    "_moving_mean",
    "_running_var",
    "_running_mean",
)


def _dims(attrs: dict[str, Any], key: str, missing: str) -> str:
    """A tuple attribute as MXNet's graph labels write it, ``3x3``; ``missing`` when it is not set."""
    if key not in attrs:
        return missing
    return "x".join(part.strip() for part in str(attrs[key]).strip("()[]").split(",") if part.strip())


def _label(node: dict[str, Any]) -> str:
    """A node's label as MXNet 1.9.1 draws it: the layer's settings for the common layers, else its name."""
    attrs = node.get("attrs", node.get("param", {})) or {}
    op = node["op"]
    if op == "Convolution":
        kernel, stride = _dims(attrs, "kernel", ""), _dims(attrs, "stride", "1")
        return f"Convolution\\n{kernel}/{stride}, {attrs.get('num_filter', '')}"
    if op == "FullyConnected":
        return f"FullyConnected\\n{attrs.get('num_hidden', '')}"
    if op == "Activation":
        return f"Activation\\n{attrs.get('act_type', '')}"
    if op == "LeakyReLU":
        return f"LeakyReLU\\n{attrs.get('act_type', 'Leaky')}"
    if op == "Pooling":
        kernel, stride = _dims(attrs, "kernel", "[]"), _dims(attrs, "stride", "1")
        # a pool_type left at its default is not in the JSON (MXNet's plot then fails on it)
        return f"Pooling\\n{attrs.get('pool_type', 'max')}, {kernel}/{stride}"
    if op == "Custom":
        return str(attrs.get("op_type", node["name"]))
    return node["name"]


def _warn_repeated_names(nodes: list[dict[str, Any]]) -> None:
    """Nodes are drawn by name, so two layers of one name merge into one box and the drawing may show a
    cycle the network does not have: say so, as MXNet does (a RuntimeWarning naming the repeated names)."""
    counts = Counter(node["name"] for node in nodes)
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if repeated:
        warn_from_user_code(
            "There are multiple variables with the same name in your graph, this may result in cyclic graph. "
            "Repeated names: " + ",".join(repeated),
            RuntimeWarning,
        )


def plot_network(
    symbol: Any,
    title: str = "plot",
    save_format: str = "pdf",
    shape: dict[str, tuple] | None = None,
    dtype: dict[str, Any] | None = None,
    node_attrs: dict[str, str] | None = None,
    hide_weights: bool = True,
) -> Network:
    """The network as a Graphviz digraph: one box per layer, edges labelled with shapes when ``shape`` is given
    and with types, ``(float32)``, when ``dtype`` (input name to type) is; the parameters are MXNet 1.9.1's, in
    its order.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> net = sym.Activation(sym.FullyConnected(sym.Variable("data"), num_hidden=10, name="fc"), act_type="relu", name="relu")
    >>> print(plot_network(net, shape={"data": (1, 5)}).source)  # doctest: +ELLIPSIS
    digraph "plot" {
    ...
      "fc" -> "data" [label="5"...];
    ...
    """
    conf = _document(symbol)
    nodes = conf["nodes"]
    save_format = checked_format(save_format)
    _warn_repeated_names(nodes)
    shapes = _output_shapes(symbol, shape)
    types = _output_types(symbol, dtype)
    outputs = _outputs_by_node(symbol, conf) if shapes or types else []
    style = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
    style.update(node_attrs or {})

    def hidden(node: dict[str, Any]) -> bool:
        return hide_weights and node["op"] == "null" and node["name"].endswith(_WEIGHT_SUFFIXES)

    # no rankdir: each edge runs from a layer back to its input (dir=back), so Graphviz's default
    # top-to-bottom ranking puts the inputs at the bottom and the outputs on top, as MXNet draws it
    lines = [f'digraph "{title}" {{']
    for node in nodes:
        if hidden(node):
            continue
        attrs = {**style, "label": _label(node), "fillcolor": _FILL.get(node["op"], _OTHER)}
        if node["op"] == "null":
            attrs["shape"] = "oval"
        text = ", ".join(f'{k}="{v}"' for k, v in attrs.items())
        lines.append(f'  "{node["name"]}" [{text}];')
    for node in nodes:
        if node["op"] == "null":
            continue
        for entry in node["inputs"]:
            source = nodes[entry[0]]
            if hidden(source):
                continue
            edge = {"dir": "back", "arrowtail": "open"}
            if shapes:
                edge_shape = shapes.get(_entry_name(nodes, entry, outputs))
                if edge_shape is not None:
                    edge["label"] = _sample_shape(edge_shape)  # empty for a 1-d input, as MXNet leaves it
            if types:
                edge_type = types.get(_entry_name(nodes, entry, outputs))
                if edge_type is not None:
                    edge["label"] = f"{edge.get('label', '')}({edge_type})"
            text = ", ".join(f'{k}="{v}"' for k, v in sorted(edge.items(), key=lambda kv: kv[0] != "label"))
            lines.append(f'  "{node["name"]}" -> "{source["name"]}" [{text}];')
    lines.append("}")
    return Network("\n".join(lines) + "\n", title, save_format)
