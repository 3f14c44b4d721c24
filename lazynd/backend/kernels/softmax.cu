// Softmax and log-softmax along one axis of an array viewed as (outer, n, inner).
// One thread per (outer, inner) line; three passes over the line (max, sum, write)
// keep it numerically stable: exp(x - max) never overflows.

template <typename T>
__device__ void lazynd_softmax_line(const T* __restrict__ x, T* __restrict__ y, long long outer, long long n,
                                    long long inner, T inv_temp, int log_mode) {
  long long lines = outer * inner;
  for (long long line = blockIdx.x * (long long)blockDim.x + threadIdx.x; line < lines;
       line += (long long)gridDim.x * blockDim.x) {
    long long o = line / inner, i = line % inner;
    const T* xl = x + o * n * inner + i;
    T* yl = y + o * n * inner + i;
    T mx = xl[0] * inv_temp;
    for (long long k = 1; k < n; ++k) {
      T v = xl[k * inner] * inv_temp;
      mx = v > mx ? v : mx;
    }
    T sum = 0;
    for (long long k = 0; k < n; ++k) sum += exp(xl[k * inner] * inv_temp - mx);
    if (log_mode) {
      T lse = log(sum) + mx;
      for (long long k = 0; k < n; ++k) yl[k * inner] = xl[k * inner] * inv_temp - lse;
    } else {
      T inv = T(1) / sum;
      for (long long k = 0; k < n; ++k) yl[k * inner] = exp(xl[k * inner] * inv_temp - mx) * inv;
    }
  }
}

// Gradient: softmax  dx = y * (dy - sum(dy * y)) / T
//           log      dx = (dy - exp(y) * sum(dy)) / T
template <typename T>
__device__ void lazynd_softmax_grad_line(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
                                         long long outer, long long n, long long inner, T inv_temp, int log_mode) {
  long long lines = outer * inner;
  for (long long line = blockIdx.x * (long long)blockDim.x + threadIdx.x; line < lines;
       line += (long long)gridDim.x * blockDim.x) {
    long long o = line / inner, i = line % inner;
    long long base = o * n * inner + i;
    T acc = 0;
    if (log_mode) {
      for (long long k = 0; k < n; ++k) acc += dy[base + k * inner];
      for (long long k = 0; k < n; ++k) {
        long long j = base + k * inner;
        dx[j] = (dy[j] - exp(y[j]) * acc) * inv_temp;
      }
    } else {
      for (long long k = 0; k < n; ++k) acc += dy[base + k * inner] * y[base + k * inner];
      for (long long k = 0; k < n; ++k) {
        long long j = base + k * inner;
        dx[j] = y[j] * (dy[j] - acc) * inv_temp;
      }
    }
  }
}

extern "C" __global__ void lazynd_softmax_float32(const float* x, float* y, long long outer, long long n,
                                                  long long inner, float inv_temp, int log_mode) {
  lazynd_softmax_line<float>(x, y, outer, n, inner, inv_temp, log_mode);
}
extern "C" __global__ void lazynd_softmax_float64(const double* x, double* y, long long outer, long long n,
                                                  long long inner, double inv_temp, int log_mode) {
  lazynd_softmax_line<double>(x, y, outer, n, inner, inv_temp, log_mode);
}
extern "C" __global__ void lazynd_softmax_grad_float32(const float* dy, const float* y, float* dx, long long outer,
                                                       long long n, long long inner, float inv_temp, int log_mode) {
  lazynd_softmax_grad_line<float>(dy, y, dx, outer, n, inner, inv_temp, log_mode);
}
extern "C" __global__ void lazynd_softmax_grad_float64(const double* dy, const double* y, double* dx, long long outer,
                                                       long long n, long long inner, double inv_temp, int log_mode) {
  lazynd_softmax_grad_line<double>(dy, y, dx, outer, n, inner, inv_temp, log_mode);
}
