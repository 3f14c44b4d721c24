"""Counting the tokens of a string (``mx.contrib.text.utils``)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(
    source_str: str,
    token_delim: str = " ",
    seq_delim: str = "\n",
    to_lower: bool = False,
    counter_to_update: Counter[Any] | None = None,
) -> Counter[Any]:
    """Count the tokens of ``source_str``, split at every ``token_delim`` and ``seq_delim``.

    Empty pieces (two delimiters in a row) are not tokens.  With ``to_lower`` tokens are counted
    lower-cased.  The counts are added to ``counter_to_update`` (which is returned) when given,
    else to a new ``Counter``.

    Examples
    --------
    >>> count_tokens_from_str("Life is good\\nlife is", to_lower=True)
    Counter({'life': 2, 'is': 2, 'good': 1})
    """
    pattern = "|".join(re.escape(delim) for delim in (token_delim, seq_delim))
    tokens = [token for token in re.split(pattern, source_str) if token]
    if to_lower:
        tokens = [token.lower() for token in tokens]
    counter = Counter() if counter_to_update is None else counter_to_update
    counter.update(tokens)
    return counter
