"""A vocabulary: the tokens of a counter, indexed (``mx.contrib.text.vocab``).

Index 0 is the unknown token, the reserved tokens follow in the order given, then the counted
tokens, most frequent first (ties by token order), keeping those counted at least ``min_freq``
times and at most ``most_freq_count`` of them.  Tokens may be any hashable values (tuples too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import Any

from ...errors import TextError, TextRuleError

__all__ = ["UNKNOWN_IDX", "Vocabulary"]

UNKNOWN_IDX = 0


class Vocabulary:
    """Index the tokens of ``counter``: ``token_to_idx``, ``idx_to_token``, ``to_indices``...

    Examples
    --------
    >>> vocab = Vocabulary(Counter(["a", "b", "b"]), reserved_tokens=["<pad>"])
    >>> vocab.idx_to_token
    ['<unk>', '<pad>', 'b', 'a']
    >>> vocab.to_indices(["b", "zzz"])
    [2, 0]
    """

    def __init__(
        self,
        counter: Counter[Any] | None = None,
        most_freq_count: int | None = None,
        min_freq: int = 1,
        unknown_token: Hashable = "<unk>",
        reserved_tokens: list[Any] | None = None,
    ) -> None:
        if min_freq <= 0:
            raise TextRuleError(f"Vocabulary: min_freq must be at least 1, given {min_freq}")
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise TextRuleError(
                    f"Vocabulary: reserved_tokens {reserved_tokens!r} must not hold the unknown_token {unknown_token!r}"
                )
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise TextRuleError(f"Vocabulary: reserved_tokens {reserved_tokens!r} must not repeat a token")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token: list[Any] = [unknown_token, *(reserved_tokens or [])]
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter(counter, most_freq_count, min_freq)

    def _index_counter(self, counter: Counter[Any], most_freq_count: int | None, min_freq: int) -> None:
        by_token = sorted(counter.items(), key=lambda pair: pair[0])
        by_freq = sorted(by_token, key=lambda pair: pair[1], reverse=True)
        cap = len(counter) if most_freq_count is None else most_freq_count
        added = 0
        for token, freq in by_freq:
            if freq < min_freq or added >= cap:
                break
            if token in self._token_to_idx:
                continue
            self._token_to_idx[token] = len(self._idx_to_token)
            self._idx_to_token.append(token)
            added += 1

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict[Any, int]:
        """The index of every token."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list[Any]:
        """The tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Any:
        """The token that stands for every token not in the vocabulary (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list[Any] | None:
        """The reserved tokens (indices 1, 2...), or None."""
        return self._reserved_tokens

    def to_indices(self, tokens: Any) -> int | list[int]:
        """The index of a token (an int), or of each token of a list; unknown tokens give 0."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, UNKNOWN_IDX)
        return [self._token_to_idx.get(token, UNKNOWN_IDX) for token in tokens]

    def to_tokens(self, indices: int | list[int]) -> Any:
        """The token of an index, or the token of each index of a list."""
        single = not isinstance(indices, list)
        wanted: list[Any] = indices if isinstance(indices, list) else [indices]
        tokens = []
        for idx in wanted:
            if not isinstance(idx, int) or not 0 <= idx < len(self._idx_to_token):
                raise TextError(
                    f"Vocabulary.to_tokens: index {idx!r} is not a token's index; "
                    f"expected an int in [0, {len(self._idx_to_token)})"
                )
            tokens.append(self._idx_to_token[idx])
        return tokens[0] if single else tokens
