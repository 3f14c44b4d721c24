"""The CUDA backend: everything that touches CuPy lives in this package.

``backend`` (streams, events, memory, the event bookkeeping every GPU operation ends with),
``copies`` (host/device and device/device copies), ``sources`` (CUDA sources compiled with
NVRTC on first use, cached per device), ``check_kernels`` (every source compiled without a GPU),
``elementwise`` (generated kernels of the elementwise families), ``fusion`` (generated kernels of
fused elementwise chains), ``gemm`` (matrix products through cuBLAS's C functions), ``graphs``
(executor passes captured into CUDA graphs and replayed), ``devices`` (which GPUs there are, and their properties),
``events`` (the event pools and the waiter thread), ``rtc`` (user kernels of ``mx.rtc``), ``nccl`` (sums
across GPUs) and ``kernels/`` (the ``.cu`` files).
Importing this package does not import CuPy: only running a GPU operation does.
"""
