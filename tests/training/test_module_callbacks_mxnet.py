"""Module.fit's ``eval_end_callback``, ``score(score_end_callback=)``, ``prepare`` and ``sparse_row_id_fn``.

The callback sequences are MXNet 1.9.1's for the same calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def _module_and_iter() -> tuple[mx.mod.Module, mx.io.NDArrayIter]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 3)).astype(np.float32)
    it = mx.io.NDArrayIter(x, (x.sum(1) > 0).astype(np.float32), batch_size=20)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    return mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"), context=mx.cpu()), it


def test_fit_calls_eval_end_callback_after_each_validation() -> None:
    mod, it = _module_and_iter()
    seen: list = []
    mod.fit(
        it,
        eval_data=it,
        num_epoch=2,
        eval_end_callback=lambda p: seen.append((p.epoch, p.nbatch, p.eval_metric.get()[0])),
        eval_batch_end_callback=lambda p: seen.append(("b", p.nbatch)),
    )
    epoch = [("b", 0), ("b", 1), ("b", 2)]
    assert seen == [*epoch, (0, 3, "accuracy"), *epoch, (1, 3, "accuracy")]


def test_score_end_callbacks_get_the_number_of_batches_scored() -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    ends: list = []
    mod.score(it, "acc", num_batch=2, score_end_callback=[lambda p: ends.append((p.epoch, p.nbatch)), ends.append])
    assert ends[0] == (0, 2) and len(ends) == 2


def test_prepare_accepts_a_batch_and_sparse_row_ids_are_refused() -> None:
    mod, it = _module_and_iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    mod.prepare(next(iter(it)))
    with pytest.raises(mx.LazyNDError, match="prepare: sparse_row_id_fn"):
        mod.prepare(next(iter(it)), sparse_row_id_fn=lambda batch: {})
    with pytest.raises(mx.LazyNDError, match="fit: sparse_row_id_fn"):
        mod.fit(it, num_epoch=1, sparse_row_id_fn=lambda batch: {})
