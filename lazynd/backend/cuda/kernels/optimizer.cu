// Fused optimizer updates: one launch per parameter, every state updated in the same pass.
// clip < 0 means no gradient clipping (MXNet's convention).
// The multi-precision (mp_) updates keep a float32 master copy of the weight (weight32) and do
// their arithmetic in float; the weight and gradient are float16 (stored as 16 bits) or float32.

template <typename T>
__device__ __forceinline__ T lazynd_clip_grad(T g, T clip) {
  if (clip >= T(0)) g = g > clip ? clip : (g < -clip ? -clip : g);
  return g;
}

template <typename T>
__device__ void lazynd_sgd(const T* w, const T* grad, T* out, long long n, T lr, T wd, T rescale, T clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = lazynd_clip_grad(rescale * grad[i], clip);
    out[i] = (T(1) - lr * wd) * w[i] - lr * g;
  }
}

template <typename T>
__device__ void lazynd_sgd_mom(const T* w, const T* grad, T* mom, T* out, long long n, T lr, T momentum, T wd,
                               T rescale, T clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = lazynd_clip_grad(rescale * grad[i], clip);
    T m = momentum * mom[i] - lr * wd * w[i] - lr * g;
    mom[i] = m;
    out[i] = w[i] + m;
  }
}

// NAG in MXNet 1.x's form; mom's weight-decay term reads the weight after out is written, as
// MXNet's kernel does: the updated weight when out is the weight (its optimizers' call), the
// weight given otherwise.
template <typename T>
__device__ void lazynd_nag_mom(const T* w, const T* grad, T* mom, T* out, long long n, T lr, T momentum, T wd,
                               T rescale, T clip) {
  const bool in_place = out == w;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = lazynd_clip_grad(rescale * grad[i], clip);
    T m = momentum * mom[i];
    T wi = w[i];
    T nw = wi + momentum * m - (momentum + T(1)) * lr * (g + wd * wi);
    mom[i] = m - lr * (g + wd * (in_place ? nw : wi));
    out[i] = nw;
  }
}

template <typename T>
__device__ void lazynd_adam(const T* w, const T* grad, T* mean, T* var, T* out, long long n, T lr, T beta1, T beta2,
                            T epsilon, T wd, T rescale, T clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = lazynd_clip_grad(rescale * grad[i] + wd * w[i], clip);
    T m = beta1 * mean[i] + (T(1) - beta1) * g;
    T v = beta2 * var[i] + (T(1) - beta2) * g * g;
    mean[i] = m;
    var[i] = v;
    out[i] = w[i] - lr * m / (sqrt(v) + epsilon);
  }
}

template <typename T>
__device__ void lazynd_rmsprop(const T* w, const T* grad, T* state, T* out, long long n, T lr, T gamma1, T epsilon,
                               T wd, T rescale, T clip, T clip_weights) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T g = lazynd_clip_grad(rescale * grad[i] + wd * w[i], clip);
    T s = (T(1) - gamma1) * g * g + gamma1 * state[i];
    state[i] = s;
    T nw = w[i] - lr * g / sqrt(s + epsilon);
    out[i] = lazynd_clip_grad(nw, clip_weights);
  }
}

#define LAZYND_OPTIMIZER_KERNELS(T, SUFFIX)                                                                          \
  extern "C" __global__ void lazynd_sgd_update_##SUFFIX(const T* w, const T* g, T* out, long long n, T lr, T wd,     \
                                                        T rescale, T clip) {                                         \
    lazynd_sgd<T>(w, g, out, n, lr, wd, rescale, clip);                                                              \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_sgd_mom_update_##SUFFIX(const T* w, const T* g, T* mom, T* out, long long n,     \
                                                            T lr, T momentum, T wd, T rescale, T clip) {             \
    lazynd_sgd_mom<T>(w, g, mom, out, n, lr, momentum, wd, rescale, clip);                                           \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_nag_mom_update_##SUFFIX(const T* w, const T* g, T* mom, T* out, long long n,     \
                                                            T lr, T momentum, T wd, T rescale, T clip) {             \
    lazynd_nag_mom<T>(w, g, mom, out, n, lr, momentum, wd, rescale, clip);                                           \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_adam_update_##SUFFIX(const T* w, const T* g, T* mean, T* var, T* out,            \
                                                         long long n, T lr, T beta1, T beta2, T epsilon, T wd,       \
                                                         T rescale, T clip) {                                        \
    lazynd_adam<T>(w, g, mean, var, out, n, lr, beta1, beta2, epsilon, wd, rescale, clip);                           \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_rmsprop_update_##SUFFIX(const T* w, const T* g, T* state, T* out, long long n,  \
                                                            T lr, T gamma1, T epsilon, T wd, T rescale, T clip,      \
                                                            T clip_weights) {                                        \
    lazynd_rmsprop<T>(w, g, state, out, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights);                    \
  }

LAZYND_OPTIMIZER_KERNELS(float, float32)
LAZYND_OPTIMIZER_KERNELS(double, float64)

