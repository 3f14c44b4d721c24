"""CUDA kernel sources, compiled with NVRTC on first use and cached per device.

Every kernel lazynd launches comes from a :class:`KernelSource` registered
here, either a ``.cu`` file in ``lazynd/backend/cuda/kernels/`` or source generated
by an operator family.  ``make kernels-check`` compiles them all
(``python -m lazynd.backend.cuda.check_kernels``) without needing a GPU.
Kernel names carry the ``lazynd_`` prefix.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KERNEL_DIR = Path(__file__).with_name("kernels")
DEFAULT_OPTIONS = ("--std=c++14",)


class KernelSource:
    """CUDA C source of a module; ``function(device_id, name)`` gives a launchable kernel."""

    def __init__(self, name: str, code: str, options: Sequence[str] = (), name_expressions: Sequence[str] = ()) -> None:
        self.name = name
        self.code = code
        self.options = tuple(DEFAULT_OPTIONS) + tuple(options)
        self.name_expressions = tuple(name_expressions)
        self._modules: dict[int, Any] = {}
        self._functions: dict[tuple[int, str], Any] = {}
        self._lock = threading.Lock()

    def module(self, device_id: int) -> Any:
        mod = self._modules.get(device_id)
        if mod is None:
            import cupy

            with self._lock:
                mod = self._modules.get(device_id)
                if mod is None:
                    with cupy.cuda.Device(device_id):
                        mod = cupy.RawModule(
                            code=self.code,
                            options=self.options,
                            name_expressions=self.name_expressions or None,
                        )
                        mod.compile()
                    self._modules[device_id] = mod
        return mod

    def function(self, device_id: int, name: str) -> Any:
        """The kernel ``name`` (a C name or one of the name expressions) on ``device_id``."""
        key = (device_id, name)
        fn = self._functions.get(key)
        if fn is None:
            fn = self.module(device_id).get_function(name)
            self._functions[key] = fn
        return fn

    def __repr__(self) -> str:
        return f"<KernelSource {self.name} ({len(self.code)} chars)>"


_SOURCES: dict[str, KernelSource] = {}


def register_source(
    name: str, code: str, options: Sequence[str] = (), name_expressions: Sequence[str] = ()
) -> KernelSource:
    """Register CUDA source under a unique ``name`` and return it."""
    if name in _SOURCES:
        raise ValueError(f"kernel source {name!r} registered twice")
    source = KernelSource(name, code, options, name_expressions)
    _SOURCES[name] = source
    return source


_INCLUDE = re.compile(r'^#include "([A-Za-z0-9_]+\.cuh)"[ \t]*$', re.MULTILINE)


def load_file(filename: str, options: Sequence[str] = (), name_expressions: Sequence[str] = ()) -> KernelSource:
    """Register ``lazynd/backend/cuda/kernels/<filename>`` (once) and return it.

    A line ``#include "<name>.cuh"`` is replaced by that file of the same folder, so device code
    several sources share is written once, and every compiler (NVRTC on a GPU or in ``make
    kernels-check``, the CPU emulator) sees one self-contained source.
    """
    name = f"file:{filename}"
    if name in _SOURCES:
        return _SOURCES[name]
    code = _INCLUDE.sub(lambda m: (KERNEL_DIR / m.group(1)).read_text(), (KERNEL_DIR / filename).read_text())
    return register_source(name, code, options, name_expressions)


def all_sources() -> list[KernelSource]:
    """Every kernel source: all ``.cu`` files plus what the operator families generate."""
    from ... import ops  # noqa: F401 - importing the families registers their sources

    for path in sorted(KERNEL_DIR.glob("*.cu")):
        load_file(path.name)
    return list(_SOURCES.values())


_launch_configs: dict[tuple[int, int], tuple[tuple[int], tuple[int]]] = {}
_LAUNCH_CONFIGS_KEPT = 4096  # a program launches over a few hundred sizes; past this the cache restarts


def launch_config(n: int, threads: int = 256) -> tuple[tuple[int], tuple[int]]:
    """Grid and block for a grid-stride loop over ``n`` elements, from a cache: the sizes of a
    training step repeat at every step, and this runs at every launch."""
    key = (n, threads)
    config = _launch_configs.get(key)
    if config is None:
        if len(_launch_configs) >= _LAUNCH_CONFIGS_KEPT:
            _launch_configs.clear()
        blocks = min(max((n + threads - 1) // threads, 1), 65535 * 8)
        config = _launch_configs[key] = ((blocks,), (threads,))
    return config


_dtype_names: dict[Any, str] = {}


def dtype_name(dtype: Any) -> str:
    """``numpy.dtype(dtype).name`` ('float32'...), the suffix of kernel names, from a cache: NumPy
    computes the name in Python at each ``.name``, a cost paid at every launch otherwise."""
    name = _dtype_names.get(dtype)
    if name is None:
        import numpy as np

        name = _dtype_names[dtype] = np.dtype(dtype).name
    return name
