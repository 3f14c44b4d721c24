// Softmax and log-softmax along one axis of an array viewed as (outer, n, inner).
// Every path is numerically stable: exp(x - max) never overflows.
//
// The last axis (inner == 1) has three paths, chosen on the host (ops/softmax_gpu.py):
// - rows of up to LAZYND_SOFTMAX_MAX_THREADS * LAZYND_SOFTMAX_MAX_PER_THREAD elements (the forward
//   pass: up to 8192) are held in registers: a group of `group` consecutive threads (a power of two)
//   owns a row, each thread K elements of it, so the row is read once, exp is taken once per element,
//   and a block of short rows serves several rows at a time.  The forward pass reads and writes V
//   consecutive elements at a time (16 bytes where the row's length and the arrays' addresses allow:
//   on an H200 a kernel of rows of 1024 ran at 73% of a copy's bandwidth an element at a time, 99%
//   with 16-byte accesses);
// - longer rows, where they are many, take a block each (the forward pass): one read for the row's
//   max and sum of exp(x - max) (an online rescaled sum), a second read to write it;
// - few long rows are cut into `chunks` pieces of `chunk` elements, one block per piece, so that they
//   still fill every multiprocessor: a first kernel gives each piece's max and sum of exp(x - max), a
//   second combines the row's pieces and writes the piece.
// Other axes run one thread per (outer, inner) line: neighbouring threads read neighbouring addresses.

#include "warp.cuh"
#include "checks.cuh"

#define LAZYND_SOFTMAX_THREADS 256       // the block of the piece kernels, and of the register path's short rows
#define LAZYND_SOFTMAX_MAX_THREADS 1024  // the register path's widest group (a block of its own)
#define LAZYND_SOFTMAX_MAX_PER_THREAD 16

// exp and log in the element's own precision (expf for float: no round trip through double)
__device__ __forceinline__ float lazynd_exp(float v) { return expf(v); }
__device__ __forceinline__ double lazynd_exp(double v) { return exp(v); }
__device__ __forceinline__ float lazynd_log(float v) { return logf(v); }
__device__ __forceinline__ double lazynd_log(double v) { return log(v); }

// V consecutive elements read or written as one access (16 bytes for 4 floats or 2 doubles)
template <typename T, int V>
struct alignas(sizeof(T) * V) LazyndVector {
  T v[V];
};

// NumPy's max: NaN wins
template <typename T> __device__ __forceinline__ T lazynd_nanmax(T a, T b) { return (b > a || b != b) ? b : a; }

template <typename T> __device__ __forceinline__ T lazynd_combine(T a, T b, int op) {
  return op == 0 ? lazynd_nanmax(a, b) : a + b;
}

// v combined (op 0: NaN-propagating max, 1: sum) over each aligned group of `group` consecutive threads
// (a power of two, at most the block); every thread of the block must call it, and gets its group's value.
#ifdef LAZYND_WARP_SHUFFLE
// On a GPU: a butterfly of warp shuffles within each warp, then, for groups wider than a warp, the
// warps' values through shared memory: two barriers a call instead of one per halving.
template <typename T>
struct LazyndSoftmaxCombine {
  int op;
  __device__ T operator()(T a, T b) const { return lazynd_combine(a, b, op); }
};
// G: the group size where it is known at compile time (the loop over a group's warps then unrolls),
// else 0 and `group` says it.
template <typename T, int G = 0>
__device__ T lazynd_group_combine(T v, T* shared, int group, int op) {
  if (G) group = G;
  v = lazynd_warp_combine(v, group < 32 ? group : 32, LazyndSoftmaxCombine<T>{op});
  if (group <= 32) return v;
  const int warp = threadIdx.x >> 5, warps = group >> 5, first = warp - warp % warps;
  if ((threadIdx.x & 31) == 0) shared[warp] = v;
  __syncthreads();
  T result = shared[first];
#pragma unroll
  for (int w = 1; w < warps; ++w) result = lazynd_combine(result, shared[first + w], op);
  __syncthreads();  // the next call writes shared again
  return result;
}
#else
// Elsewhere (the CPU emulator, which has no warp shuffles): halving through shared memory
template <typename T, int G = 0>
__device__ T lazynd_group_combine(T v, T* shared, int group, int op) {
  if (G) group = G;
  const int t = threadIdx.x;
  const int lane = t & (group - 1);
  shared[t] = v;
  __syncthreads();
  for (int half = group / 2; half > 0; half >>= 1) {
    if (lane < half) shared[t] = lazynd_combine(shared[t], shared[t + half], op);
    __syncthreads();
  }
  T result = shared[t - lane];
  __syncthreads();
  return result;
}
#endif

