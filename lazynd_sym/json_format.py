"""MXNet's symbol JSON: write the 1.x form, read the 0.8, 0.9 and 1.x forms.

0.8 files keep parameters in ``param`` and attributes in ``attr`` (with plain keys
such as ``ctx_group``) and leave out BatchNorm's auxiliary inputs; 0.9 files merge
them into ``attr``; 1.x files use ``attrs``.  Reading upgrades all of them.
"""

from __future__ import annotations

import json
import os
from typing import Any

from lazynd.errors import FormatError, LazyNDError
from lazynd.fileio import open_for_read, write_atomic
from lazynd.ops import registry

from .attribute import PLAIN_KEYS, is_attribute_key
from .graph import IndexedGraph, Node

MXNET_VERSION = 10901


def to_json(symbol: Any) -> str:
    """The symbol as MXNet 1.x JSON text."""
    graph = IndexedGraph(symbol._outputs)
    nodes = []
    for node in graph.nodes:
        entry: dict[str, Any] = {"op": "null" if node.op is None else node.op.name, "name": node.name}
        attrs = {**node.params, **node.user}
        if attrs:
            entry["attrs"] = attrs
        entry["inputs"] = [[graph.index[id(c)], k, 0] for c, k in node.inputs]
        nodes.append(entry)
    document = {
        "nodes": nodes,
        "arg_nodes": graph.variables(),
        "node_row_ptr": graph.row_ptr,
        "heads": [[graph.index[id(n)], k, 0] for n, k in symbol._outputs],
        "attrs": {"mxnet_version": ["int", MXNET_VERSION]},
    }
    return json.dumps(document, indent=2)


def save(symbol: Any, fname: str | os.PathLike[str]) -> None:
    """Write the symbol's JSON to ``fname`` atomically: a path, or a URL when fsspec is installed."""
    write_atomic(fname, to_json(symbol).encode("utf-8"))


def _upgrade_attr(node_json: dict, name: str, is_variable: bool) -> tuple[dict[str, str], dict[str, str]]:
    """Split a node's stored keys into (operator parameters, ``__xxx__`` attributes)."""
    params: dict[str, str] = dict(node_json.get("param") or {})
    user: dict[str, str] = {}
    merged = {**(node_json.get("attr") or {}), **(node_json.get("attrs") or {})}
    for key, value in merged.items():
        value = str(value)
        if is_attribute_key(key):
            user[key if key.startswith("__") else f"__{key}__"] = value
        elif key.endswith(("_lr_mult", "_wd_mult")) and "param" in node_json:
            # 0.8 put e.g. weight_lr_mult on every node of a layer; it belongs to <layer>_weight
            target, mult = key.rsplit("_", 2)[0], key.rsplit("_", 2)[1]
            if is_variable and name.endswith(f"_{target}"):
                user[f"__{mult}_mult__"] = value
        else:
            params[key] = value
    return params, user


def load_json(text: str) -> Any:
    """A symbol from MXNet JSON text (0.8, 0.9 or 1.x form)."""
    from .symbol import Symbol

    try:
        document = json.loads(text)
        raw_nodes = document["nodes"]
        heads = document["heads"]
    except (ValueError, KeyError, TypeError) as err:
        raise FormatError(f"symbol JSON: not a symbol document ({err})") from err
    nodes: list[Node] = []
    for index, raw in enumerate(raw_nodes):
        try:
            op_name, name = raw["op"], raw["name"]
            inputs = [(nodes[int(e[0])], int(e[1])) for e in raw.get("inputs", [])]
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise FormatError(f"symbol JSON: node {index} is malformed ({err})") from err
        params, user = _upgrade_attr(raw, name, op_name == "null")
        if op_name == "null":
            nodes.append(Node(None, name, params, None, user))
            continue
        if not registry.exists(op_name):
            raise FormatError(f"symbol JSON: node '{name}' uses operator {op_name!r}, which is not registered")
        op = registry.get(op_name)
        try:
            attrs = op.parse(params)
        except LazyNDError as err:
            raise FormatError(f"symbol JSON: node '{name}' ({op_name}): {err}") from err
        if op.variadic and attrs.get("num_args") is None:
            attrs["num_args"] = len(inputs) - len(op.aux)
        expected = op.input_names(attrs) + list(op.aux)
        # files from before auxiliary states were inputs (0.8 BatchNorm) lack them: add variables
        for missing in expected[len(inputs) :]:
            inputs.append((Node(None, f"{name}_{missing}", user=dict(user)), 0))
        if len(inputs) != len(expected):
            raise FormatError(f"symbol JSON: node '{name}' ({op_name}) has {len(inputs)} inputs, expected {expected}")
        nodes.append(Node(op, name, params, attrs, user, inputs))
    try:
        outputs = [(nodes[int(h[0])], int(h[1])) for h in heads]
    except (IndexError, TypeError, ValueError) as err:
        raise FormatError(f"symbol JSON: bad heads {heads!r} ({err})") from err
    return Symbol(outputs)


def load(fname: str | os.PathLike[str]) -> Any:
    """A symbol from a JSON file written by MXNet or by ``Symbol.save``: a path, or a URL when fsspec is installed."""
    try:
        text = open_for_read(fname).decode("utf-8")
    except OSError as err:
        raise FormatError(f"cannot read symbol file {fname!r}: {err}") from err
    except UnicodeDecodeError as err:
        raise FormatError(f"symbol file {fname!r} is not UTF-8 text: {err}") from err
    return load_json(text)


__all__ = ["to_json", "save", "load", "load_json", "PLAIN_KEYS"]
