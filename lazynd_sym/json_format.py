"""MXNet's symbol JSON: write the 1.x form, read the 0.8, 0.9 and 1.x forms.

0.8 files keep parameters in ``param`` and attributes in ``attr`` (with plain keys
such as ``ctx_group``) and leave out BatchNorm's auxiliary inputs; 0.9 files merge
them into ``attr``; 1.x files use ``attrs``.  Reading upgrades all of them.
"""

from __future__ import annotations

import json
import os
from typing import Any

from lazynd.errors import ArgumentTypeError, FormatError, LazyNDError, MissingFileError
from lazynd.formats.fileio import open_for_read, write_atomic
from lazynd.ops import registry

from .attribute import PLAIN_KEYS, dtype_from_attr, is_attribute_key, parse_shape_hint
from .control_flow_json import CONTROL_FLOW_OPS, read_control_flow
from .graph import Entry, IndexedGraph, Node, refuse_operator_aux, without_amp_casts

MXNET_VERSION = 10901


# Operators whose name in MXNet 1.9.1's registry is one of our aliases: MXNet writes that name.
MXNET_OP_NAMES = {
    "_plus": "elemwise_add",
    "_minus": "elemwise_sub",
    "_mul": "elemwise_mul",
    "_div": "elemwise_div",
    "ElementWiseSum": "add_n",
    "identity": "_copy",
    "flip": "reverse",
    "_crop_assign": "_slice_assign",
    "_crop_assign_scalar": "_slice_assign_scalar",
    "onehot_encode": "_onehot_encode",
    "ravel_multi_index": "_ravel_multi_index",
    "unravel_index": "_unravel_index",
    **{
        f"random_pdf_{d}": f"_random_pdf_{d}"
        for d in (
            "dirichlet",
            "exponential",
            "gamma",
            "generalized_negative_binomial",
            "negative_binomial",
            "normal",
            "poisson",
            "uniform",
        )
    },
}


def to_json(symbol: Any, remove_amp_cast: bool = True) -> str:
    """The symbol as MXNet 1.x JSON text, laid out as MXNet writes it; with ``remove_amp_cast``, as
    MXNet's, without the ``amp_cast``/``amp_multicast`` nodes that feed other nodes (see
    :func:`~lazynd_sym.graph.without_amp_casts`)."""
    heads = without_amp_casts(symbol._outputs) if remove_amp_cast else symbol._outputs
    document = graph_document(heads)
    document["attrs"] = {"mxnet_version": ["int", MXNET_VERSION]}
    return _layout(document, 0)


def graph_document(heads: list[Entry]) -> dict[str, Any]:
    """The JSON object of the graph of ``heads`` (without the version): a symbol's, or a loop body's
    among a control-flow node's ``subgraphs``."""
    from .control_flow_json import write_control_flow

    graph = IndexedGraph(heads)
    nodes = []
    # MXNet numbers each write of a variable an operator mutates (an auxiliary state): an input
    # entry carries the variable's version when its operator was composed.
    versions: dict[int, int] = {}
    for node in graph.nodes:
        op_name = "null" if node.op is None else MXNET_OP_NAMES.get(node.op.name, node.op.name)
        entry: dict[str, Any] = {"op": op_name, "name": node.name}
        written = write_control_flow(node)
        attrs = {**node.params, **node.user, **(written[0] if written else {})}
        if attrs:
            entry["attrs"] = dict(sorted(attrs.items()))
        first_aux = node.num_data_inputs()
        inputs = []
        for position, (child, k) in enumerate(node.inputs):
            if child.op is not None:
                inputs.append([graph.index[id(child)], k, 0])
                continue
            if position >= first_aux:
                versions[id(child)] = versions.get(id(child), 0) + 1
            inputs.append([graph.index[id(child)], k, versions.get(id(child), 0)])
        entry["inputs"] = inputs
        if written:
            entry["subgraphs"] = written[1]
        nodes.append(entry)
    return {
        "nodes": nodes,
        "arg_nodes": graph.variables(),
        "node_row_ptr": graph.row_ptr,
        "heads": [[graph.index[id(n)], k, 0] for n, k in heads],
    }


