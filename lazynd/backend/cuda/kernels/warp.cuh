// Reductions within a warp, for the kernels that combine one value a thread over a row
// (softmax.cu, reduce.cu); a source takes it in with `#include "warp.cuh"` (sources.load_file
// pastes it in).  Warp shuffles exist only on a GPU: LAZYND_WARP_SHUFFLE is defined when NVRTC
// compiles, and the CPU emulator's builds keep their shared-memory trees.
#ifdef __CUDACC_RTC__
#define LAZYND_WARP_SHUFFLE 1
// v combined by `op(a, b)` over each aligned group of `width` lanes (a power of two, at most 32) by a
// butterfly of shuffles; every lane of the warp must call it, and each lane ends with its group's
// value (both lanes of a pair combine the same two numbers at every step, so all agree exactly).
template <typename T, typename Op>
__device__ __forceinline__ T lazynd_warp_combine(T v, int width, Op op) {
  for (int offset = width / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
#endif
