"""FeedForward: fit, predict, score, save/load on small synthetic problems."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.callback import do_checkpoint
from lazynd.errors import ContextError, DataError
from lazynd_sym.model import FeedForward


def _net(num_classes: int = 2) -> sym.Symbol:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=16, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=num_classes, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def _blobs(count: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, count)
    data = rng.normal(size=(count, 5)).astype(np.float32) + (label[:, None] * 2.0 - 1.0) * 1.5
    return data, label.astype(np.float32)


def _fitted(**kwargs) -> FeedForward:
    mx.random.seed(0)
    data, label = _blobs()
    ff = FeedForward(
        _net(),
        num_epoch=kwargs.pop("num_epoch", 5),
        numpy_batch_size=40,
        learning_rate=0.1,
        momentum=0.9,
        initializer=mx.init.Xavier(),
        progress_bar=False,
        **kwargs,
    )
    return ff.fit(data, label)


def test_fit_learns_a_separable_problem() -> None:
    ff = _fitted()
    data, label = _blobs(200, seed=1)
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


def test_fit_logs_train_and_validation_metrics(caplog) -> None:
    data, label = _blobs()
    ff = FeedForward(_net(), num_epoch=1, numpy_batch_size=40, learning_rate=0.1, progress_bar=False)
    with caplog.at_level(logging.INFO):
        ff.fit(data, label, eval_data=(data, label), eval_metric=["acc", "ce"])
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[0] Train-accuracy=") for m in messages)
    assert any(m.startswith("Epoch[0] Validation-cross-entropy=") for m in messages)


def test_predict_removes_padding_and_gives_probabilities() -> None:
    ff = _fitted(num_epoch=1)
    data, _ = _blobs(45)
    probs = ff.predict(data)
    assert probs.shape == (45, 2)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_batch_and_epoch_callbacks_are_called() -> None:
    seen_batches, seen_epochs = [], []
    data, label = _blobs(80)
    ff = FeedForward(_net(), num_epoch=2, numpy_batch_size=40, progress_bar=False)
    ff.fit(
        data,
        label,
        batch_end_callback=lambda p: seen_batches.append((p.epoch, p.nbatch)),
        epoch_end_callback=lambda epoch, s, arg, aux: seen_epochs.append((epoch, sorted(arg))),
    )
    assert seen_batches == [(0, 1), (0, 2), (1, 1), (1, 2)]  # MXNet's count of batches done
    assert seen_epochs[1] == (1, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"])


class _LoggedIter(mx.io.NDArrayIter):
    """An NDArrayIter that writes each batch it hands out into ``log``."""

    def __init__(self, log: list, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.log = log

    def next(self) -> mx.io.DataBatch:
        batch = super().next()
        self.log.append(("next", int(batch.label[0].asnumpy()[0])))
        return batch


class _LoggedAccuracy(mx.metric.Accuracy):
    """Accuracy that writes the first label of each batch it scores into ``log``."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log

    def update(self, labels, preds) -> None:
        self.log.append(("metric", int(np.asarray(labels[0])[0])))
        super().update(labels, preds)


def test_fit_scores_each_batch_before_asking_for_the_next() -> None:
    # MXNet 0.9's order: a batch's metric comes before the next batch is made, so an iterator
    # that rewrites the same label array for every batch is scored on the labels of the batch
    # that ran (a batch-end callback sees its own batch scored)
    data, _ = _blobs(120)
    log: list = []
    scored: list = []
    ff = FeedForward(_net(3), num_epoch=1, numpy_batch_size=40, progress_bar=False)
    ff.fit(
        _LoggedIter(log, data, np.array([0.0] * 40 + [1.0] * 40 + [2.0] * 40), batch_size=40),
        eval_metric=_LoggedAccuracy(log),
        batch_end_callback=lambda p: scored.append(p.eval_metric.num_inst),
    )
    assert log == [("next", 0), ("metric", 0), ("next", 1), ("metric", 1), ("next", 2), ("metric", 2)]
    assert scored == [40, 80, 120]


