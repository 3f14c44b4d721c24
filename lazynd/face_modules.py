"""MXNet's faces as importable submodules: ``from lazynd.module import Module``, ``import lazynd.model``.

``mx.mod``, ``mx.model``, ``mx.symbol``, ``mx.kvstore``... are attributes that ``lazynd/__init__``
imports on first use, most of them from the sibling packages (``lazynd_sym``, ``lazynd_kv``).
MXNet programs also import them as submodules (``from mxnet.module import Module``,
``from mxnet.model import BatchEndParam``).  :class:`_FaceFinder` answers such an import, and one
of a module inside a face (``lazynd.module.module``), with the module the face names, imported
only then, so ``import lazynd`` stays free of the siblings.

Some modules of MXNet are operator namespaces here, attributes of a package rather than files
(``mxnet.contrib.ndarray``, ``mxnet.ndarray.contrib``, ``mxnet.symbol.linalg``...): the finder
answers an import of one with that attribute, so ``import lazynd.contrib.ndarray`` and
``from lazynd.ndarray.contrib import MultiBoxPrior`` work as their MXNet forms do.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Mapping
from typing import Any


class _FaceFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``lazynd.<face>[.<more>]`` for each face that lives elsewhere, and loads the module it names."""

    def __init__(self, faces: Mapping[str, str], namespaces: Mapping[str, tuple[str, str]]) -> None:
        # only the faces that are not lazynd's own submodules of the same name
        self._faces = {name: target for name, target in faces.items() if target != f"lazynd.{name}"}
        self._namespaces = dict(namespaces)

    def target(self, fullname: str) -> str | None:
        """The real name of the module ``fullname`` stands for, or None if it is no face of ours."""
        root, _, rest = fullname.partition(".")
        face, _, inner = rest.partition(".")
        if root != "lazynd" or face not in self._faces:
            return None
        return self._faces[face] + (f".{inner}" if inner else "")

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self._namespaces and self.target(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a placeholder module; exec_module puts the real one in its place

    def exec_module(self, module: Any) -> None:
        # the import system hands on what sys.modules holds under the name once this returns,
        # so the face is the real module (one copy of each class), not a second load of its file
        if module.__name__ in self._namespaces:
            owner, attribute = self._namespaces[module.__name__]
            sys.modules[module.__name__] = getattr(importlib.import_module(owner), attribute)
            return
        real = self.target(module.__name__)
        assert real is not None  # find_spec only gives specs for our faces
        sys.modules[module.__name__] = importlib.import_module(real)


def install(faces: Mapping[str, str], namespaces: Mapping[str, tuple[str, str]]) -> None:
    """Put a finder for ``faces`` (attribute name -> module name) and ``namespaces`` (module name ->
    (module, attribute) that stands for it) first on ``sys.meta_path`` (once).

    First, so that ``lazynd.module.module`` is not found as a file under ``lazynd.module``'s path
    and loaded a second time.
    """
    if not any(isinstance(finder, _FaceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _FaceFinder(faces, namespaces))
