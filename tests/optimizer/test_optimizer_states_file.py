"""Optimizer states on disk: MXNet's layout (read without running code), earlier NDArray-format files still read."""

from __future__ import annotations

import pickle
import pickletools
import re
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
from lazynd.errors import FormatError, LazyNDError
from lazynd.formats import ndarray_file
from lazynd.formats.ndarray_record import ArrayRecord
from lazynd.optimizer.states_file import load_states, save_states

GRADS = [np.array([1.0, -2.0, 0.5], np.float32), np.array([0.25, 1.0, -1.0], np.float32)]


def _trained_updater(optimizer: str, **kwargs):
    updater = mx.optimizer.get_updater(mx.optimizer.create(optimizer, learning_rate=0.1, **kwargs))
    for key in (0, "fc1_weight"):
        weight = mx.nd.ones((3,))
        for grad in GRADS:
            updater(key, mx.nd.array(grad), weight)
    return updater


def _as_numpy(state):
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(s.asnumpy() for s in state)
    return state.asnumpy()


@pytest.mark.parametrize(
    ("optimizer", "kwargs"),
    [("sgd", {"momentum": 0.9}), ("sgd", {}), ("adam", {}), ("rmsprop", {"centered": True})],
    ids=["sgd-momentum (array)", "sgd (None)", "adam (tuple)", "rmsprop-centered (tuple of 3)"],
)
def test_array_states_are_saved_in_mxnets_layout_and_restored(optimizer, kwargs, tmp_path: Path) -> None:
    # MXNet 1.9.1's Module.load(..., load_optimizer_states=True) reads this file: its only globals are
    # MXNet's NDArray and bytearray, which is also all lazynd's reader of such files will resolve
    path = tmp_path / "opt.states"
    trained = _trained_updater(optimizer, **kwargs)
    save_states(trained, str(path))
    globals_named = {arg for op, arg, _ in pickletools.genops(path.read_bytes()) if op.name == "GLOBAL"}
    assert globals_named <= {"mxnet.ndarray.ndarray NDArray", "builtins bytearray"}
    restored = mx.optimizer.get_updater(mx.optimizer.create(optimizer, learning_rate=0.1, **kwargs))
    load_states(restored, str(path))
    assert list(restored.states) == [0, "fc1_weight"]
    for key, state in trained.states.items():
        got, want = _as_numpy(restored.states[key]), _as_numpy(state)
        if want is None:
            assert got is None
        else:
            np.testing.assert_equal(got, want)


def test_kvstore_continues_training_after_a_state_round_trip(tmp_path: Path) -> None:
    def store() -> lazynd_kv.KVStore:
        kv = lazynd_kv.create("local")
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
        return kv

    def pulled(kv: lazynd_kv.KVStore) -> np.ndarray:
        out = mx.nd.zeros((3,))
        kv.pull("w", out=out)
        return out.asnumpy()

    trained = store()
    trained.init("w", mx.nd.ones((3,)))
    for grad in GRADS:
        trained.push("w", mx.nd.array(grad))
    trained.save_optimizer_states(str(tmp_path / "opt.states"))
    restored = store()
    restored.init("w", mx.nd.array(pulled(trained)))
    restored.load_optimizer_states(str(tmp_path / "opt.states"))
    for kv in (trained, restored):
        kv.push("w", mx.nd.array(GRADS[0]))
    np.testing.assert_allclose(pulled(restored), pulled(trained), rtol=1e-6)


def test_restored_states_keep_their_structure(tmp_path: Path) -> None:
    path = tmp_path / "opt.states"
    updater = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    updater(3, mx.nd.ones((2,)), mx.nd.ones((2,)))
    updater.states["none"] = None
    updater.states["list"] = [mx.nd.ones((1,)), mx.nd.zeros((2, 2), dtype="float16")]
    save_states(updater, str(path))
    restored = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    load_states(restored, str(path))
    assert list(restored.states) == [3, "none", "list"]
    assert isinstance(restored.states[3], tuple) and len(restored.states[3]) == 2
    assert restored.states["none"] is None
    assert isinstance(restored.states["list"], list)
    assert restored.states["list"][1].dtype == np.float16
    for got, want in zip(restored.states[3], updater.states[3], strict=True):
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_old_pickled_states_still_load(tmp_path: Path) -> None:
    path = tmp_path / "old.states"
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.states = {0: mx.nd.array([1.0, 2.0, 3.0])}
    path.write_bytes(updater.get_states())  # what earlier versions wrote
    restored = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    load_states(restored, str(path))
    np.testing.assert_array_equal(restored.states[0].asnumpy(), [1.0, 2.0, 3.0])


