"""A Module trained stage by stage (bind, init, forward, backward, update) from fixed parameters."""

from __future__ import annotations

import numpy as np
from blob_problem import two_class_blobs, two_class_net

import lazynd as mx


def start_params(seed: int = 1) -> dict[str, mx.NDArray]:
    """Fixed random starting values for the parameters of `two_class_net()`."""
    rng = np.random.default_rng(seed)
    shapes = {"fc1_weight": (16, 5), "fc1_bias": (16,), "fc2_weight": (2, 16), "fc2_bias": (2,)}
    return {name: mx.nd.array(rng.normal(scale=0.3, size=shape).astype(np.float32)) for name, shape in shapes.items()}


def host_values(params: dict) -> dict[str, np.ndarray]:
    """The parameters as NumPy arrays, by name."""
    return {name: value.asnumpy() for name, value in params.items()}


def trained_by_hand(context, work_load_list=None, kvstore="local", steps: int = 6, **module_kwargs) -> mx.mod.Module:
    """A Module on `context` after `steps` SGD steps (momentum 0.9) over 240 blob points, batch 40."""
    data, label = two_class_blobs(240)
    batches = mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False)
    mod = mx.mod.Module(two_class_net(), context=context, work_load_list=work_load_list, **module_kwargs)
    mod.bind(batches.provide_data, batches.provide_label)
    mod.init_params(arg_params=start_params())
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for batch in list(batches)[:steps]:
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    return mod