class _ReusedBufferIter(mx.io.DataIter):
    """A user iterator that writes every batch into the same data and label arrays."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int) -> None:
        super().__init__(batch_size)
        self.all_data, self.all_label, self.start = data, label, 0
        self.data_buf = mx.nd.zeros((batch_size, data.shape[1]))
        self.label_buf = mx.nd.zeros((batch_size,))
        self.provide_data = [mx.io.DataDesc("data", self.data_buf.shape)]
        self.provide_label = [mx.io.DataDesc("softmax_label", self.label_buf.shape)]

    def reset(self) -> None:
        self.start = 0

    def next(self) -> mx.io.DataBatch:
        if self.start >= len(self.all_data):
            raise StopIteration
        stop = self.start + self.batch_size
        self.data_buf[:] = self.all_data[self.start : stop]
        self.label_buf[:] = self.all_label[self.start : stop]
        self.start = stop
        return mx.io.DataBatch([self.data_buf], [self.label_buf], pad=0)


def test_fit_scores_an_iterator_that_reuses_its_arrays_on_the_batch_that_ran() -> None:
    data, _ = _blobs(80)
    label = np.array([0.0] * 40 + [1.0] * 40)  # each batch one class: scoring on the wrong one shows
    seen: list = []

    class _Labels(mx.metric.EvalMetric):
        def __init__(self) -> None:
            super().__init__("labels")

        def update(self, labels, preds) -> None:
            first = labels[0].asnumpy() if isinstance(labels[0], mx.nd.NDArray) else np.asarray(labels[0])
            seen.append(float(first[0]))

    ff = FeedForward(_net(), num_epoch=1, progress_bar=False)
    ff.fit(_ReusedBufferIter(data, label, 40), eval_metric=_Labels())
    assert seen == [0.0, 1.0]


class _GeneratorIter(mx.io.DataIter):
    """A DataIter that gives its batches from ``__iter__`` alone, as some user iterators do."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int) -> None:
        super().__init__(batch_size)
        self.data, self.label = data, label
        self.provide_data = [mx.io.DataDesc("data", (batch_size, data.shape[1]))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (batch_size,))]

    def __iter__(self):
        for start in range(0, len(self.data), self.batch_size):
            stop = start + self.batch_size
            yield mx.io.DataBatch([mx.nd.array(self.data[start:stop])], [mx.nd.array(self.label[start:stop])])


def test_fit_takes_an_iterator_that_only_defines_iter() -> None:
    data, label = _blobs(80)
    seen: list = []
    ff = FeedForward(_net(), num_epoch=1, progress_bar=False)
    ff.fit(_GeneratorIter(data, label, 40), batch_end_callback=lambda p: seen.append(p.nbatch))
    assert seen == [1, 2]


def test_save_and_load_give_the_same_predictions(tmp_path) -> None:
    ff = _fitted(num_epoch=2)
    prefix = str(tmp_path / "blob")
    ff.save(prefix)
    loaded = FeedForward.load(prefix, 2)
    data, _ = _blobs(30, seed=2)
    np.testing.assert_allclose(loaded.predict(data), ff.predict(data), rtol=1e-6)
    assert loaded.begin_epoch == 2


def test_do_checkpoint_callback_writes_each_epoch(tmp_path) -> None:
    data, label = _blobs(80)
    prefix = str(tmp_path / "ck")
    FeedForward(_net(), num_epoch=2, numpy_batch_size=40, progress_bar=False).fit(
        data, label, epoch_end_callback=do_checkpoint(prefix)
    )
    assert (tmp_path / "ck-0001.params").exists() and (tmp_path / "ck-0002.params").exists()


def test_init_attribute_overrides_the_initializer() -> None:
    weight = sym.Variable("fc1_weight", init=mx.init.Constant(0.5))
    net = sym.SoftmaxOutput(
        sym.FullyConnected(sym.Variable("data"), weight=weight, num_hidden=2, name="fc1"), name="softmax"
    )
    data, label = _blobs(40)
    ff = FeedForward(net, num_epoch=1, numpy_batch_size=40, learning_rate=0.0, progress_bar=False)
    ff.fit(data, label)
    assert np.all(ff.arg_params["fc1_weight"].asnumpy() == 0.5)


