// Range checks that kernels make on the device, reported to the host at its next wait
// (lazynd/backend/cuda/checks.py).  A value outside [low, high) ([low, high] when `inclusive`) -- or NaN -- is counted in
// report[0]; the first thread to count one (atomicAdd returned 0) writes which check it was,
// the value and its position into report[1..3].  Nothing is read back here: the host reads the
// report when it waits for the device anyway, so a check costs one launch and no synchronisation,
// and a pass holding checks can still be captured into a CUDA graph.

template <typename T>
__device__ void lazynd_check_range(const T* values, long long n, double low, double high, int inclusive,
                                   double check, double* report) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const double v = (double)values[i];
    if (!(v >= low && (v < high || (inclusive && v == high)))) {
      if (atomicAdd(&report[0], 1.0) == 0.0) {
        report[1] = check;
        report[2] = v;
        report[3] = (double)i;
      }
    }
  }
}

#define LAZYND_CHECK_RANGE(T, SUFFIX)                                                                                \
extern "C" __global__ void lazynd_check_range_##SUFFIX(const T* values, long long n, double low, double high,        \
                                                       int inclusive, double check, double* report) {                 \
  lazynd_check_range<T>(values, n, low, high, inclusive, check, report);                                              \
}
LAZYND_CHECK_RANGE(float, float32)
LAZYND_CHECK_RANGE(double, float64)
LAZYND_CHECK_RANGE(int, int32)
LAZYND_CHECK_RANGE(long long, int64)
