// Fused optimizer updates: one launch per parameter, every state updated in the same pass.
// clip < 0 means no gradient clipping (MXNet's convention).

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
