"""mx.contrib.text.embedding: vectors read from a text file, re-indexed by a vocabulary, joined."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import lazynd as mx

text = mx.contrib.text


@pytest.fixture
def vectors_file(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("p 1 2 3\nq 4 5 6\n<oov> 7 8 9\n")
    return str(path)


def test_custom_embedding_reads_tokens_and_fills_the_unknown_row(vectors_file):
    embedding = text.embedding.CustomEmbedding(vectors_file, init_unknown_vec=mx.nd.ones)
    assert embedding.idx_to_token == ["<unk>", "p", "q", "<oov>"]
    assert embedding.vec_len == 3
    np.testing.assert_allclose(embedding.idx_to_vec[0].asnumpy(), [1, 1, 1])
    np.testing.assert_allclose(embedding.get_vecs_by_tokens("q").asnumpy(), [4, 5, 6])


def test_custom_embedding_takes_the_unknown_vector_from_the_file(vectors_file):
    embedding = text.embedding.CustomEmbedding(vectors_file, unknown_token="<oov>")
    assert len(embedding) == 3
    vectors = embedding.get_vecs_by_tokens(["P", "P"], lower_case_backup=False).asnumpy()
    np.testing.assert_allclose(vectors, [[7, 8, 9], [7, 8, 9]])
    upper = embedding.get_vecs_by_tokens(["P"], lower_case_backup=True).asnumpy()
    np.testing.assert_allclose(upper, [[1, 2, 3]])


@pytest.mark.parametrize("bad_line", ["r\n", "r 1 2\n"])
def test_custom_embedding_refuses_a_line_without_a_full_vector(tmp_path, bad_line):
    path = tmp_path / "bad.txt"
    path.write_text("p 1 2 3\n" + bad_line)
    with pytest.raises(AssertionError, match="line 2"):
        text.embedding.CustomEmbedding(str(path))


def test_custom_embedding_with_a_vocabulary_is_indexed_by_it(vectors_file):
    vocab = text.vocab.Vocabulary(Counter(["q", "q", "s"]), reserved_tokens=["<pad>"])
    embedding = text.embedding.CustomEmbedding(vectors_file, vocabulary=vocab)
    assert embedding.idx_to_token == ["<unk>", "<pad>", "q", "s"]
    assert embedding.reserved_tokens == ["<pad>"]
    np.testing.assert_allclose(embedding.idx_to_vec.asnumpy(), [[0, 0, 0], [0, 0, 0], [4, 5, 6], [0, 0, 0]])


def test_update_token_vectors_sets_rows_and_checks_tokens_and_shape(vectors_file):
    embedding = text.embedding.CustomEmbedding(vectors_file)
    embedding.update_token_vectors(["p", "<unk>"], mx.nd.array([[0, 0, 1], [2, 2, 2]]))
    embedding.update_token_vectors("q", mx.nd.array([3, 3, 3]))
    np.testing.assert_allclose(embedding.idx_to_vec.asnumpy()[:3], [[2, 2, 2], [0, 0, 1], [3, 3, 3]])
    with pytest.raises(ValueError, match="'nowhere' is unknown"):
        embedding.update_token_vectors("nowhere", mx.nd.array([0, 0, 0]))
    with pytest.raises(AssertionError, match=r"expected \(1, 3\)"):
        embedding.update_token_vectors("p", mx.nd.array([0, 0]))


def test_composite_embedding_joins_vectors_side_by_side(vectors_file, tmp_path):
    other_path = tmp_path / "other.txt"
    other_path.write_text("s 0.5 0.5\n")
    first = text.embedding.CustomEmbedding(vectors_file, init_unknown_vec=mx.nd.ones)
    second = text.embedding.CustomEmbedding(str(other_path))
    vocab = text.vocab.Vocabulary(Counter(["p", "s", "s"]))
    joined = text.embedding.CompositeEmbedding(vocab, [first, second])
    assert joined.idx_to_token == ["<unk>", "s", "p"]
    assert joined.vec_len == 5
    np.testing.assert_allclose(
        joined.idx_to_vec.asnumpy(),
        [[1, 1, 1, 0, 0], [1, 1, 1, 0.5, 0.5], [1, 2, 3, 0, 0]],
    )


def test_registered_embedding_classes_are_created_by_name(vectors_file):
    @text.embedding.register
    class SmallVectors(text.embedding.CustomEmbedding):
        pass

    made = text.embedding.create("smallvectors", pretrained_file_path=vectors_file)
    assert isinstance(made, SmallVectors)
    with pytest.raises(AssertionError, match="no embedding is registered as 'nope'"):
        text.embedding.create("nope")


@pytest.mark.parametrize("name", ["GloVe", "FastText", "get_pretrained_file_names"])
def test_pretrained_embeddings_are_refused_with_what_to_use_instead(name):
    with pytest.raises(mx.LazyNDError, match=f"embedding.{name}: .*CustomEmbedding"):
        getattr(text.embedding, name)
    assert not hasattr(text.embedding, name)