// The register path's forward pass.  A group of G threads owns a row, K elements a thread, read and
// written V at a time: thread `lane` holds the row's vectors lane, lane + G, lane + 2 * G...  A block
// has max(G, LAZYND_SOFTMAX_THREADS) threads, BLOCK / G rows per step.  Every size is a template
// argument: on an H200, rows of 1024 ran at 77% of a copy's bandwidth with the group size an argument
// of the call, and a kernel of this form timed alone at 99% (rows of 4096: 64% and 98%).  A row's
// length is a multiple of V and its vectors are aligned (the host picks V so).
template <typename T, int G, int K, int V>
__device__ void lazynd_softmax_rows(const T* __restrict__ x, T* __restrict__ y, long long rows, int n, T inv_temp,
                                    int log_mode, T* shared) {
  constexpr int BLOCK = G > LAZYND_SOFTMAX_THREADS ? G : LAZYND_SOFTMAX_THREADS;
  constexpr int ROWS_PER_BLOCK = BLOCK / G;
  const T lowest = -(T)(1.0 / 0.0);
  const int lane = threadIdx.x & (G - 1);
  for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
       first += (long long)gridDim.x * ROWS_PER_BLOCK) {
    const long long row = first + threadIdx.x / G;
    const bool live = row < rows;  // threads past the last row still take part in the reductions
    const T* xr = x + row * n;
    T v[K];
#pragma unroll
    for (int k = 0; k < K / V; ++k) {
      const int c = (k * G + lane) * V;
      LazyndVector<T, V> in;
      if (live && c < n) {
        in = *reinterpret_cast<const LazyndVector<T, V>*>(xr + c);
#pragma unroll
        for (int j = 0; j < V; ++j) in.v[j] *= inv_temp;
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) in.v[j] = lowest;
      }
#pragma unroll
      for (int j = 0; j < V; ++j) v[k * V + j] = in.v[j];
    }
    T mx = lowest;
#pragma unroll
    for (int k = 0; k < K; ++k) mx = lazynd_nanmax(mx, v[k]);
    mx = lazynd_group_combine<T, G>(mx, shared, G, 0);
    T sum = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      // (-inf, a padding slot's value too, gives 0; a row of -inf still ends NaN, as in NumPy: 0 / 0)
      const T e = v[k] == lowest ? T(0) : lazynd_exp(v[k] - mx);
      v[k] = log_mode ? v[k] - mx : e;
      sum += e;
    }
    sum = lazynd_group_combine<T, G>(sum, shared, G, 1);
    const T shift = log_mode ? lazynd_log(sum) : T(0), scale = T(1) / sum;
    T* yr = y + row * n;
#pragma unroll
    for (int k = 0; k < K / V; ++k) {
      const int c = (k * G + lane) * V;
      if (!(live && c < n)) continue;
      LazyndVector<T, V> out;
#pragma unroll
      for (int j = 0; j < V; ++j) out.v[j] = log_mode ? v[k * V + j] - shift : v[k * V + j] * scale;
      *reinterpret_cast<LazyndVector<T, V>*>(yr + c) = out;
    }
  }
}

