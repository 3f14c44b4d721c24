// Activations and their gradients, one grid-stride kernel per dtype; mode selects the function:
// 0 relu, 1 sigmoid, 2 tanh, 3 softrelu, 4 softsign.  Every gradient is written in terms of the output y,
// so the backward pass can overwrite y in place.

#define LAZYND_ACTIVATION(T, SUFFIX, EXP, LOG1P, TANH, FABS)                                                  \
extern "C" __global__ void lazynd_activation_fwd_##SUFFIX(const T* __restrict__ x, T* __restrict__ y,         \
                                                         long long n, int mode) {                             \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                                 \
       i += (long long)gridDim.x * blockDim.x) {                                                              \
    T v = x[i];                                                                                               \
    T r;                                                                                                      \
    if (mode == 0) r = (v > (T)0 || v != v) ? v : (T)0; /* NaN stays NaN, as np.maximum */                \
    else if (mode == 1) r = (T)1 / ((T)1 + EXP(-v));                                                          \
    else if (mode == 2) r = TANH(v);                                                                          \
    else if (mode == 3) r = v > (T)20 ? v : LOG1P(EXP(v));                                                    \
    else r = v / ((T)1 + FABS(v));                                                                            \
    y[i] = r;                                                                                                 \
  }                                                                                                           \
}                                                                                                             \
extern "C" __global__ void lazynd_activation_bwd_##SUFFIX(const T* __restrict__ dy, const T* __restrict__ y, \
                                                         T* __restrict__ dx, long long n, int mode) {         \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                                 \
       i += (long long)gridDim.x * blockDim.x) {                                                              \
    T v = y[i];                                                                                               \
    T d;                                                                                                      \
    if (mode == 0) d = v > (T)0 ? (T)1 : (T)0;                                                                \
    else if (mode == 1) d = v * ((T)1 - v);                                                                   \
    else if (mode == 2) d = (T)1 - v * v;                                                                     \
    else if (mode == 3) d = (T)1 - EXP(-v);                                                                   \
    else { T a = (T)1 - FABS(v); d = a * a; }                                                                 \
    dx[i] = dy[i] * d;                                                                                        \
  }                                                                                                           \
}

LAZYND_ACTIVATION(float, float32, expf, log1pf, tanhf, fabsf)
LAZYND_ACTIVATION(double, float64, exp, log1p, tanh, fabs)
