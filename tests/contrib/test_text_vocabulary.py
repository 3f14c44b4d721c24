"""mx.contrib.text: counting tokens and indexing them in a Vocabulary, as MXNet 1.x does."""

from __future__ import annotations

from collections import Counter

import pytest

import lazynd as mx

COUNTS = Counter(["x", "y", "y", "z", "z", "z", "w"])


def test_count_tokens_splits_at_both_delimiters_and_skips_empty_pieces():
    counted = mx.contrib.text.utils.count_tokens_from_str("  A b\n\na  B\n", " ", "\n")
    assert counted == Counter({"A": 1, "b": 1, "a": 1, "B": 1})


def test_count_tokens_lower_cases_and_adds_to_the_given_counter():
    base = Counter({"a": 3})
    counted = mx.contrib.text.utils.count_tokens_from_str("A--a..b", "--", "..", to_lower=True, counter_to_update=base)
    assert counted is base
    assert counted == Counter({"a": 5, "b": 1})


def test_vocabulary_orders_by_frequency_then_token_after_unknown_and_reserved():
    vocab = mx.contrib.text.vocab.Vocabulary(COUNTS, reserved_tokens=["<pad>"])
    assert vocab.idx_to_token == ["<unk>", "<pad>", "z", "y", "w", "x"]
    assert vocab.reserved_tokens == ["<pad>"]
    assert len(vocab) == 6


def test_vocabulary_caps_counted_tokens_and_skips_rare_ones():
    vocab = mx.contrib.text.vocab.Vocabulary(COUNTS, most_freq_count=1, min_freq=2, reserved_tokens=["y"])
    assert vocab.token_to_idx == {"<unk>": 0, "y": 1, "z": 2}


def test_vocabulary_does_not_index_the_unknown_token_twice():
    vocab = mx.contrib.text.vocab.Vocabulary(COUNTS, unknown_token="z")
    assert vocab.idx_to_token == ["z", "y", "w", "x"]


def test_vocabulary_takes_tuple_tokens():
    vocab = mx.contrib.text.vocab.Vocabulary(Counter([("a", "b"), ("a", "b"), ("c", "d")]))
    assert vocab.to_indices(("a", "b")) == 1
    assert vocab.to_tokens([2]) == [("c", "d")]


def test_to_indices_and_to_tokens_map_single_tokens_and_lists():
    vocab = mx.contrib.text.vocab.Vocabulary(COUNTS)
    assert vocab.to_indices("z") == 1
    assert vocab.to_indices(["y", "nowhere"]) == [2, 0]
    assert vocab.to_tokens(3) == "w"
    assert vocab.to_tokens([0, 1]) == ["<unk>", "z"]


def test_to_tokens_refuses_an_index_out_of_range_as_a_value_error():
    vocab = mx.contrib.text.vocab.Vocabulary(COUNTS)
    with pytest.raises(mx.LazyNDError, match="index 5 .*\\[0, 5\\)"):
        vocab.to_tokens(5)
    with pytest.raises(ValueError):
        vocab.to_tokens([-1])


@pytest.mark.parametrize(
    ("min_freq", "reserved", "named"),
    [(0, None, "min_freq"), (1, ["a", "a"], "repeat"), (1, ["<unk>"], "unknown_token")],
)
def test_vocabulary_refuses_bad_arguments_as_assertion_errors(min_freq, reserved, named):
    with pytest.raises(AssertionError, match=named):
        mx.contrib.text.vocab.Vocabulary(COUNTS, min_freq=min_freq, reserved_tokens=reserved)
