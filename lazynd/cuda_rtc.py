"""``mx.rtc``: MXNet 0.9's runtime-compiled CUDA kernels.

``mx.rtc(name, inputs, outputs, kernel)`` wraps the body ``kernel`` in a kernel named
``name`` whose parameters are the named arrays, in order: ``const T* x`` for each
``(name, array)`` of ``inputs``, ``T* y`` for each of ``outputs``, with ``T`` the C type
of the array's dtype.  ``push(inputs, outputs, grid_dims, block_dims)`` launches it on
the arrays' GPU through the engine: it waits for pending writes of the inputs and for
every pending use of the outputs, and later reads of the outputs wait for it.  The body
indexes the arrays itself (``threadIdx``, ``blockIdx``); no sizes are passed.

Examples
--------
>>> import lazynd as mx
>>> x = mx.nd.ones((10,), ctx=mx.gpu(0))  # doctest: +SKIP
>>> y = mx.nd.zeros((10,), ctx=mx.gpu(0))  # doctest: +SKIP
>>> k = mx.rtc('twice', [('x', x)], [('y', y)], 'y[threadIdx.x] = 2 * x[threadIdx.x];')  # doctest: +SKIP
>>> k.push([x], [y], (1, 1, 1), (10, 1, 1))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import ContextError, OperatorError
from .ndarray import NDArray
from .runtime import push as _push

__all__ = ["Rtc"]

# C types of the dtypes a kernel parameter may have
_C_TYPES = {
    "float32": "float",
    "float64": "double",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int32": "int",
    "int64": "long long",
}


def _check_pairs(name: str, role: str, pairs: Any) -> list[tuple[str, NDArray]]:
    if not isinstance(pairs, (list, tuple)):
        raise OperatorError(f"rtc {name!r}: {role} must be a list of (name, NDArray) pairs, got {type(pairs).__name__}")
    checked = []
    for pair in pairs:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise OperatorError(f"rtc {name!r}: each of {role} must be a (name, NDArray) pair, got {pair!r}")
        arg, array = pair
        if not (isinstance(arg, str) and arg.isidentifier()):
            raise OperatorError(f"rtc {name!r}: {role} name {arg!r} is not a C identifier")
        if not isinstance(array, NDArray):
            raise OperatorError(f"rtc {name!r}: {role} {arg!r} must be an NDArray, got {type(array).__name__}")
        checked.append((arg, array))
    return checked


def _c_type(name: str, arg: str, array: NDArray) -> str:
    dtype = np.dtype(array.dtype).name
    if dtype not in _C_TYPES:
        raise OperatorError(f"rtc {name!r}: {arg!r} has dtype {dtype}, expected one of {sorted(_C_TYPES)}")
    return _C_TYPES[dtype]


def _gpu_of(name: str, arrays: Sequence[tuple[str, NDArray]]) -> int:
    """The one GPU every array is on; a ContextError otherwise."""
    devices = set()
    for arg, array in arrays:
        ctx = array.context
        if ctx.device_type != "gpu":
            raise ContextError(f"rtc {name!r}: {arg!r} is on {ctx}; runtime-compiled kernels run on a GPU only")
        devices.add(ctx.device_id)
    if len(devices) > 1:
        raise ContextError(f"rtc {name!r}: the arrays are on several GPUs {sorted(devices)}, expected one")
    return devices.pop() if devices else 0


def _dims(name: str, role: str, dims: Any) -> tuple[int, int, int]:
    try:
        values = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise OperatorError(f"rtc {name!r}: {role} must be 3 positive ints, got {dims!r}")
    return values  # type: ignore[return-value]


class Rtc:
    """A CUDA kernel compiled at run time from a body and the arrays of its signature (MXNet's ``mx.rtc``)."""

    def __init__(
        self, name: str, inputs: Sequence[tuple[str, NDArray]], outputs: Sequence[tuple[str, NDArray]], kernel: str
    ) -> None:
        if not (isinstance(name, str) and name.isidentifier()):
            raise OperatorError(f"rtc: the kernel name {name!r} is not a C identifier")
        if not isinstance(kernel, str):
            raise OperatorError(
                f"rtc {name!r}: kernel must be the CUDA source of its body, got {type(kernel).__name__}"
            )
        ins, outs = _check_pairs(name, "inputs", inputs), _check_pairs(name, "outputs", outputs)
        if not outs:
            raise OperatorError(f"rtc {name!r}: give at least one output")
        _gpu_of(name, ins + outs)
        self.name = name
        self.input_types = [np.dtype(a.dtype) for _, a in ins]
        self.output_types = [np.dtype(a.dtype) for _, a in outs]
        params = [f"const {_c_type(name, arg, a)}* {arg}" for arg, a in ins]
        params += [f"{_c_type(name, arg, a)}* {arg}" for arg, a in outs]
        self.source = f'extern "C" __global__ void {name}({", ".join(params)}) {{\n{kernel}\n}}\n'
        from .backend.cuda.rtc import compile_kernel

        self._kernel = compile_kernel(name, self.source)

    def push(
        self,
        inputs: Sequence[NDArray],
        outputs: Sequence[NDArray],
        grid_dims: Sequence[int],
        block_dims: Sequence[int],
    ) -> None:
        """Launch the kernel on ``inputs`` and ``outputs`` (same count and dtypes as at creation)."""
        name = self.name
        for role, arrays, types in (("inputs", inputs, self.input_types), ("outputs", outputs, self.output_types)):
            if len(arrays) != len(types):
                raise OperatorError(f"rtc {name!r}: push got {len(arrays)} {role}, the kernel takes {len(types)}")
            for i, (array, dtype) in enumerate(zip(arrays, types, strict=True)):
                if not isinstance(array, NDArray) or np.dtype(array.dtype) != dtype:
                    given = np.dtype(array.dtype).name if isinstance(array, NDArray) else type(array).__name__
                    raise OperatorError(f"rtc {name!r}: {role}[{i}] is {given}, the kernel takes {dtype.name}")
        named = [(f"inputs[{i}]", a) for i, a in enumerate(inputs)]
        named += [(f"outputs[{i}]", a) for i, a in enumerate(outputs)]
        device_id = _gpu_of(name, named)
        grid, block = _dims(name, "grid_dims", grid_dims), _dims(name, "block_dims", block_dims)
        buffers = []
        for arg, array in named:
            data = array.data_array
            if not data.flags.c_contiguous:
                raise OperatorError(f"rtc {name!r}: {arg} is not contiguous; pass a copy")
            buffers.append(data)
        # a var is claimed once: an array that is an input and an output is written only
        writes = list({id(a.var): a.var for a in outputs}.values())
        reads = [v for v in {id(a.var): a.var for a in inputs}.values() if all(v is not w for w in writes)]
        from .backend.cuda.rtc import launch

        _push(
            outputs[0].context,
            launch,
            (self._kernel, device_id, name, grid, block, buffers),
            reads,
            writes,
            f"rtc_{name}",
        )

    def __repr__(self) -> str:
        return f"<rtc {self.name}>"
