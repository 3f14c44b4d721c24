"""``Symbol``: a handle on outputs of a graph of registered operators.

Symbols are composed by calling operator functions (``lazynd_sym.FullyConnected``),
with arithmetic, or by calling a symbol to replace its free variables.  Shape and
type inference (:mod:`lazynd_sym.inference`), JSON, and binding to executors are
reached from here; variables, groups, operator nodes and composed copies are made in
:mod:`lazynd_sym.creation`.
"""

from __future__ import annotations

import numbers
from typing import Any

from lazynd.arguments import flag
from lazynd.base import NotImplementedForSymbol
from lazynd.errors import ArgumentTypeError, LazyNDError

from .attribute import listed_attrs, normalize_attrs
from .graph import Entry, Node, aux_variables, child_entries, copied_graph, debug_text, selected_outputs, topo_order


class Symbol:
    """Outputs of a symbolic graph.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> a, b = sym.Variable("A"), sym.Variable("B")
    >>> with sym.NameManager():  # automatic names counted from zero
    ...     d = (a + b) / 10 + 1
    >>> d.list_arguments(), d.list_outputs()
    (['A', 'B'], ['_plusscalar0_output'])
    """

    __slots__ = ("_outputs", "__weakref__")
    __hash__ = object.__hash__
    # NumPy scalars and arrays hand their arithmetic with a symbol to the symbol's reflected
    # methods (np.float32(2) * x), instead of reading the symbol as a sequence of outputs
    __array_ufunc__ = None

    def __init__(self, outputs: list[Entry]) -> None:
        self._outputs = list(outputs)

    # -- structure -----------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """The name of the node of the outputs (``split0`` for all of a split's), None when they come from
        several nodes (a group), as MXNet's."""
        first = self._outputs[0][0]
        return first.name if all(node is first for node, _ in self._outputs) else None

    def _nodes(self) -> list[Node]:
        return topo_order(self._outputs)

    def list_arguments(self) -> list[str]:
        nodes = self._nodes()
        aux = aux_variables(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        nodes = self._nodes()
        aux = aux_variables(nodes)
        return [n.name for n in nodes if n.op is None and id(n) in aux]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._nodes() if n.op is None]

    def list_outputs(self) -> list[str]:
        return [node.output_name(i) for node, i in self._outputs]

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Any:
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index: int | str | slice) -> Symbol:
        """The output ``index`` (a position, negative from the end, or a name), or the group a slice
        selects, as MXNet 1.x (with its errors: ``IndexError``, ``ValueError``, ``TypeError``)."""
        # names only for a name: listing them costs a node's whole output count, and the gradient of
        # a loop's ``stack`` takes each of its thousand outputs by position
        names = self.list_outputs() if isinstance(index, str) else []
        return Symbol(selected_outputs(self._outputs, names, index))

    def get_internals(self) -> Symbol:
        """A group of every visible output of every node, in topological order.

        As in MXNet, an operator's hidden outputs (BatchNorm's mean and variance unless
        ``output_mean_var``) are not listed, so positions match MXNet's.
        """
        entries = [(n, i) for n in self._nodes() for i in range(n.num_visible_outputs())]
        return Symbol(entries)

    def get_children(self) -> Symbol | None:
        """The inputs of this symbol's nodes (each node once, as MXNet's: a group or a multi-output
        symbol answers too), or None when there are none."""
        children = child_entries(self._outputs)
        return Symbol(children) if children else None

    def _single_node(self, what: str) -> Node:
        if len(self._outputs) != 1:
            raise LazyNDError(f"{what} needs a symbol with one output, this one has {len(self._outputs)}")
        return self._outputs[0][0]

    # -- attributes ----------------------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """The attribute ``key`` (``ctx_group`` or ``__ctx_group__``) of this symbol's node, or, as
        in MXNet, its operator parameter ``key`` (``num_hidden``) as text, or its ``name`` or ``op_name``
        (``null`` for a variable); None for a group, as MXNet's."""
        if not isinstance(key, str):
            raise ArgumentTypeError(f"Symbol.attr: key must be an attribute name (a str), got {key!r}")
        if self.name is None:
            return None
        node = self._outputs[0][0]
        given = {"name": node.name, "op_name": "null" if node.op is None else node.op.name}  # MXNet's own keys
        return node.user.get(key, node.user.get(f"__{key}__", node.params.get(key, given.get(key))))

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes of this symbol's node (``lr_mult`` also as stored, ``__lr_mult__``, as MXNet's)
        and, as MXNet lists them, its operator's parameters."""
        if not flag("Symbol.list_attr", "recursive", recursive):
            node = self._outputs[0][0]  # a group's first output's, as MXNet's
            return {**node.params, **listed_attrs(node.user)}
        return {f"{n.name}${k}": v for n in self._nodes() for k, v in n.user.items()}

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """``{node name: {key: value}}`` for every node with attributes or parameters (``lr_mult``
        also as stored, ``__lr_mult__``, as MXNet's)."""
        out: dict[str, dict[str, str]] = {}
        for n in self._nodes():
            merged = {**n.params, **listed_attrs(n.user)}
            if merged:
                out[n.name] = merged
        return out

    def _set_attr(self, **kwargs: Any) -> None:
        self._single_node("_set_attr").user.update(normalize_attrs(kwargs))

    # -- composition (see creation.compose) ---------------------------------------------------------------------
    def __call__(self, *args: Symbol, **kwargs: Any) -> Symbol:
        """A copy of this graph with free variables replaced (positionally or by name).

        With ``name``, the head operator of the copy is renamed ``name`` (its output becomes
        ``<name>_output``), as MXNet does; the variables and the other operators keep their
        names.  Replaced arguments are looked up by their names.

        Examples
        --------
        >>> import lazynd_sym as sym
        >>> net = sym.FullyConnected(sym.Variable("data"), name="fc1", num_hidden=4)
        >>> net2 = sym.FullyConnected(sym.Variable("data2"), name="net2", num_hidden=4)
        >>> composed = net(data=net2, name="compose")
        >>> composed.list_arguments(), composed.list_outputs()
        (['data2', 'net2_weight', 'net2_bias', 'fc1_weight', 'fc1_bias'], ['compose_output'])
        """
        return creation.compose(self, args, kwargs)

    def _compose(self, *args: Symbol, **kwargs: Any) -> None:
        """``__call__`` in place: this symbol becomes the composed graph (MXNet's ``_compose``)."""
        self._outputs = creation.compose(self, args, kwargs)._outputs

    def __copy__(self) -> Symbol:
        return Symbol(copied_graph(self._outputs))

    def __deepcopy__(self, memo: dict) -> Symbol:
        return self.__copy__()

    def __getstate__(self) -> dict:
        return {"json": self.tojson()}

    def __setstate__(self, state: dict) -> None:
        from .json_format import load_json

        self._outputs = load_json(state["json"])._outputs

    # -- arithmetic ----------------------------------------------------------------------------
    def _binary(self, other: Any, op: str, scalar_op: str, scalar_hint: str | None = None) -> Symbol:
        if isinstance(other, Symbol):
            return creation.invoke(op, [self, other], {})
        if isinstance(other, numbers.Number):
            return creation.invoke(scalar_op, [self], {"scalar": other}, scalar_hint)
        raise ArgumentTypeError(
            f"symbol arithmetic: unsupported operand type {type(other).__name__}; expected a Symbol or a number"
        )

    def __add__(self, o: Any) -> Symbol:
        return self._binary(o, "_plus", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, o: Any) -> Symbol:
        return self._binary(o, "_minus", "_minus_scalar")

    def __rsub__(self, o: Any) -> Symbol:
        return self._binary(o, "_minus", "_rminus_scalar")

    def __mul__(self, o: Any) -> Symbol:
        return self._binary(o, "_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> Symbol:
        return self._binary(o, "_div", "_div_scalar")

    def __rtruediv__(self, o: Any) -> Symbol:
        return self._binary(o, "_div", "_rdiv_scalar")

    # MXNet's Python 2 names, which its programs call (x.__div__(2)) and it still defines
    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, o: Any) -> Symbol:
        return self._binary(o, "_mod", "_mod_scalar")

    def __rmod__(self, o: Any) -> Symbol:
        return self._binary(o, "_mod", "_rmod_scalar")

    def __pow__(self, o: Any) -> Symbol:
        return self._binary(o, "_power", "_power_scalar")

    def __rpow__(self, o: Any) -> Symbol:
        # MXNet's __rpow__ calls _internal._rpower_scalar, and its node is named so (not _rpowerscalar)
        return self._binary(o, "_power", "_rpower_scalar", "_rpower_scalar")

    def __neg__(self) -> Symbol:
        return creation.invoke("_mul_scalar", [self], {"scalar": -1.0})

    def __eq__(self, o: Any) -> Symbol:  # type: ignore[override]
        return self._binary(o, "_equal", "_equal_scalar")

    def __ne__(self, o: Any) -> Symbol:  # type: ignore[override]
        return self._binary(o, "_not_equal", "_not_equal_scalar")

    def __gt__(self, o: Any) -> Symbol:
        return self._binary(o, "_greater", "_greater_scalar")

    def __ge__(self, o: Any) -> Symbol:
        return self._binary(o, "_greater_equal", "_greater_equal_scalar")

    def __lt__(self, o: Any) -> Symbol:
        return self._binary(o, "_lesser", "_lesser_scalar")

    def __le__(self, o: Any) -> Symbol:
        return self._binary(o, "_lesser_equal", "_lesser_equal_scalar")

    def __abs__(self) -> Symbol:
        return creation.invoke("abs", [self], {})

    def __bool__(self) -> bool:
        # MXNet's error class, which programs catch
        raise NotImplementedForSymbol("a symbol has no truth value (comparisons build new symbols)")

    # -- operator methods: x.reshape((0, -1)), x.sum(axis=1), x.astype('float16') --------------
    def astype(self, dtype: Any, **kwargs: Any) -> Symbol:
        """This symbol cast to ``dtype`` (the ``Cast`` operator)."""
        return creation.invoke("Cast", [self], {"dtype": dtype, **kwargs})

    def split_v2(self, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Symbol:
        """Pieces along ``axis``: equal sections or at indices (see ``mx.sym.split_v2``)."""
        from .functions import split_v2

        return split_v2(self, indices_or_sections, axis, squeeze_axis)

    def __dir__(self) -> list[str]:  # with the operator methods __getattr__ gives (sum, reshape...)
        return sorted(set(super().__dir__()) | methods.operator_method_names())

    def __getattr__(self, name: str) -> Any:
        op = None if name.startswith("_") else methods.method_operator(name)
        if op is None:
            raise AttributeError(f"'Symbol' object has no attribute {name!r}")
        return lambda *args, **kwargs: methods.apply_method(op, name, self, args, kwargs)

    # -- inference (see inference.py) ----------------------------------------------------------
    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple[list | None, list | None, list | None]:
        """``(arg_shapes, out_shapes, aux_shapes)``, or ``(None, None, None)`` when incomplete.

        Examples
        --------
        >>> import lazynd_sym as sym
        >>> c = sym.Variable("A") + sym.Variable("B")
        >>> c.infer_shape(A=(10,))
        ([(10,), (10,)], [(10,)], [])
        """
        return inference.infer_shape(self._outputs, args, kwargs, partial=False)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
        """As :meth:`infer_shape`, with unknown dimensions as 0 and unknown shapes as ``()`` (MXNet's way)."""
        return inference.infer_shape(self._outputs, args, kwargs, partial=True)  # type: ignore[return-value]

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple[list | None, list | None, list | None]:
        """``(arg_types, out_types, aux_types)`` as NumPy dtypes, or Nones when incomplete."""
        return inference.infer_type(self._outputs, args, kwargs, partial=False)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
        """Like :meth:`infer_type`, with None for each type that cannot be inferred (never all Nones).

        Examples
        --------
        >>> import lazynd as mx
        >>> x = mx.sym.var("x")
        >>> (x + mx.sym.var("y")).infer_type_partial(x="float16")[0]
        [<class 'numpy.float16'>, <class 'numpy.float16'>]
        """
        return inference.infer_type(self._outputs, args, kwargs, partial=True)  # type: ignore[return-value]

    # -- text ----------------------------------------------------------------------------------
    def debug_str(self) -> str:
        """The graph as text: outputs, variables, and each operator with inputs and parameters."""
        return debug_text(self._outputs)

    def __repr__(self) -> str:
        name = self.name
        if name is not None:
            return f"<Symbol {name}>"
        return f"<Symbol group [{', '.join(node.name for node, _ in self._outputs)}]>"  # node names, as MXNet's

    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The graph as MXNet's JSON; ``remove_amp_cast`` (MXNet's default) leaves out the ``amp_cast`` and
        ``amp_multicast`` nodes that feed other nodes, whose readers then read the casts' inputs."""
        from .json_format import to_json

        return to_json(self, remove_amp_cast)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write the symbol's JSON to ``fname`` (atomically); ``remove_amp_cast`` as in :meth:`tojson`."""
        from .json_format import save

        save(self, fname, remove_amp_cast)

    # -- executors -----------------------------------------------------------------------------
    def bind(
        self,
        ctx: Any,
        args: Any,
        args_grad: Any = None,
        grad_req: Any = "write",
        aux_states: Any = None,
        group2ctx: Any = None,
        shared_exec: Any = None,
    ) -> Any:
        from .executor import binding

        return binding.bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def eval(self, ctx: Any = None, **kwargs: Any) -> list:
        """The outputs (NDArrays) of one forward pass with the arguments given by name.

        Examples
        --------
        >>> import lazynd as mx
        >>> x = mx.sym.var("x")
        >>> (x * 2).eval(x=mx.nd.array([1.0, 2.0]))[0].asnumpy()
        array([2., 4.], dtype=float32)
        """
        from lazynd.context import current_context

        executor = self.bind(ctx if ctx is not None else current_context(), kwargs)
        return executor.forward()

    def simple_bind(
        self,
        ctx: Any,
        grad_req: Any = "write",
        type_dict: Any = None,
        stype_dict: Any = None,
        group2ctx: Any = None,
        shared_arg_names: Any = None,
        shared_exec: Any = None,
        shared_buffer: Any = None,
        **shapes: Any,
    ) -> Any:
        """An executor with arrays allocated for the argument shapes given by name (MXNet 1.x's signature).

        ``shared_exec``'s argument and gradient arrays of the same name and shape are used for
        the names in ``shared_arg_names`` (without it, none: the arrays are new, as in MXNet 1.9.1); ``shared_buffer`` is a dict by
        name (``'grad of <name>'`` for gradients) whose arrays are reused where large enough and
        which receives the arrays allocated.  ``stype_dict`` may only ask for dense storage.
        """
        from .executor import binding

        sharing = binding.Sharing(shared_exec, shared_arg_names, shared_buffer)
        return binding.simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx, sharing, shapes)


# .creation makes Symbols, so it imports this module: bound here, once Symbol exists, and
# reached as ``creation.<name>`` when called (whichever of the two modules is imported first)
from . import creation, inference, methods  # noqa: E402

__all__ = ["Symbol"]
