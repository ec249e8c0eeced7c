"""The chunk tables' lexeme counts per version, kept in PostgreSQL (`TermCount`).

A search keeps the question's rarest words for its full-text half
(`ranking.rare_terms`). With the counts in a per-process cache, that took two
round trips before the full-text statement could start: PostgreSQL stemmed the
question (one), Python chose among its lexemes, then the statement ran (two).
Under load each round trip waited for a core while the query embedding's
threads ran (README, issue 19 item 2). With the counts in a table, one
statement stems, chooses and searches (`ranking._text_chosen_sql`).

The counts steer which words are kept, never whether a chunk can match: a word
missing from them counts as rare (as in `rare_terms`), so a stale count hides
nothing. They are refreshed like the cache they replace, every
TERM_COUNTS_TTL_SECONDS, but once for all processes: a process checks a
version's counts when its own check expires, and recounts them (ts_stat) only
when they are older than that, under a lock, so two processes never count the
same version at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from django.db import IntegrityError, connection, transaction

from incidents.caching import TimedCache
from incidents.models import TermCount

# As stale as the per-process counts were allowed to be (ranking.TERM_STATS_TTL_SECONDS).
TERM_COUNTS_TTL_SECONDS = 600
# pg_advisory_xact_lock's first key (any value); the second is the version's id.
_LOCK_KEY = 0x1D_19_35
_checked: TimedCache[tuple[str, int], None] = TimedCache(ttl_seconds=TERM_COUNTS_TTL_SECONDS)
# Bumped by forget_term_counts: a version checked in an earlier generation is
# recounted at its next check, whatever its counts' age.
_generation = 0
_checked_in: dict[tuple[str, int], int] = {}


def term_counts_ensure(table: str, versions: Sequence[int]) -> None:
    """Make sure `versions`' counts in `table` are fresh; no round trip while
    this process checked them less than TERM_COUNTS_TTL_SECONDS ago."""
    for version_id in versions:
        _checked.get((table, int(version_id)), partial(_check, table, int(version_id)))


def forget_term_counts() -> None:
    """Recount every version at its next search (tests, imports: the chunks changed)."""
    global _generation
    _generation += 1
    _checked.clear()


def _check(table: str, version_id: int) -> None:
    force = _checked_in.get((table, version_id), 0) < _generation
    try:
        term_counts_refresh(table, version_id, force=force)
    except IntegrityError:
        return  # the version was deleted meanwhile: no search can reach its chunks
    _checked_in[(table, version_id)] = _generation


def term_counts_refresh(table: str, version_id: int, *, force: bool = False) -> bool:
    """Count the lexemes of `table`'s chunks in the version again when the counts
    are missing or older than TERM_COUNTS_TTL_SECONDS (always, with `force`);
    whether it counted. One transaction, locked per version: a process that
    waited for another's count finds it fresh."""
    counts = TermCount._meta.db_table
    chunks_of_version = f'SELECT search_vector FROM "{table}" WHERE version_id = {version_id:d}'  # noqa: S608 - our table, an integer id
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_KEY, version_id])
        cursor.execute(
            f"SELECT counted_at > now() - make_interval(secs => %s) FROM {counts}"  # noqa: S608 - our table
            " WHERE chunk_table = %s AND version_id = %s LIMIT 1",
            [TERM_COUNTS_TTL_SECONDS, table, version_id],
        )
        row = cursor.fetchone()
        if row is not None and row[0] and not force:
            return False
        cursor.execute(
            f"DELETE FROM {counts} WHERE chunk_table = %s AND version_id = %s",  # noqa: S608 - our table
            [table, version_id],
        )
        cursor.execute(
            f"INSERT INTO {counts} (chunk_table, version_id, word, chunks, counted_at)"  # noqa: S608 - our table
            " SELECT %s, %s, word, ndoc, now() FROM ts_stat(%s)",
            [table, version_id, chunks_of_version],
        )
    return True
