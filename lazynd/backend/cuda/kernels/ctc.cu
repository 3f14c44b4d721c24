// CTCLoss on the GPU: the loss of each sequence and its gradient with respect to the activations,
// one block per sequence (lazynd/ops/ctc_loss_gpu.py launches it after the log-softmax of the
// activations over the alphabet).
//
// Why a block per sequence: the forward (alpha) and backward (beta) recursions are chains over time,
// each step reading the step before at positions s, s-1 and s-2 (s+1, s+2) of the extended label
// (blanks around and between the labels: 2L+1 positions).  The block's threads share out those
// positions, a barrier between steps; the host never waits, and an executor's pass holding the
// operator can be captured into a CUDA graph.  Every alpha row is kept (global scratch: rows are as
// long as the labels allow, so static shared memory could not hold them) for the gradient, taken
// while beta runs back: two rows of beta suffice.
//
// The formulas are the host path's (lazynd/ops/ctc_loss.py), in log space: a log-sum-exp shifted by
// its largest term unless that is infinite or NaN (then unshifted, so -inf stays -inf and NaN stays
// NaN); the gradient is softmax minus the occupancy exp(alpha + beta - log likelihood) summed per
// class.  Where no alignment has any probability (log likelihood -inf) the loss is inf and the
// occupancy 0, so the gradient is the softmax (MXNet 1.9.1's values).  A class's occupancy is summed
// by one thread (the one of its first position in the label; one more for the blank) in a fixed
// order: no atomics, so a graph's replay gives its eager run's values bit for bit.  Steps past a
// sequence's length get a zero gradient.  A is the arithmetic type (float for float16 and float32,
// double for float64); S the stored type of the outputs (float16 as 16 bits).

__device__ __forceinline__ float lazynd_ctc_exp(float v) { return expf(v); }
__device__ __forceinline__ double lazynd_ctc_exp(double v) { return exp(v); }
__device__ __forceinline__ float lazynd_ctc_log(float v) { return logf(v); }
__device__ __forceinline__ double lazynd_ctc_log(double v) { return log(v); }
__device__ __forceinline__ void lazynd_ctc_store(unsigned short* p, float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  *p = h;
}
__device__ __forceinline__ void lazynd_ctc_store(float* p, float f) { *p = f; }
__device__ __forceinline__ void lazynd_ctc_store(double* p, double f) { *p = f; }

template <typename A> __device__ __forceinline__ A lazynd_ctc_logsumexp(A a, A b, A c) {
  A top = a > b ? a : b;
  top = top > c ? top : c;
  const A shift = (top - top) == (A)0 ? top : (A)0;  // finite: shift by it; else the terms decide
  return shift + lazynd_ctc_log(lazynd_ctc_exp(a - shift) + lazynd_ctc_exp(b - shift) + lazynd_ctc_exp(c - shift));
}

// The extended label of one sequence: its class at position s, and whether s may be reached from s-2
// (a label that differs from the label before it).
struct LazyndCtcLabel {
  const int* label;
  int blank;
  __device__ __forceinline__ int at(int s) const { return (s & 1) ? label[s >> 1] : blank; }
  __device__ __forceinline__ bool skips_to(int s) const { return (s & 1) && s >= 3 && label[s >> 1] != label[(s >> 1) - 1]; }
};