# MXNet's JSON writer escapes only these characters and writes the rest as they are.
_ESCAPES = {"\r": "\\r", "\n": "\\n", "\\": "\\\\", "\t": "\\t", '"': '\\"'}


def _layout(value: Any, depth: int) -> str:
    """``value`` as MXNet 1.x lays its JSON out, so files diff cleanly against MXNet's.

    A dictionary of more than one key, and a list of more than ten items or of
    dictionaries, take one item per line, items ending in ``", "``; anything
    smaller stays on one line.
    """
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'
    if isinstance(value, dict):
        items = [f"{_layout(k, depth)}: {_layout(v, depth + 1)}" for k, v in value.items()]
        return _bracket("{", items, "}", len(items) > 1, depth)
    if isinstance(value, list):
        items = [_layout(v, depth + 1) for v in value]
        return _bracket("[", items, "]", len(items) > 10 or any(isinstance(v, dict) for v in value), depth)
    return json.dumps(value)


def _bracket(open_: str, items: list[str], close: str, multi_line: bool, depth: int) -> str:
    if not multi_line or not items:
        return open_ + ", ".join(items) + close
    inner = "\n" + "  " * (depth + 1)
    return open_ + inner + f", {inner}".join(items) + "\n" + "  " * depth + close


def save(symbol: Any, fname: str | os.PathLike[str], remove_amp_cast: bool = True) -> None:
    """Write the symbol's JSON (:func:`to_json`) to ``fname`` atomically: a path, or a URL when fsspec is
    installed."""
    write_atomic(fname, to_json(symbol, remove_amp_cast).encode("utf-8"))


def _upgrade_attr(node_json: dict, name: str, is_variable: bool) -> tuple[dict[str, str], dict[str, str]]:
    """Split a node's stored keys into (operator parameters, ``__xxx__`` attributes).

    The dictionaries have been checked by :func:`_string_dict` already.
    """
    params: dict[str, str] = {}
    user: dict[str, str] = {}
    # MXNet reads the three into one dictionary (a later one wins a clash) and only then tells
    # attributes from parameters: a __ctx_group__ or lr_mult kept in 'param' is an attribute too
    merged = {**(node_json.get("param") or {}), **(node_json.get("attr") or {}), **(node_json.get("attrs") or {})}
    for key, value in merged.items():
        if is_attribute_key(key):
            user[key if key.startswith("__") else f"__{key}__"] = value
        elif key.endswith(("_lr_mult", "_wd_mult")) and "attrs" not in node_json:
            # 0.8 put e.g. weight_lr_mult on every node of a layer (in 'attr', beside 'param' or, in
            # files that merged the two, among the parameters); it belongs to <layer>_weight
            target, mult = key.rsplit("_", 2)[0], key.rsplit("_", 2)[1]
            if is_variable and name.endswith(f"_{target}"):
                user[f"__{mult}_mult__"] = value
        else:
            params[key] = value
    return params, user


# SliceChannel and friends take their output count from a parameter; a file claiming a
# billion outputs would make the loader build a billion output names.
MAX_NODE_OUTPUTS = 1 << 16


