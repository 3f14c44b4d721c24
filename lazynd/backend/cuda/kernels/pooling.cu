// Pooling over 1-D, 2-D or 3-D windows (smaller ranks pass size-1 leading spatial dims), layout (N, C, D0, D1, D2).
// mode: 0 = max, 1 = avg, 2 = sum.  Padding counts in the avg divisor, as MXNet does; windows are clipped to
// [-pad, D + pad) for the divisor and to [0, D) for the data.  The backward pass gives each output's gradient to
// the first maximum of its window (max) or spreads it over the window (avg/sum), with atomicAdd.

// The avg divisor: the window's size within [-pad, D + pad).  A window past that (the full convention's
// last one when the stride exceeds the kernel) holds nothing: it averages to 0, as on the CPU.
__device__ __forceinline__ int lazynd_pool_count(int b0, int e0, int b1, int e1, int b2, int e2) {
  const int n = max(e0 - b0, 0) * max(e1 - b1, 0) * max(e2 - b2, 0);
  return n > 0 ? n : 1;
}

#define LAZYND_POOL(T, SUFFIX, LOWEST)                                                                         \
extern "C" __global__ void lazynd_pool_fwd_##SUFFIX(                                                           \
    const T* __restrict__ x, T* __restrict__ y, long long total, int mode,                                     \
    int D0, int D1, int D2, int K0, int K1, int K2, int O0, int O1, int O2,                                    \
    int s0, int s1, int s2, int p0, int p1, int p2) {                                                          \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                              \
       i += (long long)gridDim.x * blockDim.x) {                                                               \
    long long r = i;                                                                                           \
    int o2 = r % O2; r /= O2; int o1 = r % O1; r /= O1; int o0 = r % O0; long long nc = r / O0;                \
    int b0 = o0 * s0 - p0, b1 = o1 * s1 - p1, b2 = o2 * s2 - p2;                                               \
    int e0 = min(b0 + K0, D0 + p0), e1 = min(b1 + K1, D1 + p1), e2 = min(b2 + K2, D2 + p2);                    \
    T count = (T)lazynd_pool_count(b0, e0, b1, e1, b2, e2);                                                    \
    T acc = mode == 0 ? (T)(LOWEST) : (T)0;                                                                    \
    const T* base = x + nc * D0 * (long long)D1 * D2;                                                          \
    for (int a = max(b0, 0); a < min(e0, D0); ++a)                                                             \
      for (int b = max(b1, 0); b < min(e1, D1); ++b)                                                           \
        for (int c = max(b2, 0); c < min(e2, D2); ++c) {                                                       \
          T v = base[((long long)a * D1 + b) * D2 + c];                                                        \
          if (mode == 0) { if (v > acc || v != v) acc = v; } else { acc += v; }                                               \
        }                                                                                                      \
    y[i] = mode == 1 ? acc / count : acc;                                                                      \
  }                                                                                                            \
}                                                                                                              \
extern "C" __global__ void lazynd_pool_bwd_##SUFFIX(                                                           \
    const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,            \
    long long total, int mode, int D0, int D1, int D2, int K0, int K1, int K2, int O0, int O1, int O2,         \
    int s0, int s1, int s2, int p0, int p1, int p2) {                                                          \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                              \
       i += (long long)gridDim.x * blockDim.x) {                                                               \
    long long r = i;                                                                                           \
    int o2 = r % O2; r /= O2; int o1 = r % O1; r /= O1; int o0 = r % O0; long long nc = r / O0;                \
    int b0 = o0 * s0 - p0, b1 = o1 * s1 - p1, b2 = o2 * s2 - p2;                                               \
    int e0 = min(b0 + K0, D0 + p0), e1 = min(b1 + K1, D1 + p1), e2 = min(b2 + K2, D2 + p2);                    \
    T g = dy[i];                                                                                               \
    if (mode == 1) g = g / (T)lazynd_pool_count(b0, e0, b1, e1, b2, e2);                                       \
    long long offset = nc * D0 * (long long)D1 * D2;                                                           \
    bool done = false;                                                                                         \
    for (int a = max(b0, 0); a < min(e0, D0) && !done; ++a)                                                    \
      for (int b = max(b1, 0); b < min(e1, D1) && !done; ++b)                                                  \
        for (int c = max(b2, 0); c < min(e2, D2) && !done; ++c) {                                              \
          long long j = offset + ((long long)a * D1 + b) * D2 + c;                                             \
          if (mode != 0) { atomicAdd(&dx[j], g); }                                                             \
          else if (x[j] == y[i]) { atomicAdd(&dx[j], g); done = true; }                                        \
        }                                                                                                      \
  }                                                                                                            \
}

// max starts at -inf, as NumPy's maximum over padding does; a NaN in a window wins (NumPy's rule)
LAZYND_POOL(float, float32, -(1.0f / 0.0f))
LAZYND_POOL(double, float64, -(1.0 / 0.0))