// Gradient: softmax  dx = y * (dy - sum(dy * y)) / T
//           log      dx = (dy - exp(y) * sum(dy)) / T
// an element at a time: on an H200 rows of 1024 ran at 100% of a copy's bandwidth so, 90% with
// 16-byte accesses
template <typename T, int K>
__device__ void lazynd_softmax_grad_regs(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
                                         long long rows, int n, int group, T inv_temp, int log_mode, T* shared) {
  const int lane = threadIdx.x & (group - 1);
  const long long rows_per_block = blockDim.x / group;
  for (long long first = blockIdx.x * rows_per_block; first < rows; first += gridDim.x * rows_per_block) {
    const long long row = first + threadIdx.x / group;
    const bool live = row < rows;
    T g[K], out[K];
    T acc = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int c = k * group + lane;
      const bool here = live && c < n;
      g[k] = here ? dy[row * n + c] : T(0);
      out[k] = here ? y[row * n + c] : T(0);
      acc += log_mode ? g[k] : g[k] * out[k];
    }
    acc = lazynd_group_combine<T>(acc, shared, group, 1);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int c = k * group + lane;
      if (live && c < n)
        dx[row * n + c] = (log_mode ? g[k] - lazynd_exp(out[k]) * acc : out[k] * (g[k] - acc)) * inv_temp;
    }
  }
}

// -- long rows: pieces of `chunk` elements, `chunks` per row, one block per (row, piece) ------------------

// the block's (max, sum) from each thread's: the sums rescaled to the common max
template <typename T>
__device__ __forceinline__ void lazynd_block_maxsum(T& mx, T& sum, T* shared) {
  const T block_max = lazynd_group_combine<T>(mx, shared, blockDim.x, 0);
  sum = mx == -(T)(1.0 / 0.0) ? T(0) : sum * lazynd_exp(mx - block_max);
  sum = lazynd_group_combine<T>(sum, shared, blockDim.x, 1);
  mx = block_max;
}

// (mx, sum) and (mx2, sum2) as one pair: both sums rescaled to the larger max
template <typename T>
__device__ __forceinline__ void lazynd_maxsum_merge(T& mx, T& sum, T mx2, T sum2) {
  const T lowest = -(T)(1.0 / 0.0), merged = lazynd_nanmax(mx, mx2);
  T total = 0;
  if (mx != lowest) total += sum * lazynd_exp(mx - merged);
  if (mx2 != lowest) total += sum2 * lazynd_exp(mx2 - merged);
  mx = merged;
  sum = total;
}

// a thread's running (max, sum) taking in a vector of V values: one rescale for the vector's max
template <typename T, int V>
__device__ __forceinline__ void lazynd_online_vector(T& mx, T& sum, const LazyndVector<T, V>& in, T inv_temp) {
  const T lowest = -(T)(1.0 / 0.0);
  T v[V], vmax = lowest;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    v[j] = in.v[j] * inv_temp;
    vmax = lazynd_nanmax(vmax, v[j]);
  }
  if (vmax > mx || vmax != vmax) {
    sum = mx == lowest ? T(0) : sum * lazynd_exp(mx - vmax);
    mx = vmax;
  }
  if (mx == lowest) return;  // every value so far is -inf: exp gives 0 for each
#pragma unroll
  for (int j = 0; j < V; ++j) sum += lazynd_exp(v[j] - mx);
}

// a thread's (max, sum of exp(v - max)) over its vectors of line[start, stop): vectors
// start + (threadIdx.x + i * blockDim.x) * V, two loads in flight; stop - start is a multiple of V
template <typename T, int V>
__device__ void lazynd_span_maxsum(const T* __restrict__ line, long long start, long long stop, T inv_temp, T& mx,
                                   T& sum) {
  const T lowest = -(T)(1.0 / 0.0);
  T mx1 = lowest, sum1 = 0;
  mx = lowest;
  sum = 0;
  const long long step = (long long)blockDim.x * V;
  long long c = start + (long long)threadIdx.x * V;
  for (; c + step < stop; c += 2 * step) {
    const LazyndVector<T, V> a = *reinterpret_cast<const LazyndVector<T, V>*>(line + c);
    const LazyndVector<T, V> b = *reinterpret_cast<const LazyndVector<T, V>*>(line + c + step);
    lazynd_online_vector(mx, sum, a, inv_temp);
    lazynd_online_vector(mx1, sum1, b, inv_temp);
  }
  if (c < stop) lazynd_online_vector(mx, sum, *reinterpret_cast<const LazyndVector<T, V>*>(line + c), inv_temp);
  lazynd_maxsum_merge(mx, sum, mx1, sum1);
}

