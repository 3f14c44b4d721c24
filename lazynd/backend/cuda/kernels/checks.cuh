// What a kernel needs to make one of the device checks (lazynd/backend/cuda/checks.py) itself: the
// range test and the writing of a finding into the device's report, shared by checks.cu's kernel and
// by kernels that already read the values they check (softmax.cu's SoftmaxOutput gradient), so a
// finding reads the same on the host whichever kernel made it, and a fused check costs no launch.
//
// The report is double[4]: report[0] counts the values out of range; the first thread to count one
// (atomicAdd returned 0) writes which check it was (its number, given by the host), the value and
// its position into report[1..3].  Nothing is read back here: the host reads the report when it
// waits for the device anyway, so a pass holding checks can still be captured into a CUDA graph.

// Whether v lies in [low, high) ([low, high] when `inclusive`); NaN never does.
__device__ __forceinline__ bool lazynd_in_range(double v, double low, double high, int inclusive) {
  return v >= low && (v < high || (inclusive && v == high));
}

// Count one value out of range; the first counted is described in the report.
__device__ __forceinline__ void lazynd_report_out_of_range(double* report, double check, double value,
                                                           long long position) {
  if (atomicAdd(&report[0], 1.0) == 0.0) {
    report[1] = check;
    report[2] = value;
    report[3] = (double)position;
  }
}
