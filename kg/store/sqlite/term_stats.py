"""Document frequencies of query words in the memory index: leave out words that cannot rank or cost too much.

A search costs about 2 µs per row that matches any of its words, and the words that match most rows weigh
least: FTS5's ``bm25()`` gives a term in more than half of the rows an IDF of ~0 (``log((N - n + 0.5) /
(n + 0.5))`` clamped to 1e-6) - a speaker's name in a transcript, say. :meth:`TermStats.plan` keeps the
words that matter: never one in more than half of the items (unless nothing else is left) and, in a store
of more than ``SMALL_STORE`` items, rarest first only as many as fit in a budget of matching rows (the
rarest word is always kept: the "max document frequency" cut of search engines). When the kept words still
match more than ``ROW_WINDOW`` rows, the search scores only the newest ``ROW_WINDOW`` matches (the vector
branch still sees every item). Together they keep a query within milliseconds at 100,000 items.

Counting is bounded too: a word's matching rows are counted only up to the first that decides the plan
(``ROW_BUDGET + 1`` in a large store, just over half the items in a small one), a few hundred microseconds
even for a word in every item. Only when every word of a query reaches that bound are exact counts read
(from the index's vocabulary, words stemmed by the index's own ``porter unicode61`` tokenizer in a
temporary FTS5 table). Counts and stems are cached per process, counts refreshed once the store has grown
by a tenth.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kg.store.sqlite.db import Database

#: A term in more than this share of the items scores ~0 in FTS5's bm25 (IDF clamped).
COMMON_SHARE = 0.5
#: Rows a search may have to score (the sum of its words' document frequencies), rarest word first.
ROW_BUDGET = 500
#: When even the kept words match more rows than this, only the newest this many matches are scored.
ROW_WINDOW = 500
#: Stores up to this size keep every word but the >50% ones: scoring all their matches stays cheap.
SMALL_STORE = 2_000
_MAX_CACHE = 100_000


class TermStats:
    """Per-connection helper: word -> index term -> number of items containing it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._ready = False
        self._stems: dict[str, str] = {}
        # (kind, word or term) -> (items containing it, store size when counted, count bound)
        self._docs: dict[tuple[str, str], tuple[int, int, int]] = {}

    def _setup(self) -> None:
        if not self._ready:
            self.db.read("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mabos_q USING fts5(x, tokenize='porter unicode61')")
            self.db.read(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mabos_q_terms USING fts5vocab(temp, mabos_q, 'instance')"
            )
            self.db.read(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mabos_memory_terms USING fts5vocab(main, memory_fts, 'row')"
            )
            self._ready = True

    def _stem(self, words: Sequence[str]) -> dict[str, str]:
        missing = [w for w in words if w not in self._stems]
        if missing:
            self.db.read("DELETE FROM temp.mabos_q")
            for n, word in enumerate(missing, 1):
                self.db.read("INSERT INTO temp.mabos_q(rowid, x) VALUES (?, ?)", (n, word))
            found = {int(r[0]): str(r[1]) for r in self.db.read("SELECT doc, term FROM temp.mabos_q_terms")}
            if len(self._stems) > _MAX_CACHE:
                self._stems.clear()
            self._stems.update((w, found.get(n, w)) for n, w in enumerate(missing, 1))
        return {w: self._stems[w] for w in words}

    def plan(self, words: Sequence[str]) -> tuple[list[str], int]:
        """The words to search for, in the given order (see the module docstring), and how many rows they
        match at most (the sum of their document frequencies); all of them in a tiny store."""
        with self._lock:
            total = int(self.db.read("SELECT COALESCE(MAX(seq), 0) FROM memory_items")[0][0])
            if total < 100:
                return list(words), total
            # counts at or above `bound` only say "too common": over the budget, or over half the items
            bound = ROW_BUDGET + 1 if total > SMALL_STORE else int(COMMON_SHARE * total) + 1
            docs = {word: self._count(word, total, bound) for word in words}
            if all(n >= bound for n in docs.values()):  # only common words: rank them by exact counts
                self._setup()
                docs = {word: self._exact(term, total) for word, term in self._stem(words).items()}
        useful = sorted((w for w in words if docs[w] <= COMMON_SHARE * total), key=lambda w: (docs[w], w))
        kept: set[str] = set()
        rows = 0
        for word in useful:
            if kept and rows + docs[word] > ROW_BUDGET and total > SMALL_STORE:
                break
            kept.add(word)
            rows += docs[word]
        if not kept:
            kept = {min(words, key=lambda w: (docs[w], w))}
        return [w for w in words if w in kept], sum(docs[w] for w in kept)

    def _count(self, word: str, total: int, bound: int) -> int:
        """Items containing ``word``, counted up to ``bound`` (exact below it)."""
        key = ("bounded", word.lower())
        cached = self._docs.get(key)
        if cached is None or cached[2] != bound or abs(total - cached[1]) > total // 10:
            phrase = '"' + word.replace('"', '""') + '"'
            row = self.db.read(
                "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)", (phrase, bound)
            )
            cached = self._remember(key, (int(row[0][0]), total, bound))
        return cached[0]

    def _exact(self, term: str, total: int) -> int:
        """Items containing the index term ``term`` (a full pass over its postings)."""
        key = ("exact", term)
        cached = self._docs.get(key)
        if cached is None or abs(total - cached[1]) > total // 10:
            row = self.db.read("SELECT doc FROM temp.mabos_memory_terms WHERE term = ?", (term,))
            cached = self._remember(key, (int(row[0][0]) if row else 0, total, 0))
        return cached[0]

    def _remember(self, key: tuple[str, str], value: tuple[int, int, int]) -> tuple[int, int, int]:
        if len(self._docs) > _MAX_CACHE:
            self._docs.clear()
        self._docs[key] = value
        return value