// softmax (or log-softmax) of line[start, stop) into out[start, stop), given the whole line's max and
// sum of exp(v - max); the same vectors as lazynd_span_maxsum, so a second read of them often hits L2
template <typename T, int V>
__device__ void lazynd_span_write(const T* __restrict__ line, T* __restrict__ out, long long start, long long stop,
                                  T inv_temp, T mx, T sum, int log_mode) {
  const T shift = lazynd_log(sum) + mx, scale = T(1) / sum;
  for (long long c = start + (long long)threadIdx.x * V; c < stop; c += (long long)blockDim.x * V) {
    LazyndVector<T, V> v = *reinterpret_cast<const LazyndVector<T, V>*>(line + c);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const T s = v.v[j] * inv_temp;
      v.v[j] = log_mode ? s - shift : lazynd_exp(s - mx) * scale;
    }
    *reinterpret_cast<LazyndVector<T, V>*>(out + c) = v;
  }
}

// rows too long for registers but many: a block a row, read twice (the second read from L2, which
// holds the rows of the blocks in flight), written once
template <typename T, int V>
__device__ void lazynd_softmax_block_rows(const T* __restrict__ x, T* __restrict__ y, long long rows, long long n,
                                          T inv_temp, int log_mode, T* shared) {
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    T mx, sum;
    lazynd_span_maxsum<T, V>(x + row * n, 0, n, inv_temp, mx, sum);
    lazynd_block_maxsum(mx, sum, shared);
    lazynd_span_write<T, V>(x + row * n, y + row * n, 0, n, inv_temp, mx, sum, log_mode);
  }
}

// few long rows: each piece's (max, sum) into partial, then lazynd_softmax_finish writes the pieces
template <typename T, int V>
__device__ void lazynd_softmax_pieces(const T* __restrict__ x, T* __restrict__ partial, long long rows, long long n,
                                      long long chunk, long long chunks, T inv_temp, T* shared) {
  for (long long piece = blockIdx.x; piece < rows * chunks; piece += gridDim.x) {
    const long long row = piece / chunks, start = piece % chunks * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    T mx, sum;
    lazynd_span_maxsum<T, V>(x + row * n, start, stop, inv_temp, mx, sum);
    lazynd_block_maxsum(mx, sum, shared);
    if (threadIdx.x == 0) { partial[2 * piece] = mx; partial[2 * piece + 1] = sum; }
  }
}

template <typename T, int V>
__device__ void lazynd_softmax_finish(const T* __restrict__ x, T* __restrict__ y, const T* __restrict__ partial,
                                      long long rows, long long n, long long chunk, long long chunks, T inv_temp,
                                      int log_mode) {
  const T lowest = -(T)(1.0 / 0.0);
  for (long long piece = blockIdx.x; piece < rows * chunks; piece += gridDim.x) {
    const long long row = piece / chunks, start = piece % chunks * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    // every thread combines the row's pieces itself (a few values, read through the cache): no barrier
    T mx = lowest, sum = 0;
    for (long long p = row * chunks; p < (row + 1) * chunks; ++p) lazynd_maxsum_merge(mx, sum, partial[2 * p], partial[2 * p + 1]);
    lazynd_span_write<T, V>(x + row * n, y + row * n, start, stop, inv_temp, mx, sum, log_mode);
  }
}

