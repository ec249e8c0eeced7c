"""Misspelt words of a search, respelt to the words the incidents and English have.

"uplaods … fail for evryone" found neither word: full-text search matches lexemes
exactly, and the embedding's WordPiece cuts a misspelt word into pieces that mean
little. A word that neither the embedding's English vocabulary nor any incident title
has (nor is an inflection of one), one slip of fast typing from exactly one title
word, is taken for that word ("uploads"). English words lacking from the
vocabulary are too many to correct towards ("blanking" is not "banking").
Names, codes and acronyms are left as typed. Django-free: the selectors pass the
words of the data in.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import OSA

MIN_LENGTH = 5  # shorter ones are often shorthand or contractions ("cant", "perf")
# A lower-case word alone, or one capitalised as a name is ("Herkou"): not a part of
# "eu-west-1", "x509", "CamelCase" or "ACK".
_WORD_RE = re.compile(rf"(?<![\w./-])[A-Za-z][a-z]{{{MIN_LENGTH - 1},}}(?![\w/-]|\.\w)")


def respell(text: str, known: Collection[str], titles: Collection[str]) -> str:
    """`text` with each misspelt word replaced. `known`: the English words (the
    embedding's vocabulary); `titles`: the words of the data's titles, preferred
    when both have a candidate."""
    return _WORD_RE.sub(lambda m: _respelt(m.group(0), known, titles), text)


def _respelt(typed: str, known: Collection[str], titles: Collection[str]) -> str:
    word = typed.lower()
    if word in known or word in titles or _inflects_a_known_word(word, known, titles):
        return typed
    meant = _only_one_slip_from(word, titles)
    if not meant:
        return typed
    return meant.capitalize() if typed[0].isupper() else meant


# Endings that make another word of a known one ("backends", "throttled"): the
# model's vocabulary lacks many such forms, which are no typos.
_ENDINGS = ("s", "es", "ed", "d", "ing", "er", "ers", "ly")


def _inflects_a_known_word(word: str, known: Collection[str], titles: Collection[str]) -> bool:
    stems = (word.removesuffix(e) for e in _ENDINGS if word.endswith(e))
    return any(s in known or s in titles for s in stems if len(s) >= 3)


def _only_one_slip_from(word: str, words: Collection[str]) -> str:
    """The one word of `words` a slip away that starts as `word` does (a slip at
    the first letter, as "chugging" for "hugging", is rare and misleads)."""
    candidates = _of_length_near(len(word), words)
    found = process.extract(word, candidates, scorer=OSA.distance, score_cutoff=1, limit=None)
    near = [
        w
        for w, _, _ in found
        if w[0] == word[0] and one_slip(word, w) and not _an_ending_apart(word, w)
    ]
    return near[0] if len(near) == 1 else ""


def _an_ending_apart(word: str, other: str) -> bool:
    """ "truncate" and "truncated": another form of the word, which full-text search
    and the embedding match anyway, not a slip."""
    shorter, longer = sorted((word, other), key=len)
    return longer.startswith(shorter) and longer[len(shorter) :] in _ENDINGS


def _of_length_near(length: int, words: Collection[str]) -> tuple[str, ...]:
    frozen = words if isinstance(words, frozenset) else frozenset(words)
    return _by_length_near(frozen).get(length, ())


@lru_cache(maxsize=4)
def _by_length_near(words: frozenset[str]) -> dict[int, tuple[str, ...]]:
    """For each length, the words one letter shorter, as long or one longer: where a
    word one slip away can be."""
    grouped: dict[int, list[str]] = {}
    for word in words:
        for n in (len(word) - 1, len(word), len(word) + 1):
            grouped.setdefault(n, []).append(word)
    return {n: tuple(sorted(ws)) for n, ws in grouped.items()}


def one_slip(typed: str, word: str) -> bool:
    """A letter left out, doubled or two swapped: the slips of fast typing. A
    letter changed or one more of another ("resync" is not "rsync", "docs" is not
    "does") is not one of them."""
    if OSA.distance(typed, word, score_cutoff=1) != 1:
        return False
    if len(typed) == len(word) + 1:
        return any(typed[i] == typed[i - 1] and typed[:i] + typed[i + 1 :] == word
                   for i in range(1, len(typed)))  # fmt: skip
    return len(typed) != len(word) or sorted(typed) == sorted(word)