def test_states_that_are_not_arrays_fall_back_to_pickle(tmp_path: Path) -> None:
    path = tmp_path / "opt.states"
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    updater.states = {0: 5, 1: mx.nd.ones((2,))}
    save_states(updater, str(path))
    assert pickle.loads(path.read_bytes())[0] == 5
    restored = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    load_states(restored, str(path))
    assert restored.states[0] == 5


def test_states_saved_before_the_first_update_load(tmp_path: Path) -> None:
    # an updater with no states writes a file of no arrays, which MXNet's format reads as an empty list
    path = tmp_path / "fresh.states"
    save_states(mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9)), str(path))
    restored = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    load_states(restored, str(path))
    assert restored.states == {}


def test_a_module_checkpoint_with_optimizer_states_before_training_loads(tmp_path: Path) -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    module = mx.mod.Module(net, label_names=None)
    module.bind(data_shapes=[("data", (1, 3))])
    module.init_params()
    module.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    prefix = str(tmp_path / "m")
    module.save_checkpoint(prefix, 0, save_optimizer_states=True)
    loaded = mx.mod.Module.load(prefix, 0, load_optimizer_states=True, label_names=None)
    loaded.bind(data_shapes=[("data", (1, 3))])
    loaded.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    loaded.forward(mx.io.DataBatch([mx.nd.ones((1, 3))]), is_train=True)
    loaded.backward([mx.nd.ones((1, 2))])
    loaded.update()
    assert loaded.get_params()[0]["fc_weight"].shape == (2, 3)


def test_a_params_file_is_not_taken_for_optimizer_states(tmp_path: Path) -> None:
    path = tmp_path / "w.params"
    mx.nd.save(str(path), {"arg:fc_weight": mx.nd.ones((2,))})
    kv = lazynd_kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd"))
    with pytest.raises(FormatError, match="w.params.*not an optimizer state name"):
        kv.load_optimizer_states(str(path))


def _earlier_ndarray_format_file(path: Path) -> None:
    """What lazynd wrote before its states files took MXNet's layout: arrays named [key, layout, position]."""
    named = {
        '[0, "array", 0]': ArrayRecord(np.array([1.0, 2.0], dtype=np.float32)),
        '["fc1_weight", "none", 0]': ArrayRecord(None),
        '[3, "tuple", 1]': ArrayRecord(np.array([4.0], dtype=np.float16)),
        '[3, "tuple", 0]': ArrayRecord(np.array([3.0], dtype=np.float32)),
    }
    path.write_bytes(ndarray_file.encode(named))


def test_states_files_in_the_earlier_ndarray_format_still_load(tmp_path: Path) -> None:
    path = tmp_path / "opt.states"
    _earlier_ndarray_format_file(path)
    restored = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    load_states(restored, str(path))
    assert list(restored.states) == [0, "fc1_weight", 3]
    assert restored.states["fc1_weight"] is None
    np.testing.assert_array_equal(restored.states[0].asnumpy(), [1.0, 2.0])
    assert [part.asnumpy().tolist() for part in restored.states[3]] == [[3.0], [4.0]]
    assert restored.states[3][1].dtype == np.float16


def test_array_states_need_lazynds_updater(tmp_path: Path) -> None:
    path = tmp_path / "opt.states"
    _earlier_ndarray_format_file(path)

    class OwnUpdater:
        def __call__(self, key, grad, weight):
            pass

        def get_states(self):
            return b""

        def set_states(self, states):
            pass

    with pytest.raises(LazyNDError, match="only lazynd's Updater"):
        load_states(OwnUpdater(), str(path))


def test_load_optimizer_states_warns_about_pickle_in_its_docstring() -> None:
    doc = lazynd_kv.KVStore.load_optimizer_states.__doc__ or ""
    assert "pickl" in doc and "trust" in doc


@pytest.mark.parametrize(
    "content, error",
    [
        (b"\x80\x04\x95\x10\x00\x00", "could not unpickle the states"),  # an MXNet states file cut short
        (b"cmxnet.optimizer.optimizer\nAdam\n.", r"mxnet\.optimizer\.optimizer\.Adam"),  # dump_optimizer=True
    ],
)
def test_a_states_file_that_cannot_be_read_is_named_in_the_error(content, error, tmp_path: Path) -> None:
    path = tmp_path / "model-0001.states"
    path.write_bytes(content)
    store = mx.kv.create("local")
    store.set_optimizer(mx.optimizer.create("adam"))
    with pytest.raises(LazyNDError, match=f"{re.escape(repr(str(path)))}: .*{error}"):
        store.load_optimizer_states(str(path))
