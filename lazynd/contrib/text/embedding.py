"""Token embeddings (``mx.contrib.text.embedding``): a vector for every token of a vocabulary.

``CustomEmbedding`` reads a text file of lines ``token<delim>v1<delim>v2...``; the vector of the
unknown token (index 0) is the file's line for that token when it has one, else
``init_unknown_vec(shape=vec_len)``.  Given a ``vocabulary``, the embedding is re-indexed by it:
each of the vocabulary's tokens gets its vector, or the unknown vector.  ``CompositeEmbedding``
joins several embeddings side by side over one vocabulary.  Embedding classes are registered by
name (``register``) and made by name (``create``).  Pretrained files (GloVe, fastText) are not
downloaded here: point ``CustomEmbedding`` at a copy of the file.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...errors import TextError, TextRuleError, UnsupportedError
from .vocab import UNKNOWN_IDX, Vocabulary

__all__ = ["CompositeEmbedding", "CustomEmbedding", "create", "register"]

_REGISTRY: dict[str, type] = {}

# MXNet's pretrained embeddings, which it downloads on first use
_PRETRAINED = ("GloVe", "FastText", "get_pretrained_file_names")


def __getattr__(name: str) -> Any:
    if name in _PRETRAINED:
        raise UnsupportedError(
            f"mx.contrib.text.embedding.{name}: pretrained embeddings (GloVe, fastText) are "
            "downloaded by MXNet, which lazynd does not do; fetch the .txt/.vec file and read it "
            "with CustomEmbedding(path, elem_delim=' ')"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(embedding_cls: type) -> type:
    """Register a ``_TokenEmbedding`` subclass under its lower-cased class name (a decorator)."""
    _REGISTRY[embedding_cls.__name__.lower()] = embedding_cls
    return embedding_cls


def create(embedding_name: str, **kwargs: Any) -> _TokenEmbedding:
    """Make the embedding registered as ``embedding_name`` (any case) with ``kwargs``.

    An unregistered name raises an ``AssertionError`` (a ``LazyNDError``), as in MXNet.
    """
    try:
        cls = _REGISTRY[embedding_name.lower()]
    except KeyError:
        raise TextRuleError(
            f"embedding.create: no embedding is registered as {embedding_name!r}; registered: {sorted(_REGISTRY)}"
        ) from None
    return cls(**kwargs)  # type: ignore[no-any-return]


class _TokenEmbedding(Vocabulary):
    """A vocabulary with a vector per token: ``idx_to_vec`` (an NDArray of ``vec_len`` columns)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._vec_len = 0
        self._idx_to_vec: nd.NDArray | None = None

    @property
    def vec_len(self) -> int:
        """The length of every token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self) -> nd.NDArray | None:
        """The vectors, one row per token index."""
        return self._idx_to_vec

    def _load_embedding(
        self, path: str, elem_delim: str, init_unknown_vec: Callable[..., Any], encoding: str = "utf8"
    ) -> None:
        rows: list[list[float]] = []
        loaded_unknown: list[float] | None = None
        with open(path, encoding=encoding) as source:
            for line_num, line in enumerate(source, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) < 2:
                    raise TextRuleError(
                        f"CustomEmbedding: line {line_num} of {path} has a token and no vector; "
                        f"expected 'token{elem_delim}value...'"
                    )
                token, vec = elems[0], [float(value) for value in elems[1:]]
                if token == self.unknown_token and loaded_unknown is None:
                    loaded_unknown = vec
                elif token in self.token_to_idx:
                    warnings.warn(f"line {line_num} of {path}: token {token!r} repeats; skipped", stacklevel=3)
                elif len(vec) == 1:
                    warnings.warn(f"line {line_num} of {path}: a one-value line is a header; skipped", stacklevel=3)
                else:
                    if rows and len(vec) != len(rows[0]):
                        raise TextRuleError(
                            f"CustomEmbedding: line {line_num} of {path} has a vector of "
                            f"{len(vec)} values; expected {len(rows[0])} as on the lines before"
                        )
                    rows.append(vec)
                    self.token_to_idx[token] = len(self.idx_to_token)
                    self.idx_to_token.append(token)
        self._vec_len = len(rows[0]) if rows else len(loaded_unknown or [])
        special = len(self.idx_to_token) - len(rows)
        table = np.zeros((len(self.idx_to_token), self._vec_len), dtype=np.float32)
        table[special:] = rows
        if loaded_unknown is not None:
            table[UNKNOWN_IDX] = loaded_unknown
        else:
            table[UNKNOWN_IDX] = nd.array(init_unknown_vec(shape=self._vec_len)).asnumpy()
        self._idx_to_vec = nd.array(table)

    def _index_tokens_from_vocabulary(self, vocabulary: Vocabulary) -> None:
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved_tokens = None if reserved is None else list(reserved)

    def _set_idx_to_vec_by_embeddings(self, embeddings: list[_TokenEmbedding]) -> None:
        columns = []
        for embedding in embeddings:
            vectors = embedding.get_vecs_by_tokens(self.idx_to_token[1:]).asnumpy()
            unknown = embedding.idx_to_vec[UNKNOWN_IDX].asnumpy()  # type: ignore[index]
            columns.append(np.concatenate([unknown[None, :], vectors.reshape(-1, unknown.size)]))
        self._vec_len = sum(embedding.vec_len for embedding in embeddings)
        self._idx_to_vec = nd.array(np.concatenate(columns, axis=1))

    def _build_embedding_for_vocabulary(self, vocabulary: Vocabulary) -> None:
        source = _TokenEmbedding.__new__(_TokenEmbedding)
        source.__dict__.update(self.__dict__)
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings([source])

    def get_vecs_by_tokens(self, tokens: Any, lower_case_backup: bool = False) -> nd.NDArray:
        """The vector of a token (1-D), or of each token of a list (2-D); unknown tokens give the
        unknown vector.  With ``lower_case_backup`` a token not found is looked up lower-cased."""
        single = not isinstance(tokens, list)
        wanted = [tokens] if single else tokens
        indices = []
        for token in wanted:
            idx = self.token_to_idx.get(token)
            if idx is None and lower_case_backup and isinstance(token, str):
                idx = self.token_to_idx.get(token.lower())
            indices.append(UNKNOWN_IDX if idx is None else idx)
        vectors = nd.array(self._idx_to_vec.asnumpy()[indices])  # type: ignore[union-attr]
        return vectors[0] if single else vectors

    def update_token_vectors(self, tokens: Any, new_vectors: nd.NDArray) -> None:
        """Set the vectors of ``tokens`` (a token or a list) to the rows of ``new_vectors``."""
        wanted = tokens if isinstance(tokens, list) else [tokens]
        values = new_vectors.asnumpy()
        if values.ndim == 1:
            values = values[None, :]
        if values.shape != (len(wanted), self._vec_len):
            raise TextRuleError(
                f"update_token_vectors: new_vectors has shape {values.shape}; expected "
                f"({len(wanted)}, {self._vec_len}), a row of vec_len values per token"
            )
        indices = []
        for token in wanted:
            if token not in self.token_to_idx:
                raise TextError(
                    f"update_token_vectors: token {token!r} is unknown; only the vectors of "
                    "tokens in the embedding (the unknown token included) can be updated"
                )
            indices.append(self.token_to_idx[token])
        table = self._idx_to_vec.asnumpy().copy()  # type: ignore[union-attr]
        table[indices] = values
        self._idx_to_vec = nd.array(table)


class CustomEmbedding(_TokenEmbedding):
    """A token embedding read from ``pretrained_file_path`` (``token<elem_delim>v1...`` lines).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "vectors.txt")
    >>> _ = open(path, "w").write("a 1 2\\nb 3 4\\n")
    >>> embedding = CustomEmbedding(path)
    >>> embedding.get_vecs_by_tokens(["b", "zzz"]).asnumpy().tolist()
    [[3.0, 4.0], [0.0, 0.0]]
    """

    def __init__(
        self,
        pretrained_file_path: str,
        elem_delim: str = " ",
        encoding: str = "utf8",
        init_unknown_vec: Callable[..., Any] = nd.zeros,
        vocabulary: Vocabulary | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The vectors of one or more embeddings, side by side, for the tokens of ``vocabulary``."""

    def __init__(self, vocabulary: Vocabulary, token_embeddings: _TokenEmbedding | list[_TokenEmbedding]) -> None:
        super().__init__()
        embeddings = token_embeddings if isinstance(token_embeddings, list) else [token_embeddings]
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(embeddings)
