"""MXNet's private ``mx.model`` helpers, as modules users wrote on ``BaseModule`` import and call them."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import two_class_blobs, two_class_net
from module_by_hand import host_values, start_params, trained_by_hand

import lazynd as mx
from lazynd.errors import DataError
from lazynd_sym.module.executor_group import ModuleExecutorGroup


def trained_with_model_helpers(contexts: list, kvstore: str | None, steps: int = 6) -> dict[str, np.ndarray]:
    """`trained_by_hand`'s training, written as a user's own Module does it: an executor group and
    ``mx.model._create_kvstore`` / ``_initialize_kvstore`` / ``_update_params[_on_kvstore]``."""
    data, label = two_class_blobs(240)
    batches = mx.io.NDArrayIter(data, label, batch_size=40, shuffle=False)
    net = two_class_net()
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    group = ModuleExecutorGroup(net, contexts, None, batches.provide_data, batches.provide_label, names, True, False)
    start = start_params()
    group.set_params(start, {})
    store, on_store = mx.model._create_kvstore(kvstore, len(contexts), start)
    optimizer = mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, rescale_grad=1.0 / 40)
    if store is not None:
        mx.model._initialize_kvstore(store, group.param_arrays, start, names, on_store)
    updater = None
    if on_store:
        store.set_optimizer(optimizer)
    else:
        updater = mx.optimizer.get_updater(optimizer)
    for batch in list(batches)[:steps]:
        group.forward_batch(batch, is_train=True)
        group.backward()
        if on_store:
            mx.model._update_params_on_kvstore(group.param_arrays, group.grad_arrays, store, names)
        else:
            mx.model._update_params(group.param_arrays, group.grad_arrays, updater, len(contexts), store, names)
    params = {name: mx.nd.zeros(arrays[0].shape) for name, arrays in zip(names, group.param_arrays, strict=True)}
    group.copy_params_to(params, {})
    return host_values(params)


@pytest.mark.parametrize(
    ("devices", "kvstore"),
    [(1, "local"), (2, "local"), (2, "local_allreduce_cpu"), (2, None)],
    ids=["one-device", "optimizer-on-store", "store-sums-devices-update", "no-store"],
)
def test_a_loop_on_the_model_helpers_trains_as_module_does(devices: int, kvstore: str | None) -> None:
    contexts = [mx.cpu(i) for i in range(devices)]
    expected = host_values(trained_by_hand(contexts, kvstore=kvstore).get_params()[0])
    got = trained_with_model_helpers(contexts, kvstore)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_create_kvstore_needs_no_store_for_one_local_device() -> None:
    assert mx.model._create_kvstore("local", 1, {}) == (None, False)


def test_param_names_that_do_not_match_the_arrays_are_refused_by_name() -> None:
    weights = [[mx.nd.ones((2,))], [mx.nd.ones((3,))]]
    with pytest.raises(DataError, match=r"_update_params: param_names has 1 names for 2 parameters"):
        mx.model._update_params(weights, weights, lambda *a: None, 1, None, ["w"])


def test_initialize_kvstore_names_a_parameter_missing_from_arg_params() -> None:
    store = mx.kv.create("local")
    with pytest.raises(DataError, match=r"_initialize_kvstore: arg_params has no value for \['b'\]"):
        mx.model._initialize_kvstore(
            store, [[mx.nd.ones((2,))], [mx.nd.ones((2,))]], {"a": mx.nd.ones((2,))}, ["a", "b"], True
        )