def test_given_arg_params_are_used_and_checked() -> None:
    data, label = _blobs(40)
    ff = FeedForward(
        _net(), num_epoch=1, numpy_batch_size=40, progress_bar=False, arg_params={"fc1_weight": mx.nd.ones((3, 3))}
    )
    with pytest.raises(DataError, match="'fc1_weight' has shape \\(3, 3\\), the symbol needs \\(16, 5\\)"):
        ff.fit(data, label)


def test_create_builds_and_fits() -> None:
    data, label = _blobs(80)
    ff = FeedForward.create(_net(), data, label, num_epoch=1, numpy_batch_size=40, progress_bar=False)
    assert sorted(ff.arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def test_fit_without_labels_raises() -> None:
    with pytest.raises(DataError, match="y is needed"):
        FeedForward(_net(), num_epoch=1, progress_bar=False).fit(np.zeros((4, 5)))


def test_predict_before_fit_raises() -> None:
    with pytest.raises(DataError, match="no parameters"):
        FeedForward(_net()).predict(np.zeros((4, 5)))


def test_a_ctx_that_is_not_a_context_is_refused_with_a_clear_error() -> None:
    with pytest.raises(ContextError, match="ctx must be a Context or a non-empty list of them, got \\[\\]"):
        FeedForward(_net(), ctx=[])


class _RecordingStore:
    """A minimal store without an optimizer: keeps the last pushed gradient per key and hands it back on pull.

    Keys and values come as lists (one value list per key, one array per device), as MXNet's stores take them.
    """

    def __init__(self) -> None:
        self.values: dict = {}
        self.pushes = 0

    def init(self, keys, values) -> None:
        for key, value in zip(keys, values, strict=True):
            self.values[key] = value.copy()

    def push(self, keys, values) -> None:
        for key, per_device in zip(keys, values, strict=True):
            self.pushes += 1
            self.values[key] = per_device[0].copy()

    def pull(self, keys, outs) -> None:
        for key, per_device in zip(keys, outs, strict=True):
            for out in per_device:
                self.values[key].copyto(out)


def test_fit_pushes_and_pulls_every_gradient_through_a_given_store() -> None:
    mx.random.seed(0)
    store = _RecordingStore()
    data, label = _blobs()
    ff = FeedForward(
        _net(),
        num_epoch=3,
        numpy_batch_size=40,
        learning_rate=0.1,
        momentum=0.9,
        initializer=mx.init.Xavier(),
        progress_bar=False,
    )
    ff.fit(data, label, kvstore=store)
    assert store.pushes == 3 * 10 * 4  # epochs x batches x parameters
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


class _PushPullStore(_RecordingStore):
    """The recording store with MXNet 1.x's ``pushpull``, which ``fit`` must use instead of push then pull."""

    def __init__(self) -> None:
        super().__init__()
        self.pushpulls = 0

    def pushpull(self, keys, values, out=None) -> None:
        self.pushpulls += 1
        self.push(keys, values)
        self.pull(keys, values if out is None else out)


def test_fit_sums_gradients_through_pushpull_when_the_store_has_it() -> None:
    mx.random.seed(0)
    store = _PushPullStore()
    data, label = _blobs()
    ff = FeedForward(_net(), num_epoch=3, numpy_batch_size=40, learning_rate=0.1, momentum=0.9, progress_bar=False)
    ff.fit(data, label, kvstore=store)
    assert (store.pushpulls, store.pushes) == (3 * 10, 3 * 10 * 4)  # one call per batch, every parameter
    assert ff.score(mx.io.NDArrayIter(data, label, batch_size=50)) > 0.95


def test_fit_rejects_a_kvstore_that_is_not_a_store() -> None:
    data, label = _blobs(40)
    with pytest.raises(DataError, match="kvstore must be a store name or have init/push/pull, got int"):
        FeedForward(_net(), num_epoch=1, numpy_batch_size=40, progress_bar=False).fit(data, label, kvstore=3)


def test_fit_accepts_a_lazynd_kv_local_store_object() -> None:
    import lazynd_kv

    data, label = _blobs(80)
    ff = FeedForward(_net(), num_epoch=1, numpy_batch_size=40, progress_bar=False)
    ff.fit(data, label, kvstore=lazynd_kv.create("local"))
    assert sorted(ff.arg_params) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def _small_model() -> tuple:
    import numpy as np

    import lazynd as mx

    rng = np.random.default_rng(0)
    x = rng.random((22, 4), dtype=np.float32)
    y = rng.integers(0, 3, 22).astype(np.float32)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3), name="softmax")
    model = mx.model.FeedForward(net, num_epoch=1)
    model.fit(mx.io.NDArrayIter(x, y, batch_size=5))
    return model, x, y


