"""``mx.contrib.text``: MXNet 1.x's text helpers -- token counting, vocabularies, token embeddings.

- :mod:`~lazynd.contrib.text.utils`: ``count_tokens_from_str`` counts the tokens of a string;
- :mod:`~lazynd.contrib.text.vocab`: ``Vocabulary`` indexes the tokens of a counter;
- :mod:`~lazynd.contrib.text.embedding`: token embeddings read from a text file
  (``CustomEmbedding``), joined over a vocabulary (``CompositeEmbedding``), and the
  ``register`` / ``create`` registry of embedding classes.

Examples
--------
>>> import lazynd as mx
>>> counter = mx.contrib.text.utils.count_tokens_from_str("a b b\\n")
>>> mx.contrib.text.vocab.Vocabulary(counter).idx_to_token
['<unk>', 'b', 'a']
"""

from __future__ import annotations

from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
