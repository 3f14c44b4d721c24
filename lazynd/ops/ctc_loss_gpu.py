"""How ``CTCLoss``'s GPU kernel (``kernels/ctc.cu``) is launched: one block per sequence.

The operator (:mod:`.ctc_loss`) has already turned the labels and lengths into class indices and
whole lengths on the device, and launched their checks; here the activations' log-softmax is taken
by the softmax family's kernels (float16 activations in float32: a float16 log probability would
lose the small probabilities the recursions add up), then ``lazynd_ctc_<dtype>`` runs both
recursions and writes the loss and the gradient.  Nothing is read back to the host, so the call
neither waits for the device nor keeps an executor's pass out of a CUDA graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name, load_file
from .softmax import softmax_into

_SOURCE = load_file("ctc.cu")  # read once; each kernel compiles on first use
MAX_THREADS = 256  # a block's threads share the extended label's positions, and the classes of a step
MIN_THREADS = 32  # a warp


def block_threads(positions: int) -> int:
    """The threads of a sequence's block: the extended label's positions rounded up to a power of
    two, from a warp up to ``MAX_THREADS`` (longer labels loop: every step waits at a barrier, so
    threads beyond the positions would only wait).

    Examples:
        >>> block_threads(1), block_threads(41), block_threads(5001)
        (32, 64, 256)
    """
    return min(MAX_THREADS, max(MIN_THREADS, 1 << max(positions - 1, 0).bit_length()))


def ctc_loss_gpu(
    kctx: Any, data: Any, classes: Any, label_lengths: Any, data_lengths: Any, blank: int, loss: Any, gradient: Any
) -> None:
    """The CTC loss of each sequence into ``loss`` (batch,) and its gradient with respect to
    ``data`` (steps, batch, alphabet) into ``gradient``.

    ``classes`` (batch, width) holds class indices within the alphabet, none the blank (entries past
    a label's length are ignored), ``label_lengths`` whole numbers in [0, width] and
    ``data_lengths`` in [1, steps]; all on the device."""
    xp = kctx.xp
    steps, batch, alphabet = data.shape
    if batch == 0:
        return
    compute = np.float64 if data.dtype == np.float64 else np.float32
    log_prob = xp.empty(data.shape, compute)
    softmax_into(kctx, data, log_prob, axis=2, log=True)
    width = classes.shape[1]
    positions = 2 * width + 1
    # scratch: every alpha row of each sequence; two beta rows; the occupancy of each class at a step
    alpha = xp.empty((batch, steps, positions), compute)
    beta = xp.empty((batch, 2, positions), compute)
    occupancy = xp.empty((batch, alphabet), compute)
    loss_out = loss if loss.flags.c_contiguous else xp.empty(loss.shape, loss.dtype)
    gradient_out = gradient if gradient.flags.c_contiguous else xp.empty(gradient.shape, gradient.dtype)
    kernel = _SOURCE.function(kctx.device_id, f"lazynd_ctc_{dtype_name(loss.dtype)}")
    kernel(
        (batch,),
        (block_threads(positions),),
        (
            log_prob,
            xp.ascontiguousarray(classes, dtype=np.int32),
            xp.ascontiguousarray(label_lengths, dtype=np.int32),
            xp.ascontiguousarray(data_lengths, dtype=np.int32),
            np.int32(steps),
            np.int32(batch),
            np.int32(alphabet),
            np.int32(width),
            np.int32(blank),
            alpha,
            beta,
            occupancy,
            loss_out,
            gradient_out,
        ),
    )
    if loss_out is not loss:
        loss[...] = loss_out
    if gradient_out is not gradient:
        gradient[...] = gradient_out
