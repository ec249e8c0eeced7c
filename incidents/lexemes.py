"""What PostgreSQL's `english` text search configuration makes of a plain
question, guessed in Python: the stems of its words, stop words left out.

Only a guess. Python's Snowball stemmer and PostgreSQL's `english_stem`
differ on a few words (8 of the 5,335 of the eval data: emergency, evening,
internal...), and PostgreSQL's parser reads hyphenated words, paths, hosts,
versions and e-mail addresses as tokens of their own, which are not guessed at
all. A caller must check the guess against PostgreSQL's own lexemes before
relying on it (`ranking._text_candidates` gets both in one round trip).
"""

from __future__ import annotations

import re

import snowballstemmer

# PostgreSQL's tsearch_data/english.stop, which english_stem drops before stemming.
ENGLISH_STOP_WORDS = frozenset(
    {
        "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
        "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
        "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
        "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
        "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
        "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by",
        "for", "with", "about", "against", "between", "into", "through", "during", "before",
        "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over",
        "under", "again", "further", "then", "once", "here", "there", "when", "where", "why",
        "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no",
        "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will",
        "just", "don", "should", "now",
    }
)  # fmt: skip
_STEMMER = snowballstemmer.stemmer("english")
# Punctuation that PostgreSQL's parser reads as a separator at a word's edge.
_EDGE_PUNCTUATION = ",;:!?()[]\"'%"
_LETTERS = re.compile(r"[a-z]+")
_ALPHANUMERIC = re.compile(r"[a-z0-9]+")
_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")


def lexemes_guessed(text: str) -> set[str] | None:
    """The lexemes PostgreSQL's `plainto_tsquery('english', text)` most likely
    holds, or None when the text has a token this guess does not cover (a
    path, a host, a version, a decimal, an e-mail address...).

    Plain ASCII words are stemmed unless they are stop words (PostgreSQL's
    asciiword); words with digits ("502", "502s", "ipv6") are kept as written,
    lower-cased (its int and numword, read by the `simple` dictionary); an
    apostrophe separates words ("service's"); a hyphenated word gives itself
    and its parts ("auto-increment": auto-incr, auto, increment), when all
    are letters ("us-east-1" and "32-bit" are other tokens).
    """
    lexemes: set[str] = set()
    for raw in text.lower().replace("'", " ").split():
        token = raw.strip(_EDGE_PUNCTUATION)
        if token.endswith(".") and _ALPHANUMERIC.fullmatch(token[:-1]):
            token = token[:-1]  # a sentence's full stop
        if not token or token.strip("-") == "":
            continue  # a dash between words
        if _HYPHENATED.fullmatch(token):
            words = (token, *token.split("-"))
            lexemes.update(lexeme for word in words if (lexeme := _word_lexeme(word)))
        elif _ALPHANUMERIC.fullmatch(token):
            if lexeme := _word_lexeme(token):
                lexemes.add(lexeme)
        else:
            return None
    return lexemes


def _word_lexeme(word: str) -> str | None:
    """A word's stem, None for a stop word; a word with digits as written."""
    if not _LETTERS.fullmatch(word.replace("-", "")):
        return word
    return None if word in ENGLISH_STOP_WORDS else _STEMMER.stemWord(word)
