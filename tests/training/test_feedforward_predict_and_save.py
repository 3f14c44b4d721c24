"""A fitted FeedForward: predict, save and load, checkpoints each epoch, pickling."""

from __future__ import annotations

import numpy as np
import pytest
from blob_problem import fitted_feedforward, two_class_blobs, two_class_net

import lazynd as mx
from lazynd.callback import do_checkpoint
from lazynd.errors import DataError
from lazynd_sym.model import FeedForward


def test_predict_removes_padding_and_gives_probabilities() -> None:
    ff = fitted_feedforward(num_epoch=1)
    data, _ = two_class_blobs(45)
    probs = ff.predict(data)
    assert probs.shape == (45, 2)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_save_and_load_give_the_same_predictions(tmp_path) -> None:
    ff = fitted_feedforward(num_epoch=2)
    prefix = str(tmp_path / "blob")
    ff.save(prefix)
    loaded = FeedForward.load(prefix, 2)
    data, _ = two_class_blobs(30, seed=2)
    np.testing.assert_allclose(loaded.predict(data), ff.predict(data), rtol=1e-6)
    assert loaded.begin_epoch == 2


def test_do_checkpoint_callback_writes_each_epoch(tmp_path) -> None:
    data, label = two_class_blobs(80)
    prefix = str(tmp_path / "ck")
    FeedForward(two_class_net(), num_epoch=2, numpy_batch_size=40, progress_bar=False).fit(
        data, label, epoch_end_callback=do_checkpoint(prefix)
    )
    assert (tmp_path / "ck-0001.params").exists() and (tmp_path / "ck-0002.params").exists()


def test_predict_before_fit_raises() -> None:
    with pytest.raises(DataError, match="no parameters"):
        FeedForward(two_class_net()).predict(np.zeros((4, 5)))


def _small_model() -> tuple:
    import numpy as np

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

    model, x, y = _small_model()
    before = model.predict(mx.io.NDArrayIter(x, y, batch_size=5))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(again.predict(mx.io.NDArrayIter(x, y, batch_size=5)), before)


def test_predict_returns_the_data_and_labels_it_ran_when_asked() -> None:
    import numpy as np

    model, x, y = _small_model()
    outputs, data, label = model.predict(mx.io.NDArrayIter(x, y, batch_size=5), return_data=True)
    assert outputs.shape == (22, 3)  # the padding of the last batch removed
    np.testing.assert_array_equal(data, x)
    np.testing.assert_array_equal(label, y)
