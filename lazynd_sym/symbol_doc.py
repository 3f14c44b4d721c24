"""``mx.symbol_doc``: MXNet's helper for documenting symbols, kept for programs that import it.

MXNet 1.x scripts (the CTC and RNN examples among them) do ``from mxnet.symbol_doc import
SymbolDoc``; the one function MXNet gives it, ``get_output_shape``, names the output shapes
of a symbol for given input shapes.
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import ShapeError

__all__ = ["SymbolDoc"]


class SymbolDoc:
    """Base class of the per-operator documentation helpers.

    Examples:
        >>> import lazynd as mx
        >>> net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
        >>> mx.symbol_doc.SymbolDoc.get_output_shape(net, data=(2, 4))
        {'fc_output': (2, 3)}
    """

    @staticmethod
    def get_output_shape(sym: Any, **input_shapes: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """The shape of each output of ``sym``, by output name, for the given input shapes."""
        _, out_shapes, _ = sym.infer_shape(**input_shapes)
        if out_shapes is None:
            given = ", ".join(sorted(input_shapes)) or "none"
            raise ShapeError(
                f"SymbolDoc.get_output_shape: the shapes given ({given}) do not determine the outputs "
                f"of {sym.list_outputs()}; expected shapes for the inputs among {sym.list_arguments()}"
            )
        return dict(zip(sym.list_outputs(), out_shapes, strict=True))
