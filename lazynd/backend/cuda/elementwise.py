"""Generated CUDA kernels for elementwise families: one source per family, one kernel per op and dtype.

Each family (unary math, binary arithmetic, ...) registers one
:class:`~lazynd.backend.cuda.sources.KernelSource` holding a grid-stride kernel
for every (operator, dtype) pair.  float16 is stored as 16 bits and computed in
float32 (PTX ``cvt``), so no CUDA header is needed and NVRTC compiles the
sources anywhere.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .sources import KERNEL_DIR, KernelSource, dtype_name, launch_config, register_source

# dtype -> (storage type, compute type)
CUDA_TYPES = {
    "float32": ("float", "float"),
    "float64": ("double", "double"),
    "float16": ("unsigned short", "float"),
    "uint8": ("unsigned char", "int"),
    "int8": ("signed char", "int"),
    "int32": ("int", "int"),
    "int64": ("long long", "long long"),
}
FLOAT_DTYPES = ("float32", "float64", "float16")
ALL_DTYPES = tuple(CUDA_TYPES)
MAX_BROADCAST_DIMS = 6
# elements per thread and step of the 32-bit flat and broadcast loops (LAZYND_UNROLL in kernels/elementwise.cuh)
UNROLL = 4

PRELUDE = (KERNEL_DIR / "elementwise.cuh").read_text()  # device code every family's source starts with

_UNARY = """
struct lazynd_{family}_{name}_{dtype}_op {{
  __device__ __forceinline__ {st} operator()({st} v) const {{
    {ct} x = lazynd_load(v);
    return lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}};
extern "C" __global__ void lazynd_{family}_{name}_{dtype}(const {st}* __restrict__ in, {st}* __restrict__ out, long long n) {{
  lazynd_map1(in, out, n, lazynd_{family}_{name}_{dtype}_op());
}}
"""

_BINARY = """
struct lazynd_{family}_{name}_{dtype}_op {{
  __device__ __forceinline__ {st} operator()({st} x, {st} y) const {{
    {ct} a = lazynd_load(x);
    {ct} b = lazynd_load(y);
    return lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}};
extern "C" __global__ void lazynd_{family}_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, long long n) {{
  lazynd_map2(lhs, rhs, out, n, lazynd_{family}_{name}_{dtype}_op());
}}
extern "C" __global__ void lazynd_{family}_bcast_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, long long n,
    int ndim, long long d0, long long d1, long long d2, long long d3, long long d4, long long d5,
    long long a0, long long a1, long long a2, long long a3, long long a4, long long a5,
    long long b0, long long b1, long long b2, long long b3, long long b4, long long b5) {{
  const lazynd_div64 dims[LAZYND_MAX_DIMS] = {{{{d0}}, {{d1}}, {{d2}}, {{d3}}, {{d4}}, {{d5}}}};
  const long long sa[6] = {{a0, a1, a2, a3, a4, a5}};
  const long long sb[6] = {{b0, b1, b2, b3, b4, b5}};
  lazynd_bcast_dispatch(lhs, rhs, out, n, ndim, dims, sa, sb, lazynd_{family}_{name}_{dtype}_op());
}}
extern "C" __global__ void lazynd_{family}_bcast32_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, unsigned int n,
    int ndim, unsigned int d0, unsigned int d1, unsigned int d2, unsigned int d3, unsigned int d4, unsigned int d5,
    unsigned int m0, unsigned int m1, unsigned int m2, unsigned int m3, unsigned int m4, unsigned int m5,
    unsigned int s0, unsigned int s1, unsigned int s2, unsigned int s3, unsigned int s4, unsigned int s5,
    unsigned int a0, unsigned int a1, unsigned int a2, unsigned int a3, unsigned int a4, unsigned int a5,
    unsigned int b0, unsigned int b1, unsigned int b2, unsigned int b3, unsigned int b4, unsigned int b5) {{
  const lazynd_div32 dims[LAZYND_MAX_DIMS] = {{{{d0, m0, s0}}, {{d1, m1, s1}}, {{d2, m2, s2}}, {{d3, m3, s3}}, {{d4, m4, s4}}, {{d5, m5, s5}}}};
  const unsigned int sa[6] = {{a0, a1, a2, a3, a4, a5}};
  const unsigned int sb[6] = {{b0, b1, b2, b3, b4, b5}};
  lazynd_bcast_dispatch(lhs, rhs, out, n, ndim, dims, sa, sb, lazynd_{family}_{name}_{dtype}_op());
}}
struct lazynd_{family}_scalar_{name}_{dtype}_op {{
  {ct} b;
  __device__ __forceinline__ {st} operator()({st} v) const {{
    {ct} a = lazynd_load(v);
    return lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}};
extern "C" __global__ void lazynd_{family}_scalar_{name}_{dtype}(const {st}* __restrict__ lhs, {ct} b, {st}* __restrict__ out, long long n) {{
  lazynd_map1(lhs, out, n, lazynd_{family}_scalar_{name}_{dtype}_op{{b}});
}}
struct lazynd_{family}_rscalar_{name}_{dtype}_op {{
  {ct} a;
  __device__ __forceinline__ {st} operator()({st} v) const {{
    {ct} b = lazynd_load(v);
    return lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}};
extern "C" __global__ void lazynd_{family}_rscalar_{name}_{dtype}(const {st}* __restrict__ rhs, {ct} a, {st}* __restrict__ out, long long n) {{
  lazynd_map1(rhs, out, n, lazynd_{family}_rscalar_{name}_{dtype}_op{{a}});
}}
"""


class ElementwiseFamily:
    """Kernels of one family; ``exprs`` maps op name to a C expression in ``x`` (unary) or ``a``, ``b``."""

    def __init__(
        self, family: str, kind: str, exprs: dict[str, str], dtypes: dict[str, tuple[str, ...]] | None = None
    ) -> None:
        self.family = family
        self.kind = kind
        self.exprs = dict(exprs)
        self.dtypes = {name: (dtypes or {}).get(name, ALL_DTYPES) for name in exprs}
        template = _UNARY if kind == "unary" else _BINARY
        # one small source per (op, dtype), compiled when first launched: the first ``a + b`` costs
        # one kernel's compile, not the family's (hundreds of kernels); the whole family is also
        # registered as one source, which only ``make kernels-check`` compiles
        self._parts = {
            (name, dtype): template.format(
                family=family, name=name, dtype=dtype, st=CUDA_TYPES[dtype][0], ct=CUDA_TYPES[dtype][1], expr=expr
            )
            for name, expr in self.exprs.items()
            for dtype in self.dtypes[name]
        }
        self.source: KernelSource = register_source(f"elementwise:{family}", PRELUDE + "".join(self._parts.values()))
        self._sources: dict[tuple[str, str], KernelSource] = {}
        self._kernels: dict[tuple[int, str, str, str], Any] = {}  # (device, prefix, name, dtype) -> kernel
        self._lock = threading.Lock()

    def _kernel(self, device_id: int, prefix: str, name: str, dtype: str) -> Any:
        """The launchable kernel ``lazynd_<family>_<prefix><name>_<dtype>`` on ``device_id``: found by
        one lookup once known (every elementwise launch asks), its source made on first use."""
        key = (device_id, prefix, name, dtype)
        kernel = self._kernels.get(key)
        if kernel is not None:
            return kernel
        source = self._sources.get((name, dtype))
        if source is None:
            if dtype not in self.dtypes.get(name, ()):
                from ...errors import OperatorError

                raise OperatorError(f"{name}: dtype {dtype} is not supported on the GPU")
            with self._lock:
                source = self._sources.get((name, dtype))
                if source is None:
                    code = PRELUDE + self._parts[(name, dtype)]
                    source = KernelSource(f"elementwise:{self.family}:{name}:{dtype}", code)
                    self._sources[(name, dtype)] = source
        kernel = self._kernels[key] = source.function(device_id, f"lazynd_{self.family}_{prefix}{name}_{dtype}")
        return kernel

    def unary(self, device_id: int, name: str, x: Any, out: Any) -> None:
        import cupy

        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        x = unaliased(cupy.ascontiguousarray(x), target)
        grid, block = flat_launch_config(x.size)
        self._kernel(device_id, "", name, dtype_name(x.dtype))(grid, block, (x, target, x.size))
        if target is not out:
            out[...] = target

    def binary(self, device_id: int, name: str, lhs: Any, rhs: Any, out: Any) -> None:
        import cupy

        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        n = target.size
        dtype = dtype_name(target.dtype)
        if n == 0:
            return
        lhs, rhs = unaliased(lhs, target), unaliased(rhs, target)
        if lhs.shape == rhs.shape == target.shape and lhs.flags.c_contiguous and rhs.flags.c_contiguous:
            grid, block = flat_launch_config(n)
            self._kernel(device_id, "", name, dtype)(grid, block, (lhs, rhs, target, n))
        else:
            # broadcasts, and strided views of the same shape (read in place rather than copied first)
            self._broadcast(device_id, name, lhs, rhs, target)
        if target is not out:
            out[...] = target

    def _broadcast(self, device_id: int, name: str, lhs: Any, rhs: Any, target: Any) -> None:
        n = target.size
        dims, sa, sb = broadcast_strides(lhs, rhs, target.shape)
        # the kernels take dimensions innermost first, padded to MAX_BROADCAST_DIMS (the padding is unread:
        # each dimension count has its own specialised loop)
        dims, sa, sb = dims[::-1], sa[::-1], sb[::-1]
        pad = MAX_BROADCAST_DIMS - len(dims)
        dims, sa, sb = dims + [1] * pad, sa + [0] * pad, sb + [0] * pad
        # 32-bit index arithmetic where every index fits: unsigned, so no negative strides (reversed
        # views), and n < 2**31 so that neither the magic-number division nor i + grid stride wraps
        reach = max(sum((d - 1) * s for d, s in zip(dims, strides, strict=True)) for strides in (sa, sb))
        narrow = n < 2**31 and reach < 2**31 and min(sa + sb) >= 0
        grid, block = launch_config((n + UNROLL - 1) // UNROLL)
        head = [lhs, rhs, target]
        ndim = np.int32(len(dims) - pad)
        if narrow:
            magic, shift = zip(*(division_magic(d) for d in dims), strict=True)
            values = [*dims, *magic, *shift, *sa, *sb]
            args = [*head, np.uint32(n), ndim, *[np.uint32(v) for v in values]]
            self._kernel(device_id, "bcast32_", name, dtype_name(target.dtype))(grid, block, tuple(args))
        else:
            args = [*head, np.int64(n), ndim, *[np.int64(v) for v in (*dims, *sa, *sb)]]
            self._kernel(device_id, "bcast_", name, dtype_name(target.dtype))(grid, block, tuple(args))

    def scalar(self, device_id: int, name: str, x: Any, scalar: Any, out: Any, reflected: bool = False) -> None:
        import cupy

        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        x = unaliased(cupy.ascontiguousarray(x), target)
        grid, block = flat_launch_config(x.size)
        ct = CUDA_TYPES[dtype_name(x.dtype)][1]
        value = {"float": np.float32, "double": np.float64, "int": np.int32, "long long": np.int64}[ct](scalar)
        prefix = "rscalar_" if reflected else "scalar_"
        self._kernel(device_id, prefix, name, dtype_name(x.dtype))(grid, block, (x, value, target, x.size))
        if target is not out:
            out[...] = target


def flat_launch_config(n: int) -> tuple[tuple[int], tuple[int]]:
    """Grid and block of a flat map over ``n`` elements (``lazynd_map1``/``lazynd_map2``): UNROLL
    elements a thread below 2**31 elements, one a step of the grid-stride loop above."""
    return launch_config((n + UNROLL - 1) // UNROLL if n < 2**31 else n)


def unaliased(x: Any, target: Any) -> Any:
    """``x``, or a copy of it when the kernel's writes to ``target`` could change what it reads later.