def test_a_model_pickles_after_predict() -> None:
    import pickle

    import numpy as np

    import lazynd as mx

    model, x, y = _small_model()
    before = model.predict(mx.io.NDArrayIter(x, y, batch_size=5))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(again.predict(mx.io.NDArrayIter(x, y, batch_size=5)), before)


def test_predict_returns_the_data_and_labels_it_ran_when_asked() -> None:
    import numpy as np

    import lazynd as mx

    model, x, y = _small_model()
    outputs, data, label = model.predict(mx.io.NDArrayIter(x, y, batch_size=5), return_data=True)
    assert outputs.shape == (22, 3)  # the padding of the last batch removed
    np.testing.assert_array_equal(data, x)
    np.testing.assert_array_equal(label, y)


def test_fit_and_create_take_mxnet_1x_eval_end_callback(tmp_path) -> None:
    # MXNet 1.9.1's fit(..., monitor, eval_end_callback, eval_batch_end_callback) and create(...) pass them on
    data, label = _blobs(40)
    seen: list = []
    model = FeedForward.create(
        _net(),
        mx.io.NDArrayIter(data, label, batch_size=20),
        num_epoch=2,
        eval_data=mx.io.NDArrayIter(data[:30], label[:30], batch_size=20),
        eval_end_callback=lambda p: seen.append((p.epoch, p.nbatch, p.eval_metric.get()[0])),
        eval_batch_end_callback=[lambda p: seen.append(("b", p.nbatch))],
        progress_bar=False,
    )
    assert seen == [("b", 0), ("b", 1), (0, 2, "accuracy"), ("b", 0), ("b", 1), (1, 2, "accuracy")]
    model.save(str(tmp_path / "ff"), 2, remove_amp_cast=True)
    assert (tmp_path / "ff-0002.params").exists()


@pytest.mark.parametrize("contexts", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]], ids=["one", "two"])
def test_an_optimizer_object_gets_the_parameter_names_so_its_multipliers_apply(contexts) -> None:
    # MXNet 1.9.1 gives an Optimizer without names FeedForward's index -> name map
    data = np.random.default_rng(0).normal(size=(24, 4)).astype(np.float32)
    label = (data[:, 0] > 0).astype(np.float32)
    net = sym.FullyConnected(
        sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc1"), num_hidden=2, name="fc2"
    )
    opt = mx.optimizer.SGD(learning_rate=0.5, rescale_grad=0.25)
    opt.set_lr_mult({"fc1_weight": 0.0})
    model = FeedForward(
        sym.SoftmaxOutput(net, name="softmax"), ctx=contexts, num_epoch=1, optimizer=opt,
        initializer=mx.init.Constant(0.1), numpy_batch_size=4,
    )  # fmt: skip
    model.fit(mx.io.NDArrayIter(data, label, batch_size=4))
    np.testing.assert_array_equal(model.arg_params["fc1_weight"].asnumpy(), np.full((3, 4), 0.1, np.float32))
    assert not np.allclose(model.arg_params["fc2_weight"].asnumpy(), 0.1)
