// Device code shared by the generated elementwise kernels (lazynd/backend/cuda/elementwise.py, which
// puts it before each family's kernels, and fusion.py's fused chains): loads and stores of each storage
// type (float16 held as 16 bits and computed in float32), integer-safe division, modulo and power, and the
// flat and broadcast loops that take an operator functor.

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
// integers: a zero divisor gives 0 (NumPy's rule for // and %), and MIN / -1 wraps to MIN (its remainder is 0):
// C leaves both undefined, and a CPU traps on them
template <typename T> __device__ __forceinline__ T lazynd_divide(T a, T b) {
  if (b == 0) return (T)0;
  if (b == (T)-1) return (T)(0ULL - (unsigned long long)a);
  return a / b; }
__device__ __forceinline__ float lazynd_divide(float a, float b) { return a / b; }
__device__ __forceinline__ double lazynd_divide(double a, double b) { return a / b; }
template <typename T> __device__ __forceinline__ T lazynd_mod(T a, T b) {
  if (b == 0 || b == (T)-1) return (T)0;
  T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
// floats: a zero divisor gives 0 too, as in MXNet (C's fmod gives NaN)
__device__ __forceinline__ float lazynd_mod(float a, float b) {
  if (b == 0.f) return 0.f;
  float r = fmodf(a, b); return (r != 0.f && ((r < 0.f) != (b < 0.f))) ? r + b : r; }
__device__ __forceinline__ double lazynd_mod(double a, double b) {
  if (b == 0.0) return 0.0;
  double r = fmod(a, b); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }
template <typename T> __device__ __forceinline__ T lazynd_pow(T a, T b) {
  // integers: exact, by squaring, wrapping as NumPy's integer power does (a rounded float pow is
  // off by one for results like 3 ** 1 = 2.9999...); a negative exponent truncates as 1 / a**-b
  if (b < 0) return a == 1 ? (T)1 : (a == -1 ? ((-b) % 2 ? (T)-1 : (T)1) : (T)0);
  T r = 1;
  while (b) { if (b & 1) r = (T)(r * a); b >>= 1; if (b) a = (T)(a * a); }
  return r; }
__device__ __forceinline__ float lazynd_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double lazynd_pow(double a, double b) { return pow(a, b); }

// -- broadcasting: the output's flat index -> an element offset into each input ---------------------
// Dimensions come innermost first, already collapsed on the host (adjacent dims that broadcast alike are
// one).  The per-dimension arrays are only ever indexed by compile-time constants (unrolled loops), so
// they stay in registers and the parameter bank: a run-time index would put them in local memory.  The
// common counts (a row or a column: 2, and 3) have their own loops; others take a loop guarded by the count.
// 32-bit division by a dimension is a multiply-high, an add and a shift with a host-computed magic
// number (exact for indices < 2**31); 64-bit indices (huge arrays, negative strides) divide plainly.
#define LAZYND_UNROLL 4
#define LAZYND_MAX_DIMS 6
__device__ __forceinline__ unsigned int lazynd_mulhi(unsigned int a, unsigned int b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else  // the CPU emulator of the tests
  return (unsigned int)(((unsigned long long)a * b) >> 32);
#endif
}
struct lazynd_div32 {
  unsigned int size, magic, shift;
  __device__ __forceinline__ unsigned int quotient(unsigned int i) const { return (lazynd_mulhi(i, magic) + i) >> shift; }
};
struct lazynd_div64 {
  long long size;
  __device__ __forceinline__ long long quotient(long long i) const { return i / size; }
};
// NDIM dimensions, (NDIM == 0) any number up to LAZYND_MAX_DIMS given by ndim, or (NDIM == -1) none: contiguous inputs
template <int NDIM, typename I, typename D>
__device__ __forceinline__ void lazynd_bcast_offsets(I i, int ndim, const D* dims, const I* sa, const I* sb, I& ia, I& ib) {
  if (NDIM < 0) {  // both inputs contiguous in the output's shape: the flat map of two inputs
    ia = i;
    ib = i;
    return;
  }
  const int last = (NDIM ? NDIM : ndim) - 1;  // the outermost dimension: its index needs no division
  ia = 0; ib = 0;
#pragma unroll
  for (int d = 0; d < (NDIM ? NDIM : LAZYND_MAX_DIMS); ++d) {
    if (d < last) {
      I q = dims[d].quotient(i);
      I k = i - q * dims[d].size;
      ia += k * sa[d];
      ib += k * sb[d];
      i = q;
    } else if (d == last) {
      ia += i * sa[d];
      ib += i * sb[d];
    }
  }
}
// UNROLL elements per thread and step, a block's width apart (coalesced): every load of a step is issued
// before the first result is computed
template <int NDIM, int UNROLL, typename I, typename D, typename S, typename F>
__device__ __forceinline__ void lazynd_bcast_loop(const S* __restrict__ lhs, const S* __restrict__ rhs, S* __restrict__ out,
                                                  I n, int ndim, const D* dims, const I* sa, const I* sb, F op) {
  const I width = (I)blockDim.x;
  const I step = (I)gridDim.x * width * UNROLL;
  for (I base = (I)blockIdx.x * width * UNROLL + threadIdx.x; base < n; base += step) {
    S a[UNROLL], b[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      I i = base + u * width;
      if (i < n) {
        I ia, ib;
        lazynd_bcast_offsets<NDIM>(i, ndim, dims, sa, sb, ia, ib);
        a[u] = lhs[ia];
        b[u] = rhs[ib];
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      I i = base + u * width;
      if (i < n) out[i] = op(a[u], b[u]);
    }
  }
}
template <typename S, typename F>
__device__ __forceinline__ void lazynd_bcast_dispatch(const S* __restrict__ lhs, const S* __restrict__ rhs, S* __restrict__ out,
                                                      unsigned int n, int ndim, const lazynd_div32* dims,
                                                      const unsigned int* sa, const unsigned int* sb, F op) {
  switch (ndim) {
    case 2: lazynd_bcast_loop<2, LAZYND_UNROLL>(lhs, rhs, out, n, ndim, dims, sa, sb, op); break;
    case 3: lazynd_bcast_loop<3, LAZYND_UNROLL>(lhs, rhs, out, n, ndim, dims, sa, sb, op); break;
    default: lazynd_bcast_loop<0, LAZYND_UNROLL>(lhs, rhs, out, n, ndim, dims, sa, sb, op); break;
  }
}
template <typename S, typename F>
__device__ __forceinline__ void lazynd_bcast_dispatch(const S* __restrict__ lhs, const S* __restrict__ rhs, S* __restrict__ out,
                                                      long long n, int ndim, const lazynd_div64* dims,
                                                      const long long* sa, const long long* sb, F op) {
  // rare (more than 2**31 elements, or reversed views): one compact loop, each 64-bit division being long
  lazynd_bcast_loop<0, 1>(lhs, rhs, out, n, ndim, dims, sa, sb, op);
}

// -- flat maps over contiguous arrays, as the broadcast loop: UNROLL elements per thread and step, a
// block's width apart, every load of a step issued before the first result is computed, with 32-bit
// indices below 2**31 elements (the launch gives each thread UNROLL of them: flat_launch_config);
// larger arrays take one element a step with 64-bit indices
template <int U, typename I, typename S, typename F>
__device__ __forceinline__ void lazynd_map1_loop(const S* __restrict__ in, S* __restrict__ out, I n, F op) {
  const I width = (I)blockDim.x;
  const I step = (I)gridDim.x * width * U;
  for (I base = (I)blockIdx.x * width * U + threadIdx.x; base < n; base += step) {
    S x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * width;
      if (i < n) x[u] = in[i];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * width;
      if (i < n) out[i] = op(x[u]);
    }
  }
}
template <typename S, typename F>
__device__ __forceinline__ void lazynd_map1(const S* __restrict__ in, S* __restrict__ out, long long n, F op) {
  if (n < 0x80000000LL) lazynd_map1_loop<LAZYND_UNROLL>(in, out, (unsigned int)n, op);
  else lazynd_map1_loop<1>(in, out, n, op);
}
template <typename S, typename F>
__device__ __forceinline__ void lazynd_map2(const S* __restrict__ lhs, const S* __restrict__ rhs, S* __restrict__ out,
                                            long long n, F op) {
  // the broadcast loop with the offsets of contiguous inputs (NDIM -1): no dimensions to divide by
  if (n < 0x80000000LL)
    lazynd_bcast_loop<-1, LAZYND_UNROLL, unsigned int, lazynd_div32>(lhs, rhs, out, (unsigned int)n, 0, nullptr, nullptr, nullptr, op);
  else
    lazynd_bcast_loop<-1, 1, long long, lazynd_div64>(lhs, rhs, out, n, 0, nullptr, nullptr, nullptr, op);
}
