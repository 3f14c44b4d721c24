// Softmax and log-softmax along one axis of an array viewed as (outer, n, inner).
// Three passes over each line (max, sum, write) keep it numerically stable: exp(x - max)
// never overflows.  The last axis (inner == 1) runs one block per row: the threads read the
// row together (coalesced) and combine their partial max and sum in shared memory.  Other axes
// run one thread per (outer, inner) line: neighbouring threads read neighbouring addresses.

#define LAZYND_ROW_THREADS 256

// the block's combined value of v (op 0: max, 1: sum); every thread gets it
template <typename T>
__device__ T lazynd_block_combine(T v, T* shared, int op) {
  int t = threadIdx.x;
  shared[t] = v;
  __syncthreads();
  for (int half = LAZYND_ROW_THREADS / 2; half > 0; half >>= 1) {
    if (t < half) {
      T other = shared[t + half];
      shared[t] = op == 0 ? ((other > shared[t] || other != other) ? other : shared[t]) : shared[t] + other;
    }
    __syncthreads();
  }
  T result = shared[0];
  __syncthreads();
  return result;
}

template <typename T>
__device__ void lazynd_softmax_row(const T* __restrict__ x, T* __restrict__ y, long long rows, long long n,
                                   T inv_temp, int log_mode, T* shared) {
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    T mx = -(T)(1.0 / 0.0);
    for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS) {
      T v = xr[k] * inv_temp;
      mx = (v > mx || v != v) ? v : mx;
    }
    mx = lazynd_block_combine<T>(mx, shared, 0);
    T sum = 0;
    for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS) sum += exp(xr[k] * inv_temp - mx);
    sum = lazynd_block_combine<T>(sum, shared, 1);
    if (log_mode) {
      T lse = log(sum) + mx;
      for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS) yr[k] = xr[k] * inv_temp - lse;
    } else {
      T inv = T(1) / sum;
      for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS) yr[k] = exp(xr[k] * inv_temp - mx) * inv;
    }
  }
}

template <typename T>
__device__ void lazynd_softmax_grad_row(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
                                        long long rows, long long n, T inv_temp, int log_mode, T* shared) {
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    long long base = row * n;
    T acc = 0;
    for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS)
      acc += log_mode ? dy[base + k] : dy[base + k] * y[base + k];
    acc = lazynd_block_combine<T>(acc, shared, 1);
    for (long long k = threadIdx.x; k < n; k += LAZYND_ROW_THREADS) {
      long long j = base + k;
      dx[j] = log_mode ? (dy[j] - exp(y[j]) * acc) * inv_temp : y[j] * (dy[j] - acc) * inv_temp;
    }
  }
}

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

extern "C" __global__ void lazynd_softmax_rows_float32(const float* x, float* y, long long rows, long long n,
                                                       float inv_temp, int log_mode) {
  __shared__ float shared[LAZYND_ROW_THREADS];
  lazynd_softmax_row<float>(x, y, rows, n, inv_temp, log_mode, shared);
}
extern "C" __global__ void lazynd_softmax_rows_float64(const double* x, double* y, long long rows, long long n,
                                                       double inv_temp, int log_mode) {
  __shared__ double shared[LAZYND_ROW_THREADS];
  lazynd_softmax_row<double>(x, y, rows, n, inv_temp, log_mode, shared);
}
extern "C" __global__ void lazynd_softmax_grad_rows_float32(const float* dy, const float* y, float* dx, long long rows,
                                                            long long n, float inv_temp, int log_mode) {
  __shared__ float shared[LAZYND_ROW_THREADS];
  lazynd_softmax_grad_row<float>(dy, y, dx, rows, n, inv_temp, log_mode, shared);
}
extern "C" __global__ void lazynd_softmax_grad_rows_float64(const double* dy, const double* y, double* dx, long long rows,
                                                            long long n, double inv_temp, int log_mode) {
  __shared__ double shared[LAZYND_ROW_THREADS];
  lazynd_softmax_grad_row<double>(dy, y, dx, rows, n, inv_temp, log_mode, shared);
}
