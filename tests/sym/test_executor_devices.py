"""A training pass on gpu(0) gives the CPU's numbers: outputs, gradients, BatchNorm's moving
statistics and the weights after SGD steps, for a conv net and the MNIST MLP.

Skipped without a GPU; on the CPU emulator of CUDA kernels it checks the kernels' arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd import sym

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]


def _conv_net() -> Any:
    data, label = sym.Variable("data"), sym.Variable("softmax_label")
    x = sym.Convolution(data, kernel=(3, 3), num_filter=6, pad=(1, 1), name="conv1")
    x = sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = sym.Activation(x, act_type="relu")
    x = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
    x = sym.Convolution(x, kernel=(3, 3), num_filter=4, name="conv2")
    x = sym.Activation(x, act_type="tanh")
    x = sym.Pooling(x, kernel=(2, 2), stride=(1, 1), pad=(1, 1), pool_type="avg")
    x = sym.FullyConnected(x, num_hidden=5, name="fc")
    return sym.SoftmaxOutput(x, label, name="softmax")


def _mlp() -> Any:
    data, label = sym.Variable("data"), sym.Variable("softmax_label")
    x = sym.Activation(sym.FullyConnected(data, num_hidden=128, name="fc1"), act_type="relu")
    x = sym.Activation(sym.FullyConnected(x, num_hidden=64, name="fc2"), act_type="relu")
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=10, name="fc3"), label, name="softmax")


def _train(
    net: Any, data_shape: tuple[int, ...], classes: int, ctx: Any, steps: int = 3, lr: float = 0.1
) -> dict[str, np.ndarray]:
    """Bind, fill from one seed, then ``steps`` of forward, backward and ``w -= lr * g``."""
    executor = net.simple_bind(ctx, grad_req="write", data=data_shape)
    rng = np.random.default_rng(0)
    for name in sorted(executor.arg_dict):
        array = executor.arg_dict[name]
        if name == "softmax_label":
            array[:] = rng.integers(0, classes, array.shape).astype(np.float32)
        else:
            # weights scaled by fan-in, as an initializer would: a well-conditioned pass
            scale = 0.5 if array.ndim < 2 or name == "data" else 1.0 / np.sqrt(np.prod(array.shape[1:]))
            array[:] = rng.uniform(-scale, scale, array.shape).astype(np.float32)
    for name in sorted(executor.aux_dict):
        array = executor.aux_dict[name]
        array[:] = (
            rng.uniform(0.5, 1.5, array.shape) if "var" in name else rng.uniform(-0.5, 0.5, array.shape)
        ).astype(np.float32)
    seen: dict[str, np.ndarray] = {}
    for step in range(steps):
        executor.forward(is_train=True)
        executor.backward()
        seen[f"output step {step}"] = executor.outputs[0].asnumpy()
        for name, grad in executor.grad_dict.items():
            if grad is None or name in ("data", "softmax_label"):
                continue
            seen[f"gradient {name} step {step}"] = grad.asnumpy()
            weight = executor.arg_dict[name]
            weight[:] = weight - grad * lr
    seen.update({f"weight {k}": v.asnumpy() for k, v in executor.arg_dict.items()})
    seen.update({f"aux {k}": v.asnumpy() for k, v in executor.aux_dict.items()})
    return seen


@pytest.mark.parametrize(
    ("net", "data_shape", "classes"),
    [(_conv_net, (4, 3, 10, 10), 5), (_mlp, (32, 784), 10)],
    ids=["conv-bn-pool-fc", "mnist-mlp"],
)
def test_a_training_pass_on_the_gpu_equals_the_cpu(net: Any, data_shape: tuple[int, ...], classes: int) -> None:
    on_cpu = _train(net(), data_shape, classes, mx.cpu(0))
    on_gpu = _train(net(), data_shape, classes, mx.gpu(0))
    assert on_cpu.keys() == on_gpu.keys()
    assert any(k.startswith("aux bn1_moving") for k in on_cpu) or net is _mlp
    for key, want in on_cpu.items():
        np.testing.assert_allclose(on_gpu[key], want, rtol=2e-4, atol=2e-5, err_msg=key)
