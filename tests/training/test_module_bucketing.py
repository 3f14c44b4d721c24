"""BucketingModule: a module per bucket key, all training one set of weights."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, FormatError, ShapeError


def _sym_gen(length: int):
    """A sequence classifier whose parameters do not depend on the length: mean over time, then two layers."""
    data = sym.Variable("data")  # (batch, length, 4)
    net = sym.mean(data, axis=1, name=f"mean{length}")
    net = sym.FullyConnected(net, num_hidden=8, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=2, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)


class _BucketIter(mx.io.DataIter):
    """Batches of sequences of two lengths, alternating; the class decides the sign of the features."""

    def __init__(self, lengths=(5, 3), batches: int = 8, batch_size: int = 10, seed: int = 0) -> None:
        super().__init__(batch_size)
        rng = np.random.default_rng(seed)
        self.batches = []
        for k in range(batches):
            length = lengths[k % len(lengths)]
            label = rng.integers(0, 2, batch_size).astype(np.float32)
            data = rng.normal(size=(batch_size, length, 4)).astype(np.float32) + (label[:, None, None] * 2 - 1)
            self.batches.append((length, data, label))
        self.default_bucket_key = max(lengths)
        self.cursor = 0

    @property
    def provide_data(self) -> list[mx.io.DataDesc]:
        return [mx.io.DataDesc("data", (self.batch_size, self.default_bucket_key, 4))]

    @property
    def provide_label(self) -> list[mx.io.DataDesc]:
        return [mx.io.DataDesc("softmax_label", (self.batch_size,))]

    def reset(self) -> None:
        self.cursor = 0

    def next(self) -> mx.io.DataBatch:
        if self.cursor == len(self.batches):
            raise StopIteration
        length, data, label = self.batches[self.cursor]
        self.cursor += 1
        return mx.io.DataBatch(
            [mx.nd.array(data)],
            [mx.nd.array(label)],
            bucket_key=length,
            provide_data=[mx.io.DataDesc("data", data.shape)],
            provide_label=[mx.io.DataDesc("softmax_label", label.shape)],
        )


def _start_params() -> dict[str, mx.NDArray]:
    rng = np.random.default_rng(1)
    shapes = {"fc1_weight": (8, 4), "fc1_bias": (8,), "fc2_weight": (2, 8), "fc2_bias": (2,)}
    return {n: mx.nd.array(rng.normal(scale=0.3, size=s).astype(np.float32)) for n, s in shapes.items()}


def _ready(mod: mx.mod.BaseModule, data: _BucketIter) -> mx.mod.BaseModule:
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(arg_params=_start_params())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.2, "momentum": 0.9})
    return mod


def test_two_bucket_keys_share_the_parameter_arrays() -> None:
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    mod.switch_bucket(3, [("data", (10, 3, 4))], [("softmax_label", (10,))])
    long_exe = mod._buckets[5]._exec_group.execs[0]
    short_exe = mod._buckets[3]._exec_group.execs[0]
    assert short_exe.arg_dict["data"].shape == (10, 3, 4) and long_exe.arg_dict["data"].shape == (10, 5, 4)
    for name in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
        assert short_exe.arg_dict[name] is long_exe.arg_dict[name]
        assert short_exe.grad_dict[name] is long_exe.grad_dict[name]
    before = long_exe.arg_dict["fc1_weight"].asnumpy()
    batch = data.batches[1]  # a short one
    mod.forward(mx.io.DataBatch([mx.nd.array(batch[1])], [mx.nd.array(batch[2])], bucket_key=3), is_train=True)
    mod.backward()
    mod.update()
    after = long_exe.arg_dict["fc1_weight"].asnumpy()  # the long bucket sees the short bucket's update
    assert not np.allclose(after, before)
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), after)


def test_unnamed_layers_get_the_same_automatic_names_in_every_bucket() -> None:
    # MXNet runs sym_gen under a fresh NameManager: an unnamed layer is ``fullyconnected0`` in every
    # bucket, so the short bucket shares the default bucket's weights (lazynd gave it
    # ``fullyconnected1_weight``, an array of its own that training never touched)
    def unnamed(length: int):
        net = sym.FullyConnected(sym.mean(sym.Variable("data"), axis=1), num_hidden=2)
        return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(unnamed, default_bucket_key=5)
    mod.bind([("data", (4, 5, 3))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Uniform(1.0))
    mod.switch_bucket(3, [("data", (4, 3, 3))], [("softmax_label", (4,))])
    assert mod._buckets[3].symbol.list_arguments() == mod._buckets[5].symbol.list_arguments()
    assert sorted(mod.get_params()[0]) == ["fullyconnected0_bias", "fullyconnected0_weight"]
    outputs = []
    for length in (5, 3):
        batch = mx.io.DataBatch([mx.nd.ones((4, length, 3))], [mx.nd.zeros((4,))], bucket_key=length)
        mod.forward(batch, is_train=False)
        outputs.append(mod.get_outputs()[0].asnumpy())
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-6)


def test_training_over_two_buckets_equals_one_module_fed_the_same_batches() -> None:
    data = _BucketIter()
    bucketing = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    single = _ready(mx.mod.Module(_sym_gen(5)[0]), data)  # runs each batch length on its own executors
    for mod in (bucketing, single):
        data.reset()
        for batch in data:
            mod.forward_backward(batch)
            mod.update()
    assert sorted(bucketing._buckets) == [3, 5]
    expected = {n: v.asnumpy() for n, v in single.get_params()[0].items()}
    for name, value in bucketing.get_params()[0].items():
        np.testing.assert_allclose(value.asnumpy(), expected[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_fit_over_buckets_learns() -> None:
    mx.random.seed(0)
    data = _BucketIter(batches=20)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=data.default_bucket_key)
    mod.fit(data, num_epoch=3, initializer=mx.init.Xavier(), optimizer_params={"learning_rate": 0.2})
    assert mod.score(_BucketIter(seed=1), "acc")[0][1] > 0.9
    assert sorted(mod.get_params()[0]) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def test_save_checkpoint_keeps_the_default_buckets_symbol(tmp_path) -> None:
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    mod.save_checkpoint(str(tmp_path / "rnn"), 1, save_optimizer_states=True)
    loaded = mx.mod.Module.load(str(tmp_path / "rnn"), 1)
    assert loaded.symbol.tojson() == _sym_gen(5)[0].tojson()


def test_save_checkpoints_third_positional_argument_is_remove_amp_cast_as_in_mxnet(tmp_path) -> None:
    # MXNet 1.9.1: BucketingModule.save_checkpoint(prefix, epoch, remove_amp_cast=False) writes no .states
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), _BucketIter())
    mod.save_checkpoint(str(tmp_path / "rnn"), 1, True)
    assert not list(tmp_path.glob("*.states"))


def test_save_checkpoint_writes_the_files_mxnets_bucketing_load_reads(tmp_path) -> None:
    # MXNet 1.9.1 writes prefix-<key>-symbol.json per bucket and the keys (int32) to prefix.buckets
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), _BucketIter())
    mod.switch_bucket(3, [("data", (10, 3, 4))], [("softmax_label", (10,))])
    mod.save_checkpoint(str(tmp_path / "rnn"), 1)
    names = ["rnn-0001.params", "rnn-3-symbol.json", "rnn-5-symbol.json", "rnn-symbol.json", "rnn.buckets"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    (keys,) = mx.nd.load(str(tmp_path / "rnn.buckets"))
    assert keys.dtype == np.int32 and sorted(keys.asnumpy().tolist()) == [3, 5]
    assert mx.sym.load(str(tmp_path / "rnn-3-symbol.json")).tojson() == _sym_gen(3)[0].tojson()


def test_module_checkpoint_saves_a_bucketing_modules_optimizer_states(tmp_path) -> None:
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), _BucketIter())
    mx.callback.module_checkpoint(mod, str(tmp_path / "rnn"), save_optimizer_states=True)(0)
    assert (tmp_path / "rnn-0001.states").exists()


def test_bucketing_module_load_resumes_from_a_checkpoint(tmp_path) -> None:
    # MXNet 1.x: BucketingModule.load(prefix, epoch, sym_gen, default_bucket_key) (lazynd had none)
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    for batch in data:
        mod.forward_backward(batch)
        mod.update()
    mod.save_checkpoint(str(tmp_path / "rnn"), 2)
    loaded = mx.mod.BucketingModule.load(str(tmp_path / "rnn"), 2, sym_gen=_sym_gen, default_bucket_key=5)
    assert loaded.params_initialized
    loaded.bind(data.provide_data, data.provide_label, for_training=False)
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy(), err_msg=name)
    np.testing.assert_allclose(loaded.predict(data).asnumpy(), mod.predict(data).asnumpy(), rtol=1e-6)
    with pytest.raises(DataError, match="sym_gen and default_bucket_key are required"):
        mx.mod.BucketingModule.load(str(tmp_path / "rnn"), 2)


def test_bucketing_module_load_runs_the_saved_bucket_symbols(tmp_path) -> None:
    # MXNet 1.9.1's load runs prefix-<key>-symbol.json for each key of prefix.buckets (lazynd rebuilt
    # every bucket with sym_gen, so a checkpoint of another graph resumed as sym_gen's, silently)
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    mod.predict(data)  # binds bucket 3 too
    prefix = str(tmp_path / "rnn")
    mod.save_checkpoint(prefix, 1)

    def tanh_gen(length: int):
        net = sym.FullyConnected(sym.mean(sym.Variable("data"), axis=1), num_hidden=8, name="fc1")
        net = sym.FullyConnected(sym.Activation(net, act_type="tanh"), num_hidden=2, name="fc2")
        return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)

    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=tanh_gen, default_bucket_key=5)
    loaded.bind(data.provide_data, data.provide_label, for_training=False)
    np.testing.assert_allclose(loaded.predict(data).asnumpy(), mod.predict(data).asnumpy(), rtol=1e-6)


def test_bucketing_module_load_names_a_missing_or_bad_bucket_file(tmp_path) -> None:
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    mod.predict(data)
    prefix = str(tmp_path / "rnn")
    mod.save_checkpoint(prefix, 1)
    (tmp_path / "rnn-3-symbol.json").unlink()
    with pytest.raises(mx.MissingFileError, match="rnn-3-symbol.json"):
        mx.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=5)
    mx.nd.save(prefix + ".buckets", [mx.nd.array([5.5, 3.0])])
    with pytest.raises(FormatError, match="rnn.buckets: a bucket key file holds one 1-D integer array"):
        mx.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=5)


def test_bucket_errors_are_clear() -> None:
    with pytest.raises(DataError, match="default_bucket_key is required"):
        mx.mod.BucketingModule(_sym_gen)
    # a ValueError too, as MXNet 1.9.1's unpacking of what sym_gen returned raises
    with pytest.raises(ValueError, match="must return \\(symbol, data_names, label_names\\)") as caught:
        mx.mod.BucketingModule(lambda key: _sym_gen(key)[0], default_bucket_key=5)
    assert isinstance(caught.value, DataError)

    def changing(length: int):
        net = sym.FullyConnected(sym.Flatten(sym.Variable("data")), num_hidden=2, name="fc")
        return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(changing, default_bucket_key=5)
    mod.bind([("data", (10, 5, 4))], [("softmax_label", (10,))])
    mod.init_params()
    with pytest.raises(ShapeError, match="'fc_weight' has shape \\(2, 12\\) here but \\(2, 20\\) in the shared module"):
        mod.switch_bucket(3, [("data", (10, 3, 4))], [("softmax_label", (10,))])


def test_load_dict_gives_the_parameters_to_the_buckets(tmp_path) -> None:
    # MXNet 1.9.1: BucketingModule.load_dict(sym_dict, sym_gen, default_bucket_key, arg_params, aux_params)
    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    arg_params, aux_params = mod.get_params()
    loaded = mx.mod.BucketingModule.load_dict({5: _sym_gen(5)[0]}, _sym_gen, 5, arg_params, aux_params)
    assert loaded.params_initialized
    loaded.bind(data.provide_data, data.provide_label, for_training=False)
    np.testing.assert_allclose(loaded.predict(data).asnumpy(), mod.predict(data).asnumpy(), rtol=1e-6)


def test_load_dict_runs_the_symbols_it_is_given() -> None:
    data = _BucketIter()
    net = sym.FullyConnected(sym.mean(sym.Variable("data"), axis=1), num_hidden=3, name="fc9")
    other = sym.SoftmaxOutput(net, name="softmax")
    params = {"fc9_weight": mx.nd.ones((3, 4)), "fc9_bias": mx.nd.zeros((3,))}
    loaded = mx.mod.BucketingModule.load_dict({5: other}, _sym_gen, 5, params, {})
    loaded.bind(data.provide_data, data.provide_label, for_training=False)
    assert loaded.symbol.tojson() == other.tojson()
    loaded.forward(next(iter(data)), is_train=False)  # the first batch is of the default bucket, 5
    assert loaded.get_outputs()[0].shape == (10, 3)


def test_load_dict_names_what_is_missing() -> None:
    with pytest.raises(DataError, match="BucketingModule.load_dict: arg_params must be given"):
        mx.mod.BucketingModule.load_dict({5: _sym_gen(5)[0]}, _sym_gen, 5, None, {})


def test_a_batch_object_holding_data_alone_runs_in_the_default_bucket() -> None:
    # as Module.forward takes one (MXNet's predict tutorial: namedtuple('Batch', ['data']))
    class DataOnly:
        def __init__(self, data: list) -> None:
            self.data = data

    data = _BucketIter()
    mod = _ready(mx.mod.BucketingModule(_sym_gen, default_bucket_key=5), data)
    batch = next(iter(data))  # a batch of the default bucket, 5
    mod.forward(batch, is_train=False)
    want = mod.get_outputs()[0].asnumpy()
    mod.forward(DataOnly(batch.data), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), want, rtol=1e-6)
