"""The Graphviz face of a network's DOT source: :class:`Network`, what ``plot_network`` returns,
used as MXNet's ``graphviz.Digraph`` (``render``, ``view``, ``pipe``, ``save``, ``format``).

Rendering needs the ``graphviz`` package and its ``dot`` program; the DOT text itself
(``source``) needs neither.
"""

from __future__ import annotations

import os
from typing import Any

from lazynd.errors import ArgumentTypeError, ArgumentValueError, LazyNDError
from lazynd.formats.fileio import write_atomic


def checked_format(save_format: Any) -> str:
    """``save_format`` as a Digraph takes it: a string, lower-cased, one of Graphviz's output formats.

    MXNet's Digraph refuses a bad format when the graph is made; checking it here, not at ``render``,
    names the mistake where it was made.  Without the ``graphviz`` package there is no list to check
    against (nothing can be rendered then anyway), so any string is kept.
    """
    if not isinstance(save_format, str):
        raise ArgumentTypeError(f"plot_network: save_format must be a str such as 'pdf', got {save_format!r}")
    try:
        from graphviz import FORMATS
    except ImportError:
        return save_format.lower()
    if save_format.lower() not in FORMATS:
        raise ArgumentValueError(
            f"plot_network: unknown save_format {save_format!r}; expected one of Graphviz's {sorted(FORMATS)}"
        )
    return save_format.lower()


class Network:
    """Graphviz DOT source of a network, used as MXNet's ``graphviz.Digraph``: ``render``, ``view``,
    ``pipe``, ``save``, ``format``, ``name``, ``filename``, and display in a notebook.  Rendering needs the ``graphviz``
    package and Graphviz's ``dot`` program; the DOT text is always in ``source``."""

    def __init__(self, source: str, title: str, save_format: str) -> None:
        self.source = source
        self.title = title
        self.save_format = checked_format(save_format)

    def __str__(self) -> str:
        return self.source

    @property
    def name(self) -> str:
        """The graph's name, the ``title`` given to :func:`plot_network` (a Digraph's ``name``)."""
        return self.title

    @property
    def filename(self) -> str:
        """Where :meth:`save` writes by default: the name with ``.gv``, as Graphviz names it."""
        return f"{self.title}.gv"

    @property
    def directory(self) -> str:
        """The folder :meth:`save` writes in by default: the working folder (``''``)."""
        return ""

    @property
    def engine(self) -> str:
        """The Graphviz layout program used to render: ``dot``."""
        return "dot"

    @property
    def format(self) -> str:
        """The rendering format (``save_format``), settable as a Digraph's."""
        return self.save_format

    @format.setter
    def format(self, value: str) -> None:
        self.save_format = checked_format(value)

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``method`` of a ``graphviz.Source`` of the DOT text; a missing package or ``dot`` program is named."""
        try:
            import graphviz
        except ImportError as exc:
            raise LazyNDError(
                "plot_network: rendering needs the 'graphviz' package (pip install graphviz); "
                "the DOT text is in .source"
            ) from exc
        try:
            return getattr(graphviz.Source(self.source, format=self.save_format), method)(*args, **kwargs)
        except graphviz.ExecutableNotFound as exc:
            raise LazyNDError(
                "plot_network: rendering needs Graphviz's 'dot' program on the PATH; the DOT text is in .source"
            ) from exc

    def render(self, filename: str | None = None, **kwargs: Any) -> str:
        """Write the graph in ``save_format`` with Graphviz (``filename`` defaults to the title); return its path."""
        return self._run("render", filename or self.title, **kwargs)

    def view(self, filename: str | None = None, **kwargs: Any) -> str:
        """Render, then open the file in the system's viewer: what scripts call on MXNet's graphviz Digraph."""
        return self.render(filename, view=True, **kwargs)

    def pipe(self, format: str | None = None, **kwargs: Any) -> Any:  # noqa: A002 -- graphviz's name
        """The rendered graph as bytes (in ``format``, else ``save_format``)."""
        return self._run("pipe", format=format, **kwargs)

    def save(self, filename: str | None = None, directory: str | None = None) -> str:
        """Write the DOT text to ``filename`` (default :attr:`filename`) in ``directory`` (default the
        working folder), as a Digraph's ``save``; return the path.  No Graphviz is needed."""
        path = os.path.join(directory or self.directory, filename or self.filename)
        write_atomic(path, self.source.encode("utf-8"))
        return path

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict:
        """A notebook shows the rendered graph where Graphviz can render it, else the DOT text."""
        try:
            return self._run("_repr_mimebundle_", include, exclude, **kwargs)
        except LazyNDError:
            return {"text/plain": self.source}