class _Reader:
    """Builds the nodes of one symbol document, checking each value before it is used.

    Every problem raises a :class:`FormatError` naming ``source`` (the file, or
    ``string``) and the node.  Inputs must refer to earlier nodes, which rules out
    cycles and lets the graph be built in one pass without recursion.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes: list[Node] = []

    def error(self, message: str, index: int | None = None, name: str | None = None) -> FormatError:
        where = f"symbol JSON {self.source}"
        if index is not None:
            where += f", node {index}" + (f" ({name!r})" if name is not None else "")
        return FormatError(f"{where}: {message}")

    def entry(self, raw: Any, limit: int, what: str, index: int | None = None, name: str | None = None) -> Entry:
        """An ``[node, output(, version)]`` triple, referring to one of the first ``limit`` nodes."""
        if (
            not isinstance(raw, list)
            or len(raw) not in (2, 3)
            or not all(type(v) is int for v in raw)  # JSON integers only: no bools, floats or strings
        ):
            raise self.error(
                f"{what} is {raw!r}; expected [node, output] or [node, output, version] integers", index, name
            )
        source_index, output = raw[0], raw[1]
        if not 0 <= source_index < limit:
            if index is None:
                expected = f"expected 0 to {limit - 1} (the file has {limit} nodes)"
            elif limit == 0:
                expected = "the first node has no earlier node to read (inputs must refer to earlier nodes)"
            else:
                expected = f"expected 0 to {limit - 1} (inputs must refer to earlier nodes)"
            raise self.error(f"{what} refers to node {source_index}; {expected}", index, name)
        producer = self.nodes[source_index]
        count = producer.num_outputs()
        if not 0 <= output < count:
            raise self.error(
                f"{what} asks for output {output} of node {source_index} ({producer.name!r}), which has "
                f"{count} output{'s' if count != 1 else ''}",
                index,
                name,
            )
        return producer, output

    def string_dict(self, raw: dict, key: str, index: int, name: str) -> None:
        """Check that ``raw[key]`` is absent or a dict of strings; store numbers as strings."""
        value = raw.get(key)
        if value is None:
            return
        if not isinstance(value, dict):
            raise self.error(f"'{key}' is {type(value).__name__}; expected an object of strings", index, name)
        for k, v in value.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                value[k] = str(v)
            elif not isinstance(v, str):
                raise self.error(f"'{key}' value of {k!r} is {v!r}; expected a string", index, name)

    def check_hints(self, user: dict[str, str], index: int, name: str) -> None:
        """A variable's ``__shape__`` and ``__dtype__`` must parse, or shape inference would fail later."""
        try:
            if "__shape__" in user:
                parse_shape_hint(user["__shape__"], "__shape__")
            if "__dtype__" in user:
                dtype_from_attr(user["__dtype__"], "__dtype__")
        except LazyNDError as err:
            raise self.error(str(err), index, name) from None

    def node(self, index: int, raw: Any) -> Node:
        if not isinstance(raw, dict):
            raise self.error(f"is {type(raw).__name__}; expected an object", index)
        op_name, name = raw.get("op"), raw.get("name")
        if not isinstance(op_name, str) or not isinstance(name, str) or not name:
            raise self.error(f"needs string 'op' and non-empty 'name', found op {op_name!r}, name {name!r}", index)
        raw_inputs = raw.get("inputs", [])
        if not isinstance(raw_inputs, list):
            raise self.error(f"'inputs' is {raw_inputs!r}; expected a list", index, name)
        if op_name == "null" and raw_inputs:
            # before the entries are resolved: their range error would hide what is wrong
            raise self.error(
                f"is a variable (op 'null') but has {len(raw_inputs)} input(s); expected none", index, name
            )
        for key in ("param", "attr", "attrs"):
            self.string_dict(raw, key, index, name)
        inputs = [self.entry(e, index, f"input {i}", index, name) for i, e in enumerate(raw_inputs)]
        params, user = _upgrade_attr(raw, name, op_name == "null")
        if op_name == "null":
            self.check_hints(user, index, name)
            return Node(None, name, params, None, user)
        if op_name in CONTROL_FLOW_OPS:
            try:
                return read_control_flow(op_name, name, params, raw.get("subgraphs"), inputs, self.subgraph)
            except LazyNDError as err:
                raise self.error(f"({op_name}) {err}", index, name) from None
        if not registry.exists(op_name):
            raise self.error(f"uses operator {op_name!r}, which is not registered", index, name)
        op = registry.get(op_name)
        try:
            attrs = op.parse(params)
            op = op.specialize(attrs)
        except LazyNDError as err:
            raise self.error(f"({op_name}) {err}", index, name) from None
        for count_key in ("num_args", "num_outputs"):
            count = attrs.get(count_key)
            if isinstance(count, int) and not 0 <= count <= MAX_NODE_OUTPUTS:
                raise self.error(f"({op_name}) {count_key} is {count}; expected 0 to {MAX_NODE_OUTPUTS}", index, name)
        if op.variadic:
            if attrs.get("num_args") is None:
                attrs["num_args"] = len(inputs) - len(op.aux)
            elif len(op.input_names(attrs)) + len(op.aux) != len(inputs):  # bilinear UpSampling: data, weight
                raise self.error(
                    f"({op_name}) num_args is {attrs['num_args']} but the node has {len(inputs)} inputs", index, name
                )
        expected = op.input_names(attrs) + list(op.aux)
        # files from before auxiliary states were inputs (0.8 BatchNorm) lack them: add variables,
        # marked as composition marks them (their initialisers), as MXNet's upgrade of such files does
        variable_attrs = op.attrs_of_input_variables(attrs)
        for missing in expected[len(inputs) :]:
            inputs.append((Node(None, f"{name}_{missing}", user={**variable_attrs.get(missing, {}), **user}), 0))
        if len(inputs) != len(expected):
            raise self.error(f"({op_name}) has {len(inputs)} inputs, expected {expected}", index, name)
        if op.num_outputs(attrs) > MAX_NODE_OUTPUTS:
            raise self.error(f"({op_name}) has more than {MAX_NODE_OUTPUTS} outputs", index, name)
        node = Node(op, name, params, attrs, user, inputs)
        try:
            refuse_operator_aux(node)
        except LazyNDError as err:
            raise self.error(str(err), index, name) from None
        return node

    def subgraph(self, document: Any) -> Any:
        """The symbol of a loop body, read (with its own variable names) from a node's ``subgraphs``."""
        return _Reader(self.source).build(document)

    def document(self, text: str | bytes) -> Any:
        if not isinstance(text, (str, bytes, bytearray)):
            raise ArgumentTypeError(f"load_json: the JSON text must be a str or bytes, got {type(text).__name__}")
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
            raise self.error(f"not valid JSON ({type(err).__name__}: {err})") from None
        return self.build(document)

    def build(self, document: Any) -> Any:
        from .symbol import Symbol

        if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
            raise self.error("not a symbol document: expected an object with a 'nodes' list")
        raw_nodes, heads = document["nodes"], document.get("heads")
        if not isinstance(heads, list) or not heads:
            raise self.error(f"'heads' is {heads!r}; expected a non-empty list of [node, output] entries")
        for index, raw in enumerate(raw_nodes):
            self.nodes.append(self.node(index, raw))
        arg_nodes = document.get("arg_nodes")
        if arg_nodes is not None:
            if not isinstance(arg_nodes, list):
                raise self.error(f"'arg_nodes' is {type(arg_nodes).__name__}; expected a list of node indices")
            for value in arg_nodes:
                if type(value) is not int or not 0 <= value < len(raw_nodes) or self.nodes[value].op is not None:
                    raise self.error(f"'arg_nodes' lists {value!r}, which is not the index of a variable node")
        outputs = [self.entry(h, len(raw_nodes), f"head {i}") for i, h in enumerate(heads)]
        return Symbol(outputs)


