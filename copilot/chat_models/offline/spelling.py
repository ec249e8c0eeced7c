"""The words that carry an ask, as people type them in chat: "wat now", "whcih setting
do i change", "w/", "bc", "thru".

The router's rules and its intent model read the ask in these words, so a typo in
one of them hid the whole ask ("...renewed the cert but some services still fail.
wat now" read as a story with nothing asked). Only these words are respelt; every
other word of the question (names, error messages, settings) is left as written.
"""

from __future__ import annotations

import re
from functools import lru_cache

from incidentdesk.embeddings import is_common_word
from incidents.spelling import one_slip

# Chat shorthands, several of them whole words of the model's vocabulary ("wat" is a
# Thai temple), so respelt by name rather than by distance.
_SHORTHANDS = {
    "wat": "what", "wut": "what", "wht": "what", "u": "you", "ur": "your", "r": "are",
    "pls": "please", "plz": "please", "abt": "about", "bc": "because", "b/c": "because",
    "w/": "with", "w/o": "without", "thru": "through", "smth": "something",
    "sth": "something", "ppl": "people", "rn": "right now", "hv": "have", "shd": "should",
}  # fmt: skip
# The words an ask is made of. A typed word one slip from one of them (`one_slip`),
# and no English word itself, is taken for it.
ASK_WORDS = (
    "what", "which", "how", "why", "when", "where", "who", "should", "could", "would",
    "does", "anyone", "anything", "anywhere", "someone", "something", "somewhere",
    "happened", "before", "runbook", "procedure", "recommend", "known", "issue", "help",
    "steps", "similar", "again", "ever", "fix", "change", "check", "first", "start",
)  # fmt: skip
# A word alone: not part of "U.S.", "eu-west-1", "a/b" or "R2".
_TOKEN_RE = re.compile(r"(?<![\w/.-])(?:[a-z]+/[a-z]*|[a-z]+)(?![\w/-]|\.\w)", re.IGNORECASE)


def respell_asks(text: str) -> str:
    """`text` with chat shorthands and misspelt ask words written out."""
    return _TOKEN_RE.sub(lambda m: _respelt(m.group(0)), text)


def _respelt(token: str) -> str:
    if token in _SHORTHANDS:  # typed in lower case, as shorthand is ("R" is a language)
        return _SHORTHANDS[token]
    return _nearest_ask_word(token.lower()) or token


@lru_cache(maxsize=4096)
def _nearest_ask_word(word: str) -> str:
    """The ask word one edit from `word`, if `word` is no English word ("whcih")."""
    if len(word) < 3 or "/" in word or is_common_word(word) or word.removesuffix("s") in ASK_WORDS:
        return ""  # "whats", "hows": "what's" typed without its apostrophe
    near = [w for w in ASK_WORDS if one_slip(word, w)]
    return near[0] if len(near) == 1 else ""
