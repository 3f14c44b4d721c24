"""Sentences for recurrent networks (MXNet 1.x's ``mx.rnn.io``): ``encode_sentences`` turns words into
integer ids, ``BucketSentenceIter`` batches them by length for a ``BucketingModule``.

Examples
--------
>>> import lazynd as mx
>>> coded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=0, start_label=1)
>>> coded
[[1, 2], [2, 3, 1]]
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazynd.errors import LazyNDError, TextRuleError
from lazynd.io import DataBatch, DataDesc, DataIter


def encode_sentences(
    sentences: Sequence[Sequence[Any]],
    vocab: dict[Any, int] | None = None,
    invalid_label: int = -1,
    invalid_key: Any = "\n",
    start_label: int = 0,
    unknown_token: Any = None,
) -> tuple[list[list[int]], dict[Any, int]]:
    """Each sentence as a list of word ids, and the vocabulary (word -> id).

    Without ``vocab`` a new one is built, ids counting from ``start_label`` (skipping
    ``invalid_label``, which ``invalid_key`` holds).  With a ``vocab``, an unknown word is an error,
    unless ``unknown_token`` is given: unknown words then share that token's id (added if new, after
    the vocabulary's ids).
    """
    new_vocab = vocab is None
    if vocab is None:
        # a new vocabulary counts from start_label, stepping over invalid_label wherever it falls
        vocab = {invalid_key: invalid_label}
        next_id = start_label
    else:
        # past the ids taken: MXNet counts from start_label again when given a vocab, and gave an
        # unknown_token the id of a word already there
        next_id = max([start_label, *(i + 1 for i in vocab.values() if isinstance(i, int))])
    coded_sentences = []
    for sentence in sentences:
        coded = []
        for word in sentence:
            if word not in vocab:
                if not new_vocab and unknown_token is None:
                    # an AssertionError too: MXNet asserts here, and programs encoding a test set with the
                    # training vocabulary catch it as one
                    raise TextRuleError(
                        f"encode_sentences: unknown word {word!r} (give unknown_token to map such words)"
                    )
                if unknown_token is not None:
                    word = unknown_token
                if word not in vocab:
                    if next_id == invalid_label:
                        next_id += 1
                    vocab[word] = next_id
                    next_id += 1
            coded.append(vocab[word])
        coded_sentences.append(coded)
    return coded_sentences, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences, each padded with ``invalid_label`` to its bucket's length; the
    label is the sentence shifted left by one (the next word).  ``buckets`` defaults to every length
    but 0 with at least ``batch_size`` sentences (empty sentences join the shortest bucket); longer sentences than the last bucket are dropped, and so are
    buckets no sentence falls in (``buckets`` then lists those used, the longest is ``default_bucket_key``).
    ``layout`` 'NT' (or 'NTC') gives (batch, time) arrays, 'TN' (or 'TNC') (time, batch).  Batches come in random order.
    """

    def __init__(
        self,
        sentences: Sequence[Sequence[int]],
        batch_size: int,
        buckets: Sequence[int] | None = None,
        invalid_label: int = -1,
        data_name: str = "data",
        label_name: str = "softmax_label",
        dtype: Any = "float32",
        layout: str = "NT",
    ) -> None:
        super().__init__(batch_size)
        # MXNet reads only where 'N' is: a layout naming a feature axis after the two ('NTC', as
        # MXNet's own bucketing test passes) is batch or time major like 'NT' or 'TN'
        if not isinstance(layout, str) or layout[:2] not in ("NT", "TN"):
            raise LazyNDError(
                f"BucketSentenceIter: layout must start with 'NT' (batch major) or 'TN' (time major), got {layout!r}"
            )
        if not buckets:
            # length 0 is no bucket (a batch with no steps has no label to shift): empty sentences
            # go, all padding, to the shortest bucket, as they do when buckets are given
            counts = np.bincount([len(s) for s in sentences]) if len(sentences) else np.zeros(0, int)
            buckets = [length for length, count in enumerate(counts) if length and count >= batch_size]
        if not buckets:
            raise LazyNDError(f"BucketSentenceIter: no bucket holds {batch_size} sentences; give buckets")
        if min(buckets) < 1:
            raise LazyNDError(f"BucketSentenceIter: buckets must be positive lengths, got {sorted(buckets)}")
        self.buckets = sorted(buckets)
        rows: list[list[np.ndarray]] = [[] for _ in self.buckets]
        discarded = 0
        for sentence in sentences:
            bucket = bisect.bisect_left(self.buckets, len(sentence))
            if bucket == len(self.buckets):
                discarded += 1
                continue
            row = np.full((self.buckets[bucket],), invalid_label, dtype=dtype)
            row[: len(sentence)] = sentence
            rows[bucket].append(row)
        if discarded:
            print(f"WARNING: discarded {discarded} sentences longer than the largest bucket.")
        # as MXNet 1.9.1: a bucket no sentence falls in is dropped, so the default bucket is the longest used
        used = [(length, r) for length, r in zip(self.buckets, rows, strict=True) if r]
        if not used:
            raise LazyNDError(
                f"BucketSentenceIter: none of the {len(sentences)} sentences fits the buckets {self.buckets}"
            )
        self.buckets = [length for length, _ in used]
        self.data = [np.asarray(r, dtype=dtype).reshape(len(r), length) for length, r in used]
        self.batch_size = batch_size
        self.data_name, self.label_name = data_name, label_name
        self.dtype, self.invalid_label, self.layout = dtype, invalid_label, layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(self.buckets)
        shape = self._shape(self.default_bucket_key)
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [
            (i, j) for i, bucket in enumerate(self.data) for j in range(0, len(bucket) - batch_size + 1, batch_size)
        ]
        self.curr_idx = 0
        self.nddata: list[Any] = []
        self.ndlabel: list[Any] = []
        self.reset()

    def _shape(self, length: int) -> tuple[int, int]:
        return (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)

    def reset(self) -> None:
        """Shuffle the batches and the sentences in each bucket; start over."""
        from lazynd import ndarray as nd

        self.curr_idx = 0
        random.shuffle(self.idx)
        for bucket in self.data:
            np.random.shuffle(bucket)
        self.nddata, self.ndlabel = [], []
        for bucket in self.data:
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(bucket, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j : j + self.batch_size]
        label = self.ndlabel[i][j : j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch(
            [data],
            [label],
            pad=0,
            bucket_key=self.buckets[i],
            provide_data=[DataDesc(self.data_name, data.shape, layout=self.layout)],
            provide_label=[DataDesc(self.label_name, label.shape, layout=self.layout)],
        )
