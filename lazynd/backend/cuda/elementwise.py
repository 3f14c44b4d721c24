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

from .sources import KernelSource, launch_config, register_source

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

PRELUDE = r"""
__device__ __forceinline__ float lazynd_load(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float lazynd_load(float v) { return v; }
__device__ __forceinline__ double lazynd_load(double v) { return v; }
__device__ __forceinline__ int lazynd_load(unsigned char v) { return v; }
__device__ __forceinline__ int lazynd_load(signed char v) { return v; }
__device__ __forceinline__ int lazynd_load(int v) { return v; }
__device__ __forceinline__ long long lazynd_load(long long v) { return v; }
template <typename S, typename C> __device__ __forceinline__ S lazynd_store(C v) { return (S)v; }
template <> __device__ __forceinline__ unsigned short lazynd_store<unsigned short, float>(float f) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
template <typename T> __device__ __forceinline__ T lazynd_mod(T a, T b) { T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
__device__ __forceinline__ float lazynd_mod(float a, float b) { float r = fmodf(a, b); return (r != 0.f && ((r < 0.f) != (b < 0.f))) ? r + b : r; }
__device__ __forceinline__ double lazynd_mod(double a, double b) { double r = fmod(a, b); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }
template <typename T> __device__ __forceinline__ T lazynd_pow(T a, T b) {
  // integers: exact, by squaring, wrapping as NumPy's integer power does (a rounded float pow is
  // off by one for results like 3 ** 1 = 2.9999...); a negative exponent truncates as 1 / a**-b
  if (b < 0) return a == 1 ? (T)1 : (a == -1 ? ((-b) % 2 ? (T)-1 : (T)1) : (T)0);
  T r = 1;
  while (b) { if (b & 1) r = (T)(r * a); b >>= 1; if (b) a = (T)(a * a); }
  return r; }
__device__ __forceinline__ float lazynd_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double lazynd_pow(double a, double b) { return pow(a, b); }
"""

_UNARY = """
extern "C" __global__ void lazynd_{family}_{name}_{dtype}(const {st}* __restrict__ in, {st}* __restrict__ out, long long n) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    {ct} x = lazynd_load(in[i]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}}
"""