template <typename T>
__device__ void lazynd_softmax_grad_pieces(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ partial,
                                           long long rows, long long n, long long chunk, long long chunks, int log_mode,
                                           T* shared) {
  for (long long piece = blockIdx.x; piece < rows * chunks; piece += gridDim.x) {
    const long long row = piece / chunks, start = piece % chunks * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    T acc = 0;
    for (long long c = start + threadIdx.x; c < stop; c += blockDim.x) {
      const long long j = row * n + c;
      acc += log_mode ? dy[j] : dy[j] * y[j];
    }
    acc = lazynd_group_combine<T>(acc, shared, blockDim.x, 1);
    if (threadIdx.x == 0) partial[piece] = acc;
  }
}

template <typename T>
__device__ void lazynd_softmax_grad_finish(const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx,
                                           const T* __restrict__ partial, long long rows, long long n, long long chunk,
                                           long long chunks, T inv_temp, int log_mode) {
  for (long long piece = blockIdx.x; piece < rows * chunks; piece += gridDim.x) {
    const long long row = piece / chunks, start = piece % chunks * chunk;
    const long long stop = start + chunk < n ? start + chunk : n;
    T acc = 0;
    for (long long p = row * chunks; p < (row + 1) * chunks; ++p) acc += partial[p];
    for (long long c = start + threadIdx.x; c < stop; c += blockDim.x) {
      const long long j = row * n + c;
      dx[j] = (log_mode ? dy[j] - lazynd_exp(y[j]) * acc : y[j] * (dy[j] - acc)) * inv_temp;
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
    for (long long k = 0; k < n; ++k) sum += lazynd_exp(xl[k * inner] * inv_temp - mx);
    if (log_mode) {
      T lse = lazynd_log(sum) + mx;
      for (long long k = 0; k < n; ++k) yl[k * inner] = xl[k * inner] * inv_temp - lse;
    } else {
      T inv = T(1) / sum;
      for (long long k = 0; k < n; ++k) yl[k * inner] = lazynd_exp(xl[k * inner] * inv_temp - mx) * inv;
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
        dx[j] = (dy[j] - lazynd_exp(y[j]) * acc) * inv_temp;
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

// the register path: one kernel per elements-per-thread K and vector width V (template arguments, so that
// its arrays are indexed by constants, and each kernel gets the registers its own K needs, not the
// largest K's); a block of up to LAZYND_SOFTMAX_MAX_THREADS threads.  The shared memory holds a value a
// warp on a GPU, a value a thread for the CPU emulator's tree.
// __launch_bounds__ keeps a kernel's registers within what a block of LAZYND_SOFTMAX_MAX_THREADS may use
// (the CPU emulator's preprocessing knows no __launch_bounds__: its builds go without).
#ifdef LAZYND_WARP_SHUFFLE
#define LAZYND_SOFTMAX_REGS_SHARED 32
#define LAZYND_SOFTMAX_REGS_BOUNDS __launch_bounds__(LAZYND_SOFTMAX_MAX_THREADS)
#else
#define LAZYND_SOFTMAX_REGS_SHARED LAZYND_SOFTMAX_MAX_THREADS
#define LAZYND_SOFTMAX_REGS_BOUNDS
#endif
#define LAZYND_SOFTMAX_ROWS_KERNEL(T, SUFFIX, G, K, V)                                                               \
extern "C" __global__ void LAZYND_SOFTMAX_REGS_BOUNDS                                                                    \
lazynd_softmax_rows_##G##x##K##v##V##_##SUFFIX(const T* x, T* y, long long rows, int n, T inv_temp, int log_mode) {    \
  __shared__ T shared[LAZYND_SOFTMAX_REGS_SHARED];                                                                    \
  lazynd_softmax_rows<T, G, K, V>(x, y, rows, n, inv_temp, log_mode, shared);                                         \
}
// a layout with both accesses: an element at a time, and VEC at a time
#define LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, G, K, VEC)                                                               \
LAZYND_SOFTMAX_ROWS_KERNEL(T, SUFFIX, G, K, 1)                                                                        \
LAZYND_SOFTMAX_ROWS_KERNEL(T, SUFFIX, G, K, VEC)
#define LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, K)                                                                 \
extern "C" __global__ void LAZYND_SOFTMAX_REGS_BOUNDS                                                                    \
lazynd_softmax_grad_regs##K##_##SUFFIX(const T* dy, const T* y, T* dx, long long rows, int n, int group, T inv_temp,  \
                                       int log_mode) {                                                                \
  __shared__ T shared[LAZYND_SOFTMAX_REGS_SHARED];                                                                    \
  lazynd_softmax_grad_regs<T, K>(dy, y, dx, rows, n, group, inv_temp, log_mode, shared);                              \
}

// the register kernels of one element type: the forward pass for each (group, elements a thread) that
// ops/softmax_gpu.py's register_layout gives, an element at a time and (where a thread holds at least
// 4) VEC elements at a time, 16 bytes; the gradient for each elements a thread, an element at a time
#define LAZYND_SOFTMAX_REGS_ALL(T, SUFFIX, VEC)                                                                      \
LAZYND_SOFTMAX_ROWS_KERNEL(T, SUFFIX, 1, 1, 1)                                                                        \
LAZYND_SOFTMAX_ROWS_KERNEL(T, SUFFIX, 1, 2, 1)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 1, 4, VEC)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 1, 8, VEC)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 2, 8, VEC)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 4, 8, VEC)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 8, 8, VEC)                                                                        \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 16, 8, VEC)                                                                       \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 32, 8, VEC)                                                                       \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 64, 8, VEC)                                                                       \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 128, 8, VEC)                                                                      \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 256, 8, VEC)                                                                      \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 256, 16, VEC)                                                                     \
LAZYND_SOFTMAX_ROWS_BOTH(T, SUFFIX, 512, 16, VEC)                                                                     \
LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, 1)                                                                         \
LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, 2)                                                                         \
LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, 4)                                                                         \
LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, 8)                                                                         \
LAZYND_SOFTMAX_GRAD_REGS_KERNEL(T, SUFFIX, 16)
LAZYND_SOFTMAX_REGS_ALL(float, float32, 4)
LAZYND_SOFTMAX_REGS_ALL(double, float64, 2)