template <typename S, typename A>
__device__ void lazynd_ctc(const A* __restrict__ log_prob, const int* __restrict__ classes,
                           const int* __restrict__ label_lengths, const int* __restrict__ data_lengths, int steps,
                           int batch, int alphabet, int width, int blank, A* __restrict__ alpha, A* __restrict__ beta,
                           A* __restrict__ occupancy, S* __restrict__ loss, S* __restrict__ gradient) {
  __shared__ A log_likelihood;
  const A neg_inf = -(A)(1.0 / 0.0);
  const int b = blockIdx.x, tid = threadIdx.x, threads = blockDim.x;
  const LazyndCtcLabel ext = {classes + (long long)b * width, blank};
  const int length = label_lengths[b], used = 2 * length + 1, last = data_lengths[b] - 1;
  const int positions = 2 * width + 1;
  const long long step_stride = (long long)batch * alphabet;  // from one time step to the next
  const A* lp = log_prob + (long long)b * alphabet;           // step t at lp + t * step_stride
  S* grad = gradient + (long long)b * alphabet;
  A* al = alpha + (long long)b * steps * positions;  // row t at al + t * positions
  A* be = beta + (long long)b * 2 * positions;       // two rows, used in turn
  A* occ = occupancy + (long long)b * alphabet;      // per class, zero but for the label's and the blank

  for (int k = tid; k < alphabet; k += threads) occ[k] = (A)0;
  for (int s = tid; s < positions; s += threads) {
    al[s] = s == 0 ? lp[blank] : (s == 1 && used > 1 ? lp[ext.at(1)] : neg_inf);
  }
  __syncthreads();
  for (int t = 1; t <= last; ++t) {
    const A* prev = al + (long long)(t - 1) * positions;
    A* row = al + (long long)t * positions;
    const A* lpt = lp + t * step_stride;
    for (int s = tid; s < positions; s += threads) {
      if (s >= used) {
        row[s] = neg_inf;
        continue;
      }
      const A from_before = s >= 1 ? prev[s - 1] : neg_inf;
      const A from_skip = ext.skips_to(s) ? prev[s - 2] : neg_inf;
      row[s] = lazynd_ctc_logsumexp(prev[s], from_before, from_skip) + lpt[ext.at(s)];
    }
    __syncthreads();
  }
  if (tid == 0) {
    const A* final_row = al + (long long)last * positions;
    const A ll = lazynd_ctc_logsumexp(final_row[used - 1], used > 1 ? final_row[used - 2] : neg_inf, neg_inf);
    log_likelihood = ll;
    lazynd_ctc_store(loss + b, -ll);
  }
  __syncthreads();
  const A ll = log_likelihood;

  for (int t = last, turn = 0; t >= 0; --t, turn ^= 1) {
    A* now = be + turn * positions;
    const A* ahead = be + (turn ^ 1) * positions;  // beta at t + 1
    const A* lp_ahead = lp + (t + 1) * step_stride;
    for (int s = tid; s < positions; s += threads) {
      if (t == last) {
        now[s] = (s == used - 1 || s == used - 2) ? (A)0 : neg_inf;
      } else if (s >= used) {
        now[s] = neg_inf;
      } else {
        const A stay = ahead[s] + lp_ahead[ext.at(s)];
        const A step = s + 1 < used ? ahead[s + 1] + lp_ahead[ext.at(s + 1)] : neg_inf;
        const A skip = s + 2 < used && ext.skips_to(s + 2) ? ahead[s + 2] + lp_ahead[ext.at(s + 2)] : neg_inf;
        now[s] = lazynd_ctc_logsumexp(stay, step, skip);
      }
    }
    __syncthreads();
    const A* al_t = al + (long long)t * positions;
    if (ll != neg_inf) {
      // item i < length: the label's class at i, by the thread of its first position; i == length: the blank
      for (int i = tid; i <= length; i += threads) {
        const int cls = i < length ? ext.label[i] : blank;
        bool first = true;
        for (int j = 0; j < i && i < length; ++j) first = first && ext.label[j] != cls;
        if (!first) continue;
        A sum = (A)0;
        for (int s = i < length ? 2 * i + 1 : 0; s < used; s += 2) {
          if (i == length || ext.label[s >> 1] == cls) sum += lazynd_ctc_exp(al_t[s] + now[s] - ll);
        }
        occ[cls] = sum;
      }
    }
    __syncthreads();
    const A* lpt = lp + t * step_stride;
    for (int k = tid; k < alphabet; k += threads) {
      lazynd_ctc_store(grad + t * step_stride + k, lazynd_ctc_exp(lpt[k]) - occ[k]);
    }
    __syncthreads();  // occ and this beta row are rewritten at the next step
  }
  for (long long t = last + 1; t < steps; ++t) {
    for (int k = tid; k < alphabet; k += threads) lazynd_ctc_store(grad + t * step_stride + k, (A)0);
  }
}

#define LAZYND_CTC_KERNEL(S, A, SUFFIX)                                                                               \
  extern "C" __global__ void lazynd_ctc_##SUFFIX(const A* __restrict__ log_prob, const int* __restrict__ classes,     \
                                                 const int* __restrict__ label_lengths,                              \
                                                 const int* __restrict__ data_lengths, int steps, int batch,         \
                                                 int alphabet, int width, int blank, A* __restrict__ alpha,          \
                                                 A* __restrict__ beta, A* __restrict__ occupancy,                    \
                                                 S* __restrict__ loss, S* __restrict__ gradient) {                   \
    lazynd_ctc<S, A>(log_prob, classes, label_lengths, data_lengths, steps, batch, alphabet, width, blank, alpha,     \
                     beta, occupancy, loss, gradient);                                                                \
  }

LAZYND_CTC_KERNEL(float, float, float32)
LAZYND_CTC_KERNEL(double, double, float64)
LAZYND_CTC_KERNEL(unsigned short, float, float16)
