// Range checks launched as kernels of their own, reported to the host at its next wait
// (lazynd/backend/cuda/checks.py).  A value outside [low, high) ([low, high] when `inclusive`) -- or
// NaN -- is counted in the report, as checks.cuh describes; a check costs one launch and no
// synchronisation.

#include "checks.cuh"

template <typename T>
__device__ void lazynd_check_range(const T* values, long long n, double low, double high, int inclusive,
                                   double check, double* report) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const double v = (double)values[i];
    if (!lazynd_in_range(v, low, high, inclusive)) lazynd_report_out_of_range(report, check, v, i);
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