#define LAZYND_SOFTMAX_LONG_KERNELS(T, SUFFIX, V)                                                                   \
extern "C" __global__ void LAZYND_SOFTMAX_REGS_BOUNDS                                                                    \
lazynd_softmax_block_rows_v##V##_##SUFFIX(const T* x, T* y, long long rows, long long n, T inv_temp, int log_mode) {   \
  __shared__ T shared[LAZYND_SOFTMAX_REGS_SHARED];                                                                    \
  lazynd_softmax_block_rows<T, V>(x, y, rows, n, inv_temp, log_mode, shared);                                         \
}                                                                                                                     \
extern "C" __global__ void LAZYND_SOFTMAX_REGS_BOUNDS                                                                    \
lazynd_softmax_pieces_v##V##_##SUFFIX(const T* x, T* partial, long long rows, long long n, long long chunk,             \
                                      long long chunks, T inv_temp) {                                                 \
  __shared__ T shared[LAZYND_SOFTMAX_REGS_SHARED];                                                                    \
  lazynd_softmax_pieces<T, V>(x, partial, rows, n, chunk, chunks, inv_temp, shared);                                  \
}                                                                                                                     \
extern "C" __global__ void lazynd_softmax_finish_v##V##_##SUFFIX(const T* x, T* y, const T* partial, long long rows,   \
                                                                 long long n, long long chunk, long long chunks,       \
                                                                 T inv_temp, int log_mode) {                          \
  lazynd_softmax_finish<T, V>(x, y, partial, rows, n, chunk, chunks, inv_temp, log_mode);                             \
}
LAZYND_SOFTMAX_LONG_KERNELS(float, float32, 1)
LAZYND_SOFTMAX_LONG_KERNELS(float, float32, 4)
LAZYND_SOFTMAX_LONG_KERNELS(double, float64, 1)
LAZYND_SOFTMAX_LONG_KERNELS(double, float64, 2)

