"""mx.rnn.BucketSentenceIter: sentences with no words (MXNet 1.9.1 makes a bucket of length 0 from them
when it picks the buckets, and fails with an IndexError shifting its labels) and the layouts it takes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def test_default_buckets_put_empty_sentences_all_padding_in_the_shortest_bucket():
    sentences = [[], [], [1], [2], [3, 4], [5, 6]]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, invalid_label=0)
    assert it.buckets == [1, 2] and it.default_bucket_key == 2
    rows = sorted(row for batch in it if batch.bucket_key == 1 for row in batch.data[0].asnumpy().tolist())
    assert rows == [[0.0], [0.0], [1.0], [2.0]]


def test_default_buckets_of_only_empty_sentences_name_the_batch_size():
    with pytest.raises(LazyNDError, match="no bucket holds 2 sentences; give buckets"):
        mx.rnn.BucketSentenceIter([[], [], []], batch_size=2)


def test_given_bucket_of_length_zero_is_refused_by_name():
    with pytest.raises(LazyNDError, match=r"buckets must be positive lengths, got \[0, 3\]"):
        mx.rnn.BucketSentenceIter([[], [1, 2]], batch_size=1, buckets=[3, 0])


def test_empty_sentences_in_given_buckets_are_all_padding_with_padding_labels():
    it = mx.rnn.BucketSentenceIter([[], [7, 8]], batch_size=2, buckets=[2], invalid_label=-1)
    batch = next(iter(it))
    data = sorted(batch.data[0].asnumpy().tolist())
    assert data == [[-1.0, -1.0], [7.0, 8.0]]
    label = batch.label[0].asnumpy()
    np.testing.assert_array_equal(label[:, -1], [-1, -1])


@pytest.mark.parametrize(("layout", "shape"), [("NTC", (2, 3)), ("TNC", (3, 2))])
def test_layout_with_a_feature_axis_is_batch_or_time_major_as_in_mxnet(layout, shape):
    # MXNet's tests/python/train/test_bucketing.py passes layout='NTC'; MXNet 1.9.1 gives these shapes
    it = mx.rnn.BucketSentenceIter([[1, 2, 3], [4, 5, 6]], batch_size=2, buckets=[3], layout=layout)
    batch = next(iter(it))
    assert it.provide_data[0].shape == shape and it.provide_data[0].layout == layout
    assert batch.data[0].shape == shape and batch.provide_data[0].layout == layout


def test_layout_without_batch_and_time_first_is_refused_by_name():
    with pytest.raises(LazyNDError, match="layout must start with 'NT'.*got 'TCN'"):
        mx.rnn.BucketSentenceIter([[1, 2, 3], [4, 5, 6]], batch_size=2, buckets=[3], layout="TCN")