// -- preloaded multi-weight updates: weight k's lr and wd read from the device arrays lrs and wds ----
// (read by the kernel, not by the host at the launch: a pass of them can be captured into a CUDA
// graph and replayed with the rates the arrays hold then)
#define LAZYND_PRELOADED_KERNELS(T, SUFFIX)                                                                          \
  extern "C" __global__ void lazynd_preloaded_sgd_update_##SUFFIX(const T* w, const T* g, T* out, long long n,      \
                                                                  const float* lrs, const float* wds, long long k,  \
                                                                  T rescale, T clip) {                               \
    lazynd_sgd<T>(w, g, out, n, T(lrs[k]), T(wds[k]), rescale, clip);                                               \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_preloaded_sgd_mom_update_##SUFFIX(const T* w, const T* g, T* mom, T* out,       \
                                                                      long long n, const float* lrs,                \
                                                                      const float* wds, long long k, T momentum,    \
                                                                      T rescale, T clip) {                           \
    lazynd_sgd_mom<T>(w, g, mom, out, n, T(lrs[k]), momentum, T(wds[k]), rescale, clip);                             \
  }

LAZYND_PRELOADED_KERNELS(float, float32)
LAZYND_PRELOADED_KERNELS(double, float64)

// -- multi-precision updates: weight32 (and mom) are float32; W is the weight's storage type ---------
__device__ __forceinline__ float lazynd_mp_load(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float lazynd_mp_load(float v) { return v; }
__device__ __forceinline__ void lazynd_mp_store(unsigned short* p, float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); *p = h; }
__device__ __forceinline__ void lazynd_mp_store(float* p, float f) { *p = f; }

template <typename W>
__device__ void lazynd_mp_sgd(const W* grad, float* w32, W* out, long long n, float lr, float wd, float rescale,
                              float clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float g = lazynd_clip_grad(rescale * lazynd_mp_load(grad[i]), clip);
    float nw = (1.0f - lr * wd) * w32[i] - lr * g;
    w32[i] = nw;
    lazynd_mp_store(out + i, nw);
  }
}

template <typename W>
__device__ void lazynd_mp_sgd_mom(const W* grad, float* mom, float* w32, W* out, long long n, float lr,
                                  float momentum, float wd, float rescale, float clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float g = lazynd_clip_grad(rescale * lazynd_mp_load(grad[i]), clip);
    float m = momentum * mom[i] - lr * wd * w32[i] - lr * g;
    mom[i] = m;
    float nw = w32[i] + m;
    w32[i] = nw;
    lazynd_mp_store(out + i, nw);
  }
}

template <typename W>
__device__ void lazynd_mp_nag_mom(const W* grad, float* mom, float* w32, W* out, long long n, float lr,
                                  float momentum, float wd, float rescale, float clip) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float g = lazynd_clip_grad(rescale * lazynd_mp_load(grad[i]), clip);
    float m = momentum * mom[i];
    float nw = w32[i] + momentum * m - (momentum + 1.0f) * lr * (g + wd * w32[i]);
    mom[i] = m - lr * (g + wd * nw);
    w32[i] = nw;
    lazynd_mp_store(out + i, nw);
  }
}

#define LAZYND_MP_OPTIMIZER_KERNELS(W, SUFFIX)                                                                       \
  extern "C" __global__ void lazynd_mp_sgd_update_##SUFFIX(const W* g, float* w32, W* out, long long n, float lr,   \
                                                           float wd, float rescale, float clip) {                    \
    lazynd_mp_sgd<W>(g, w32, out, n, lr, wd, rescale, clip);                                                         \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_mp_sgd_mom_update_##SUFFIX(const W* g, float* mom, float* w32, W* out,          \
                                                               long long n, float lr, float momentum, float wd,      \
                                                               float rescale, float clip) {                          \
    lazynd_mp_sgd_mom<W>(g, mom, w32, out, n, lr, momentum, wd, rescale, clip);                                      \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_mp_nag_mom_update_##SUFFIX(const W* g, float* mom, float* w32, W* out,          \
                                                               long long n, float lr, float momentum, float wd,      \
                                                               float rescale, float clip) {                          \
    lazynd_mp_nag_mom<W>(g, mom, w32, out, n, lr, momentum, wd, rescale, clip);                                      \
  }

LAZYND_MP_OPTIMIZER_KERNELS(unsigned short, float16)
LAZYND_MP_OPTIMIZER_KERNELS(float, float32)

#define LAZYND_PRELOADED_MP_KERNELS(W, SUFFIX)                                                                       \
  extern "C" __global__ void lazynd_preloaded_mp_sgd_update_##SUFFIX(const W* g, float* w32, W* out, long long n,  \
                                                                     const float* lrs, const float* wds,            \
                                                                     long long k, float rescale, float clip) {      \
    lazynd_mp_sgd<W>(g, w32, out, n, lrs[k], wds[k], rescale, clip);                                                 \
  }                                                                                                                  \
  extern "C" __global__ void lazynd_preloaded_mp_sgd_mom_update_##SUFFIX(                                          \
      const W* g, float* mom, float* w32, W* out, long long n, const float* lrs, const float* wds, long long k,     \
      float momentum, float rescale, float clip) {                                                                   \
    lazynd_mp_sgd_mom<W>(g, mom, w32, out, n, lrs[k], momentum, wds[k], rescale, clip);                              \
  }

LAZYND_PRELOADED_MP_KERNELS(unsigned short, float16)
LAZYND_PRELOADED_MP_KERNELS(float, float32)
