// Batch normalisation over data viewed as (outer, C, inner), contiguous.  The reductions run one block of
// 256 threads per channel (launch with grid = C, block = 256); the elementwise kernels are grid-stride loops.
// Variance is two-pass (mean first), which stays accurate when |mean| >> std.  The stats kernel gives the
// variance (the moving statistics follow it); the others take the inverse std 1 / sqrt(var + eps).

#define LAZYND_BN_REDUCE(T, buf)                                                                              \
  __syncthreads();                                                                                            \
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {                                                              \
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];                                            \
    __syncthreads();                                                                                          \
  }

#define LAZYND_BATCHNORM(T, SUFFIX)                                                                    \
extern "C" __global__ void lazynd_bn_stats_##SUFFIX(const T* __restrict__ x, T* __restrict__ mean,          \
                                                    T* __restrict__ var, long long outer, int C, long long inner) { \
  __shared__ T buf[256];                                                                                      \
  int c = blockIdx.x;                                                                                         \
  long long m = outer * inner;                                                                                \
  T acc = 0;                                                                                                  \
  for (long long i = threadIdx.x; i < m; i += blockDim.x)                                                     \
    acc += x[((i / inner) * C + c) * inner + i % inner];                                                      \
  buf[threadIdx.x] = acc;                                                                                     \
  LAZYND_BN_REDUCE(T, buf)                                                                                    \
  T mu = buf[0] / (T)m;                                                                                       \
  __syncthreads();                                                                                            \
  acc = 0;                                                                                                    \
  for (long long i = threadIdx.x; i < m; i += blockDim.x) {                                                   \
    T d = x[((i / inner) * C + c) * inner + i % inner] - mu;                                                  \
    acc += d * d;                                                                                             \
  }                                                                                                           \
  buf[threadIdx.x] = acc;                                                                                     \
  LAZYND_BN_REDUCE(T, buf)                                                                                    \
  if (threadIdx.x == 0) { mean[c] = mu; var[c] = buf[0] / (T)m; }                                             \
}                                                                                                             \
extern "C" __global__ void lazynd_bn_fwd_##SUFFIX(const T* __restrict__ x, T* __restrict__ y,                \
    const T* __restrict__ mean, const T* __restrict__ invstd, const T* __restrict__ gamma,                    \
    const T* __restrict__ beta, int fix_gamma, long long total, int C, long long inner) {                     \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                             \
       i += (long long)gridDim.x * blockDim.x) {                                                              \
    int c = (i / inner) % C;                                                                                  \
    T g = fix_gamma ? (T)1 : gamma[c];                                                                        \
    y[i] = (x[i] - mean[c]) * invstd[c] * g + beta[c];                                                        \
  }                                                                                                           \
}                                                                                                             \
extern "C" __global__ void lazynd_bn_bwd_reduce_##SUFFIX(const T* __restrict__ dy, const T* __restrict__ x,  \
    const T* __restrict__ mean, const T* __restrict__ invstd, T* __restrict__ sum_dy,                         \
    T* __restrict__ sum_dy_xhat, long long outer, int C, long long inner) {                                   \
  __shared__ T buf[256];                                                                                      \
  int c = blockIdx.x;                                                                                         \
  long long m = outer * inner;                                                                                \
  T inv = invstd[c], mu = mean[c];                                                                            \
  T a = 0, b = 0;                                                                                             \
  for (long long i = threadIdx.x; i < m; i += blockDim.x) {                                                   \
    long long j = ((i / inner) * C + c) * inner + i % inner;                                                  \
    a += dy[j];                                                                                               \
    b += dy[j] * (x[j] - mu) * inv;                                                                           \
  }                                                                                                           \
  buf[threadIdx.x] = a;                                                                                       \
  LAZYND_BN_REDUCE(T, buf)                                                                                    \
  if (threadIdx.x == 0) sum_dy[c] = buf[0];                                                                   \
  __syncthreads();                                                                                            \
  buf[threadIdx.x] = b;                                                                                       \
  LAZYND_BN_REDUCE(T, buf)                                                                                    \
  if (threadIdx.x == 0) sum_dy_xhat[c] = buf[0];                                                              \
}                                                                                                             \
extern "C" __global__ void lazynd_bn_bwd_##SUFFIX(const T* __restrict__ dy, const T* __restrict__ x,         \
    const T* __restrict__ mean, const T* __restrict__ invstd, const T* __restrict__ gamma,                    \
    const T* __restrict__ sum_dy, const T* __restrict__ sum_dy_xhat, T* __restrict__ dx,                      \
    int fix_gamma, int global_stats, long long m, long long total, int C, long long inner) {                  \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;                             \
       i += (long long)gridDim.x * blockDim.x) {                                                              \
    int c = (i / inner) % C;                                                                                  \
    T g = fix_gamma ? (T)1 : gamma[c];                                                                        \
    T inv = invstd[c];                                                                                        \
    if (global_stats) { dx[i] = dy[i] * g * inv; continue; }                                                  \
    T xhat = (x[i] - mean[c]) * inv;                                                                          \
    dx[i] = g * inv * (dy[i] - sum_dy[c] / (T)m - xhat * sum_dy_xhat[c] / (T)m);                              \
  }                                                                                                           \
}

LAZYND_BATCHNORM(float, float32)
LAZYND_BATCHNORM(double, float64)