_BINARY = """
extern "C" __global__ void lazynd_{family}_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, long long n) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    {ct} a = lazynd_load(lhs[i]);
    {ct} b = lazynd_load(rhs[i]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}}
extern "C" __global__ void lazynd_{family}_bcast_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, long long n,
    int ndim, long long d0, long long d1, long long d2, long long d3, long long d4, long long d5,
    long long a0, long long a1, long long a2, long long a3, long long a4, long long a5,
    long long b0, long long b1, long long b2, long long b3, long long b4, long long b5) {{
  const long long dims[6] = {{d0, d1, d2, d3, d4, d5}};
  const long long sa[6] = {{a0, a1, a2, a3, a4, a5}};
  const long long sb[6] = {{b0, b1, b2, b3, b4, b5}};
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    long long rest = i, ia = 0, ib = 0;
    for (int d = ndim - 1; d >= 0; --d) {{
      long long k = rest % dims[d];
      rest /= dims[d];
      ia += k * sa[d];
      ib += k * sb[d];
    }}
    {ct} a = lazynd_load(lhs[ia]);
    {ct} b = lazynd_load(rhs[ib]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}}
extern "C" __global__ void lazynd_{family}_bcast32_{name}_{dtype}(const {st}* __restrict__ lhs, const {st}* __restrict__ rhs, {st}* __restrict__ out, unsigned int n,
    int ndim, unsigned int d0, unsigned int d1, unsigned int d2, unsigned int d3, unsigned int d4, unsigned int d5,
    unsigned int a0, unsigned int a1, unsigned int a2, unsigned int a3, unsigned int a4, unsigned int a5,
    unsigned int b0, unsigned int b1, unsigned int b2, unsigned int b3, unsigned int b4, unsigned int b5) {{
  // 32-bit index arithmetic: a 64-bit division per dimension and element is emulated and slow
  const unsigned int dims[6] = {{d0, d1, d2, d3, d4, d5}};
  const unsigned int sa[6] = {{a0, a1, a2, a3, a4, a5}};
  const unsigned int sb[6] = {{b0, b1, b2, b3, b4, b5}};
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
    unsigned int rest = i, ia = 0, ib = 0;
    for (int d = ndim - 1; d >= 0; --d) {{
      unsigned int k = rest % dims[d];
      rest /= dims[d];
      ia += k * sa[d];
      ib += k * sb[d];
    }}
    {ct} a = lazynd_load(lhs[ia]);
    {ct} b = lazynd_load(rhs[ib]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}}
extern "C" __global__ void lazynd_{family}_scalar_{name}_{dtype}(const {st}* __restrict__ lhs, {ct} b, {st}* __restrict__ out, long long n) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    {ct} a = lazynd_load(lhs[i]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
}}
extern "C" __global__ void lazynd_{family}_rscalar_{name}_{dtype}(const {st}* __restrict__ rhs, {ct} a, {st}* __restrict__ out, long long n) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    {ct} b = lazynd_load(rhs[i]);
    out[i] = lazynd_store<{st}, {ct}>(({ct})({expr}));
  }}
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
        self._lock = threading.Lock()

    def _kernel(self, device_id: int, prefix: str, name: str, dtype: str) -> Any:
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
        return source.function(device_id, f"lazynd_{self.family}_{prefix}{name}_{dtype}")

    def unary(self, device_id: int, name: str, x: Any, out: Any) -> None:
        import cupy

        x = cupy.ascontiguousarray(x)
        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        grid, block = launch_config(x.size)
        self._kernel(device_id, "", name, x.dtype.name)(grid, block, (x, target, x.size))
        if target is not out:
            out[...] = target

    def binary(self, device_id: int, name: str, lhs: Any, rhs: Any, out: Any) -> None:
        import cupy

        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        n = target.size
        grid, block = launch_config(n)
        dtype = target.dtype.name
        if lhs.shape == rhs.shape == target.shape:
            lhs, rhs = cupy.ascontiguousarray(lhs), cupy.ascontiguousarray(rhs)
            self._kernel(device_id, "", name, dtype)(grid, block, (lhs, rhs, target, n))
        else:
            dims, sa, sb = broadcast_strides(lhs, rhs, target.shape)
            pad = MAX_BROADCAST_DIMS - len(dims)
            # C types spelled out: (n, int ndim, dims, strides) in 32 bits where every index fits
            # (the index arithmetic is then several times faster), else in 64 bits
            shape_args = [*dims, *[1] * pad, *sa, *[0] * pad, *sb, *[0] * pad]
            # unsigned 32-bit: no negative strides (reversed views), and i + grid stride cannot wrap
            reach = max(sum((d - 1) * s for d, s in zip(dims, strides, strict=True)) for strides in (sa, sb))
            narrow = n < 2**31 and reach < 2**31 and min(sa + sb, default=0) >= 0
            index = np.uint32 if narrow else np.int64
            args = [lhs, rhs, target, index(n), np.int32(len(dims)), *[index(v) for v in shape_args]]
            self._kernel(device_id, "bcast32_" if narrow else "bcast_", name, dtype)(grid, block, tuple(args))
        if target is not out:
            out[...] = target

    def scalar(self, device_id: int, name: str, x: Any, scalar: Any, out: Any, reflected: bool = False) -> None:
        import cupy

        x = cupy.ascontiguousarray(x)
        target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
        grid, block = launch_config(x.size)
        ct = CUDA_TYPES[x.dtype.name][1]
        value = {"float": np.float32, "double": np.float64, "int": np.int32, "long long": np.int64}[ct](scalar)
        prefix = "rscalar_" if reflected else "scalar_"
        self._kernel(device_id, prefix, name, x.dtype.name)(grid, block, (x, value, target, x.size))
        if target is not out:
            out[...] = target


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