// the gradient's piece kernels, with LAZYND_SOFTMAX_THREADS threads per block
#define LAZYND_SOFTMAX_GRAD_PIECE_KERNELS(T, SUFFIX)                                                                        \
extern "C" __global__ void lazynd_softmax_grad_pieces_##SUFFIX(const T* dy, const T* y, T* partial, long long rows,    \
                                                               long long n, long long chunk, long long chunks,         \
                                                               int log_mode) {                                         \
  __shared__ T shared[LAZYND_SOFTMAX_THREADS];                                                                        \
  lazynd_softmax_grad_pieces<T>(dy, y, partial, rows, n, chunk, chunks, log_mode, shared);                            \
}                                                                                                                     \
extern "C" __global__ void lazynd_softmax_grad_finish_##SUFFIX(const T* dy, const T* y, T* dx, const T* partial,      \
                                                               long long rows, long long n, long long chunk,           \
                                                               long long chunks, T inv_temp, int log_mode) {           \
  lazynd_softmax_grad_finish<T>(dy, y, dx, partial, rows, n, chunk, chunks, inv_temp, log_mode);                      \
}

LAZYND_SOFTMAX_GRAD_PIECE_KERNELS(float, float32)
LAZYND_SOFTMAX_GRAD_PIECE_KERNELS(double, float64)

// SoftmaxOutput's gradient in its common case (one label per row, no ignore label, no smoothing):
// grad = scale * (p - one_hot(label)), one pass.  A label names class trunc(label), as the host's
// conversion to integers does; one naming no class in [0, classes) -- NaN included -- subtracts
// nothing, and the row's first thread reports it to the device check `check` (checks.cuh): the
// kernel reads every label anyway, so the check costs no launch of its own.  The label is tested
// as a double, before any conversion to an integer (which is undefined for NaN and huge values,
// and differs between a GPU and a CPU).
template <typename T, typename L>
__device__ void lazynd_softmax_output_grad(const T* p, const L* label, T* grad, long long rows, int classes, T scale,
                                           double check, double* report) {
  long long total = rows * classes;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    long long r = i / classes;
    long long c = i - r * classes;
    const double named = trunc((double)label[r]);
    const bool inside = lazynd_in_range(named, 0.0, (double)classes, 0);
    if (c == 0 && !inside) lazynd_report_out_of_range(report, check, named, r);
    T v = p[i] * scale;
    if (inside && named == (double)c) v -= scale;
    grad[i] = v;
  }
}

#define LAZYND_SOFTMAX_OUTPUT_GRAD(T, SUFFIX, L, LSUFFIX)                                                            \
extern "C" __global__ void lazynd_softmax_output_grad_##SUFFIX##_##LSUFFIX(const T* p, const L* label, T* grad,        \
                                                                          long long rows, int classes, T scale,       \
                                                                          double check, double* report) {             \
  lazynd_softmax_output_grad<T, L>(p, label, grad, rows, classes, scale, check, report);                              \
}
LAZYND_SOFTMAX_OUTPUT_GRAD(float, float32, float, float32)
LAZYND_SOFTMAX_OUTPUT_GRAD(float, float32, double, float64)
LAZYND_SOFTMAX_OUTPUT_GRAD(float, float32, int, int32)
LAZYND_SOFTMAX_OUTPUT_GRAD(float, float32, long long, int64)
LAZYND_SOFTMAX_OUTPUT_GRAD(double, float64, float, float32)
LAZYND_SOFTMAX_OUTPUT_GRAD(double, float64, double, float64)
LAZYND_SOFTMAX_OUTPUT_GRAD(double, float64, int, int32)
LAZYND_SOFTMAX_OUTPUT_GRAD(double, float64, long long, int64)
