// im2col / col2im for 1-D, 2-D and 3-D convolution (smaller ranks pass size-1 leading spatial dims).
// col layout: (N, C, K0, K1, K2, O0, O1, O2), contiguous; x layout: (N, C, D0, D1, D2), contiguous.
// col2im accumulates with atomicAdd (sm_60+ has double atomicAdd) so every column entry is handled by one thread.

#define LAZYND_IM2COL(T, SUFFIX)                                                                              \
extern "C" __global__ void lazynd_im2col_##SUFFIX(                                                             \
    const T* __restrict__ x, T* __restrict__ col, long long total, int C,                                      \
    int D0, int D1, int D2, int K0, int K1, int K2, int O0, int O1, int O2,                                    \
    int s0, int s1, int s2, int d0, int d1, int d2, int p0, int p1, int p2) {                                  \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                              \
       i += (long long)gridDim.x * blockDim.x) {                                                               \
    long long r = i;                                                                                           \
    int o2 = r % O2; r /= O2; int o1 = r % O1; r /= O1; int o0 = r % O0; r /= O0;                              \
    int k2 = r % K2; r /= K2; int k1 = r % K1; r /= K1; int k0 = r % K0; r /= K0;                              \
    int c = r % C; long long n = r / C;                                                                        \
    int x0 = o0 * s0 - p0 + k0 * d0, x1 = o1 * s1 - p1 + k1 * d1, x2 = o2 * s2 - p2 + k2 * d2;                 \
    T v = (T)0;                                                                                                \
    if (x0 >= 0 && x0 < D0 && x1 >= 0 && x1 < D1 && x2 >= 0 && x2 < D2)                                        \
      v = x[(((n * C + c) * D0 + x0) * (long long)D1 + x1) * D2 + x2];                                         \
    col[i] = v;                                                                                                \
  }                                                                                                            \
}                                                                                                              \
extern "C" __global__ void lazynd_col2im_##SUFFIX(                                                             \
    const T* __restrict__ col, T* __restrict__ x, long long total, int C,                                      \
    int D0, int D1, int D2, int K0, int K1, int K2, int O0, int O1, int O2,                                    \
    int s0, int s1, int s2, int d0, int d1, int d2, int p0, int p1, int p2) {                                  \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                              \
       i += (long long)gridDim.x * blockDim.x) {                                                               \
    long long r = i;                                                                                           \
    int o2 = r % O2; r /= O2; int o1 = r % O1; r /= O1; int o0 = r % O0; r /= O0;                              \
    int k2 = r % K2; r /= K2; int k1 = r % K1; r /= K1; int k0 = r % K0; r /= K0;                              \
    int c = r % C; long long n = r / C;                                                                        \
    int x0 = o0 * s0 - p0 + k0 * d0, x1 = o1 * s1 - p1 + k1 * d1, x2 = o2 * s2 - p2 + k2 * d2;                 \
    if (x0 >= 0 && x0 < D0 && x1 >= 0 && x1 < D1 && x2 >= 0 && x2 < D2)                                        \
      atomicAdd(&x[(((n * C + c) * D0 + x0) * (long long)D1 + x1) * D2 + x2], col[i]);                         \
  }                                                                                                            \
}

LAZYND_IM2COL(float, float32)
LAZYND_IM2COL(double, float64)
