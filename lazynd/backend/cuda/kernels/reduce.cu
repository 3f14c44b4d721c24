// Row reductions over the last axis of a C-contiguous array (and whole-array reductions as rows of
// pieces, then one row of their results): one block per row (grid-stride over rows),
// a strided pass per thread, then warp shuffles (on a GPU; a shared-memory tree in the CPU
// emulator). float16 is stored as 16 bits and summed in float.
// Launch with a power-of-two block of at most LAZYND_REDUCE_THREADS threads.

#include "warp.cuh"

#define LAZYND_REDUCE_THREADS 256

__device__ __forceinline__ float lazynd_reduce_load(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float lazynd_reduce_load(float v) { return v; }
__device__ __forceinline__ double lazynd_reduce_load(double v) { return v; }
__device__ __forceinline__ void lazynd_reduce_store(unsigned short* p, float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); *p = h; }
__device__ __forceinline__ void lazynd_reduce_store(float* p, float f) { *p = f; }
__device__ __forceinline__ void lazynd_reduce_store(double* p, double f) { *p = f; }

// OP: 0 = sum, 1 = max, 2 = min; max/min propagate NaN as NumPy does
template <int OP, typename A> __device__ __forceinline__ A lazynd_reduce_combine(A a, A b) {
  if (OP == 0) return a + b;
  if (a != a) return a;
  if (b != b) return b;
  if (OP == 1) return a > b ? a : b;
  return a < b ? a : b;
}

// Row r covers elements [r * cols, min((r + 1) * cols, total)) of ``in``: rows of a C-contiguous array
// when total = rows * cols, or equal pieces of a whole array (its last piece shorter) for a full reduction
// in two launches.  Each thread keeps four accumulators, so four coalesced loads are in flight at once.
template <int OP, typename A> struct LazyndReduceCombine {
  __device__ A operator()(A a, A b) const { return lazynd_reduce_combine<OP, A>(a, b); }
};

template <int OP, typename S, typename A>
__device__ void lazynd_reduce_rows(const S* __restrict__ in, S* __restrict__ out, long long rows, long long cols,
                                   long long total, A scale) {
  __shared__ A partial[LAZYND_REDUCE_THREADS];
  const long long step = blockDim.x;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const long long begin = r * cols;
    const long long length = total - begin < cols ? total - begin : cols;
    const S* row = in + begin;
    const A first = OP == 0 ? (A)0 : lazynd_reduce_load(row[0]);
    A acc0 = first, acc1 = first, acc2 = first, acc3 = first;
    long long c = threadIdx.x;
    for (; c + 3 * step < length; c += 4 * step) {
      acc0 = lazynd_reduce_combine<OP, A>(acc0, lazynd_reduce_load(row[c]));
      acc1 = lazynd_reduce_combine<OP, A>(acc1, lazynd_reduce_load(row[c + step]));
      acc2 = lazynd_reduce_combine<OP, A>(acc2, lazynd_reduce_load(row[c + 2 * step]));
      acc3 = lazynd_reduce_combine<OP, A>(acc3, lazynd_reduce_load(row[c + 3 * step]));
    }
    for (; c < length; c += step) acc0 = lazynd_reduce_combine<OP, A>(acc0, lazynd_reduce_load(row[c]));
    A v = lazynd_reduce_combine<OP, A>(lazynd_reduce_combine<OP, A>(acc0, acc1), lazynd_reduce_combine<OP, A>(acc2, acc3));
#ifdef LAZYND_WARP_SHUFFLE
    // each warp's value by shuffles, then the warps' (blockDim.x / 32 of them) by the first thread
    v = lazynd_warp_combine(v, 32, LazyndReduceCombine<OP, A>());
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (unsigned int w = 1; w < blockDim.x / 32; ++w) v = lazynd_reduce_combine<OP, A>(v, partial[w]);
      lazynd_reduce_store(out + r, OP == 0 ? v * scale : v);
    }
#else
    partial[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] = lazynd_reduce_combine<OP, A>(partial[threadIdx.x], partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) lazynd_reduce_store(out + r, OP == 0 ? partial[0] * scale : partial[0]);
#endif
    __syncthreads();
  }
}

#define LAZYND_REDUCE_KERNEL(NAME, OP, S, A)                                                                   \
  extern "C" __global__ void lazynd_reduce_last_##NAME(const S* __restrict__ in, S* __restrict__ out,        \
                                                       long long rows, long long cols, long long total,       \
                                                       A scale) {                                             \
    lazynd_reduce_rows<OP, S, A>(in, out, rows, cols, total, scale);                                          \
  }

LAZYND_REDUCE_KERNEL(sum_float32, 0, float, float)
LAZYND_REDUCE_KERNEL(sum_float64, 0, double, double)
LAZYND_REDUCE_KERNEL(sum_float16, 0, unsigned short, float)
LAZYND_REDUCE_KERNEL(max_float32, 1, float, float)
LAZYND_REDUCE_KERNEL(max_float64, 1, double, double)
LAZYND_REDUCE_KERNEL(max_float16, 1, unsigned short, float)
LAZYND_REDUCE_KERNEL(min_float32, 2, float, float)
LAZYND_REDUCE_KERNEL(min_float64, 2, double, double)
LAZYND_REDUCE_KERNEL(min_float16, 2, unsigned short, float)