    Reading the very elements being written (``a += b``: same place, same layout) is safe, as each
    thread reads an element before writing it; any other overlap (``a += a[:1]``, shifted views) would
    let one thread read what another already wrote, so the input is copied first, as NumPy does.
    Every kernel that reads element ``i`` of its inputs and writes element ``i`` of ``target``
    (elementwise families, fused chains, optimizer updates) passes its inputs through this.
    """
    import cupy

    same = x.data.ptr == target.data.ptr and (
        (x.shape == target.shape and x.strides == target.strides)
        # one buffer in two contiguous shapes (an executor's in-place reshape): element i is element i
        or (x.size == target.size and x.flags.c_contiguous and target.flags.c_contiguous)
    )
    return x if same or not cupy.may_share_memory(x, target) else x.copy()


def division_magic(divisor: int) -> tuple[int, int]:
    """``(magic, shift)`` with ``i // divisor == (mulhi(i, magic) + i) >> shift`` for every ``0 <= i < 2**31``.

    ``mulhi`` is the high 32 bits of the 64-bit product; ``1 <= divisor < 2**31``.  The kernels divide
    an index by a dimension this way: a multiply-high, an add and a shift instead of a division
    routine of some twenty instructions.

    Examples:
        >>> magic, shift = division_magic(7)
        >>> ((1000 * magic >> 32) + 1000) >> shift == 1000 // 7
        True
    """
    shift = (divisor - 1).bit_length()  # the smallest shift with 2**shift >= divisor
    magic = ((1 << 32) * ((1 << shift) - divisor)) // divisor + 1
    return magic, shift


def broadcast_strides(lhs: Any, rhs: Any, shape: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    """Collapsed output dims and per-input element strides (0 on broadcast axes)."""
    ndim = len(shape)

    def strides_of(x: Any) -> list[int]:
        pad = ndim - x.ndim
        out = [0] * pad
        for d in range(x.ndim):
            out.append(0 if x.shape[d] == 1 else x.strides[d] // x.itemsize)
        return out

    sa, sb = strides_of(lhs), strides_of(rhs)
    dims: list[int] = []
    ra: list[int] = []
    rb: list[int] = []
    for d in range(ndim):
        if shape[d] == 1:
            continue
        if dims and ra[-1] == sa[d] * shape[d] and rb[-1] == sb[d] * shape[d]:
            # merge with the previous (outer) dim: contiguous in both inputs
            dims[-1] *= shape[d]
            ra[-1], rb[-1] = sa[d], sb[d]
            continue
        dims.append(shape[d])
        ra.append(sa[d])
        rb.append(sb[d])
    if not dims:
        dims, ra, rb = [1], [0], [0]
    if len(dims) > MAX_BROADCAST_DIMS:
        from ...errors import OperatorError

        raise OperatorError(
            f"broadcast: at most {MAX_BROADCAST_DIMS} non-mergeable dimensions on the GPU, got {len(dims)}"
        )
    return dims, ra, rb