def load_json(json_str: str | bytes, source: str = "string") -> Any:
    """A symbol from MXNet JSON text ``json_str`` (0.8, 0.9 or 1.x form; MXNet's parameter name).

    The graph is checked before it is built: node and output indices in range,
    inputs referring to earlier nodes (no cycles), integer entries, non-empty
    ``heads``, known operators and valid parameters.  Two variables may share a name, as in
    MXNet (and in a symbol composed so, whose JSON this reads back); binding such a symbol
    refuses the name.

    Raises
    ------
    FormatError
        Naming ``source`` and the node, for anything that is not a valid graph.

    Examples
    --------
    >>> s = load_json('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[0, 0]]}')
    >>> s.list_arguments()
    ['x']
    """
    return _Reader(source).document(json_str)


def load(fname: str | os.PathLike[str]) -> Any:
    """A symbol from a JSON file written by MXNet or by ``Symbol.save`` a path, or a URL when fsspec is installed (checked as :func:`load_json` does)."""
    try:
        raw = open_for_read(fname)
    except MissingFileError:  # a FileNotFoundError, as nd.load's and the parameter file's of a checkpoint
        raise
    except OSError as err:
        raise FormatError(f"cannot read symbol file {fname!r}: {err}") from err
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FormatError(f"symbol JSON {fname}: not UTF-8 text ({err})") from None
    return load_json(text, source=str(fname))


__all__ = ["to_json", "save", "load", "load_json", "PLAIN_KEYS"]
