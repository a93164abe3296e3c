"""The one tokenizer every strategy is counted with (scripted executor). Pure.

It is an ESTIMATE, not a model's tokenizer: a token is a run of word characters (split into
pieces of at most 4 characters, as BPE vocabularies split long identifiers) or one
punctuation character; whitespace is free. Deterministic, dependency-free, and the same for all
three strategies, which is what a retry-token comparison needs. A real model's counts come from
its API usage instead (the `openai:` executor).
"""

from __future__ import annotations

import re

TOKENIZER_NAME = "regex-word4-punct (estimate)"
_TOKEN = re.compile(r"\w+|[^\w\s]")
_PIECE = 4


def count_tokens(text: str) -> int:
    """Estimated token count of `text` (see module docstring)."""
    n = 0
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        n += (len(tok) + _PIECE - 1) // _PIECE if tok[0].isalnum() or tok[0] == "_" else 1
    return n
