"""A fast path for plain fact dicts in bulk asserts: the same rules as :class:`FactInput`, without pydantic.

:func:`fast_fact` accepts only what it can prove :class:`FactInput` accepts (plain ``str``/``float``/``int``
values, no timestamps) and builds the same model instance; anything else (a bad value, a timestamp, a ``str``
subclass, an unknown key) returns ``None`` and the caller validates the item with the model, so errors are
the model's own field-named messages. tests/unit/test_facts_bulk_fast.py checks with hypothesis that every
item the fast path accepts is accepted by the model with equal values and the same set fields.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from kg.errors import InputError
from kg.ids import ID_PATTERN
from kg.models import MAX_LIST, MAX_NAME, MAX_OBJECT, MAX_TERM, FactInput, ObjectKind
from kg.models.base import AGENT_ID_RE, SCOPE_RE
from kg.models.facts import infer_object_kind
from kg.ports.facts import FactColumns, FactRow, PreparedFacts

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_FIELDS = frozenset(FactInput.model_fields)
_KINDS = {"entity": ObjectKind.ENTITY, "literal": ObjectKind.LITERAL}
_ALWAYS_SET = frozenset({"agent_id", "object_kind", "scope"})  # the model's before-validator fills the last two
_new = FactInput.__new__
_row = FactRow._make
#: ``bool(mark)`` -> the object kind of a triple (a non-empty mark makes a literal)
_KIND_OF_MARK = (ObjectKind.ENTITY, ObjectKind.LITERAL)
_set = object.__setattr__


def _text(value: Any, limit: int) -> bool:
    """A ``Term``/``ObjectText``: 1..limit characters, not only whitespace, no NUL, valid Unicode."""
    return (
        type(value) is str
        and 0 < len(value) <= limit
        and (value.isascii() or _unicode_ok(value))
        and bool(value.strip())
        and "\x00" not in value
    )


#: :func:`_all_text` joins at most this many characters (past it, the values are checked one by one).
_JOIN_LIMIT = 4_000_000


def _all_text(values: set[str], limit: int) -> bool:
    """Whether :func:`_text` holds for every one of ``values`` (exact ``str`` each), each rule checked for all of
    them at once in C; False says only that one of them may fail. Joined, the values encode as UTF-8 exactly when
    each does (Python never pairs the surrogates of two strings), and hold a NUL exactly when one does."""
    lengths = list(map(len, values))
    if not lengths or min(lengths) == 0 or max(lengths) > limit or sum(lengths) > _JOIN_LIMIT:
        return not lengths
    joined = "".join(values)
    return (joined.isascii() or _unicode_ok(joined)) and "\x00" not in joined and all(map(str.strip, values))


def _unicode_ok(value: str) -> bool:
    """Whether pydantic can read ``value`` (a lone surrogate cannot be encoded as UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _record_id(value: Any) -> bool:
    return type(value) is str and ID_PATTERN.match(value) is not None


def agent_ok(agent_id: str) -> bool:
    """Whether the batch's agent id is one the model accepts (else every item takes the model path)."""
    return type(agent_id) is str and AGENT_ID_RE.match(agent_id) is not None


def _kind(value: Any, obj: Any) -> ObjectKind | None:  # obj is checked text
    if value is None:
        return infer_object_kind(obj)
    if type(value) is str:
        return _KINDS.get(value)
    return value if type(value) is ObjectKind else None


def _confidence(value: Any) -> float | None:
    if type(value) is int:
        value = float(value)
    if type(value) is not float or not 0.0 <= value <= 1.0:  # NaN fails the comparison
        return None
    return value


def plain_source(source: Any) -> bool:
    """Whether a batch's one ``source`` is one the model accepts as it is (see :func:`_rest_ok`)."""
    return type(source) is str and len(source) <= MAX_NAME and (source.isascii() or _unicode_ok(source))


def _rest_ok(item: dict[str, Any], source: Any, parents: Any, rule_id: Any) -> bool:
    """Source, lineage and rule id as the model takes them; timestamps (and their order rule) are the model's."""
    if not plain_source(source):
        return False
    if item.get("valid_from") is not None or item.get("valid_until") is not None:
        return False
    if type(parents) is not list and parents != ():
        return False
    if parents and (len(parents) > MAX_LIST or not all(map(_record_id, parents))):
        return False
    return rule_id is None or _record_id(rule_id)


def fast_row(agent_id: str, item: dict[str, Any]) -> FactRow | None:
    """``FactInput.model_validate({"agent_id": agent_id, **item})`` for plain valid items, as a
    :class:`~kg.ports.facts.FactRow` (the model's values, no model instance), else ``None``.

    ``agent_id`` must satisfy :func:`agent_ok` (checked once per batch by the caller).
    """
    get = item.get
    given = get("agent_id", agent_id)
    if not _FIELDS.issuperset(item) or type(given) is not str or given != agent_id:
        return None  # an unknown key or another agent's fact: the caller's model path reports it
    subject, predicate, obj = get("subject"), get("predicate"), get("object")
    if not (_text(subject, MAX_TERM) and _text(predicate, MAX_TERM) and _text(obj, MAX_OBJECT)):
        return None
    kind = _kind(get("object_kind"), obj)
    scope = get("scope")
    if scope is None:
        scope = "agent:" + agent_id
    elif type(scope) is not str or SCOPE_RE.match(scope) is None:
        return None
    confidence = _confidence(get("confidence", 1.0))
    source, parents, rule_id = get("source", "agent"), get("derived_from", ()), get("rule_id")
    if kind is None or confidence is None or not _rest_ok(item, source, parents, rule_id):
        return None
    return _row((agent_id, subject, predicate, obj, kind, scope, confidence, source, None, None, list(parents),
                 rule_id))  # fmt: skip


class Screened(NamedTuple):
    """A batch as the screen left it: each item's accepted fact (None where the model must judge), and the
    store's prepared batch when every item was accepted."""

    inputs: Sequence[FactInput | FactRow | None]
    prepared: PreparedFacts | None
    items: Sequence[Any] | None = None  # the batch as the model path reads it, when not the batch itself


class TermChecks:
    """Terms already found valid by :func:`triple_rows` (exact ``str`` values only), kept across the batches of
    one bulk assert: an RDF import repeats the same few thousand terms, so each distinct one is checked once."""

    #: Past this many remembered values the sets start again (a long stream of distinct terms stays bounded).
    LIMIT = 1_000_000
    #: ... or past this many remembered characters (a million long literals would otherwise hold gigabytes).
    CHAR_LIMIT = 64_000_000

    def __init__(self) -> None:
        self.terms: set[str] = set()  # valid as a subject or predicate (MAX_TERM)
        self.objects: set[str] = set()  # valid as an object (MAX_OBJECT)
        self.chars = 0  # characters of the values remembered

    def learn(self, column: Sequence[str], known: set[str], limit: int) -> bool:
        """Add the values of ``column`` (exact ``str`` each) that are valid to ``known``; whether all of them are."""
        if known.issuperset(column):
            return True
        fresh = set(column).difference(known)
        if _all_text(fresh, limit):  # the usual case, checked in C for the whole set
            known.update(fresh)
            self.chars += sum(map(len, fresh))
            return True
        valid = [value for value in fresh if _text(value, limit)]
        known.update(valid)
        self.chars += sum(map(len, valid))
        return len(valid) == len(fresh)

    def trim(self) -> None:
        """Forget every value once more than :data:`LIMIT` values or :data:`CHAR_LIMIT` characters are remembered
        (before a batch, never during one)."""
        if len(self.terms) + len(self.objects) > self.LIMIT or self.chars > self.CHAR_LIMIT:
            self.terms.clear()
            self.objects.clear()
            self.chars = 0


def triple_rows(
    agent_id: str,
    triples: Sequence[tuple[str, str, str, str]],
    scope: str,
    source: str,
    checks: TermChecks | None = None,
) -> Sequence[FactRow | None]:
    """The :class:`~kg.ports.facts.FactRow` of each ``(subject, predicate, object, mark)`` triple (an RDF import's
    :data:`kg.rdf.documents.Key`: a non-empty ``mark`` makes a literal object, ``""`` an entity), with
    confidence 1 and no validity, lineage or rule, for plain valid items; ``None`` for each one the model must
    judge (its error names the field). What :func:`fast_row` gives for the same fact as a dict, without building
    the dict: ``agent_id`` must satisfy :func:`agent_ok` and ``scope`` and ``source`` be checked by the caller.

    A batch of plain strings is read column by column (``zip``, in C): each distinct term is checked once, and
    ``checks`` remembers the valid ones for the caller's next batches. When every row is accepted, the rows are
    those columns (:class:`~kg.ports.facts.FactColumns`: a store's ``prepare`` reads them without a tuple per
    fact); otherwise a list, ``None`` where the model must judge.
    """
    columns = list(zip(*triples, strict=True)) if triples else []
    if len(columns) != 4 or not _plain(columns[:3]):  # not 4-tuples, or a value other than a str: row by row
        return [_triple_row(agent_id, triple, scope, source) for triple in triples]
    checks = TermChecks() if checks is None else checks
    checks.trim()
    subjects, predicates, objects, marks = columns
    terms, objects_ok = checks.terms, checks.objects
    every = checks.learn(subjects, terms, MAX_TERM)
    every = checks.learn(predicates, terms, MAX_TERM) and every
    every = checks.learn(objects, objects_ok, MAX_OBJECT) and every
    kind_of = {mark: _KIND_OF_MARK[bool(mark)] for mark in set(marks)}  # a few distinct marks (datatypes, languages)
    kinds = map(kind_of.__getitem__, marks)
    if not every:  # a term is refused: those rows go to the model (the known sets hold only valid terms)
        return [
            _row((agent_id, s, p, o, kind, scope, 1.0, source, None, None, [], None))
            if s in terms and p in terms and o in objects_ok else None
            for s, p, o, kind in zip(subjects, predicates, objects, kinds, strict=True)
        ]  # fmt: skip
    return FactColumns(
        agent_id, scope, source, subjects=subjects, predicates=predicates, objects=objects, kinds=list(kinds)
    )


def _plain(columns: Sequence[Sequence[Any]]) -> bool:
    """Whether every value of ``columns`` is an exact ``str`` (a subclass or another type goes row by row)."""
    # list.count compares by identity first: cheaper than adding each value's type to a set
    return all(list(map(type, column)).count(str) == len(column) for column in columns)


def _triple_row(agent_id: str, triple: Any, scope: str, source: str) -> FactRow | None:
    s, p, o, mark = triple
    if not (_text(s, MAX_TERM) and _text(p, MAX_TERM) and _text(o, MAX_OBJECT)):
        return None
    return _row((agent_id, s, p, o, ObjectKind.LITERAL if mark else ObjectKind.ENTITY, scope, 1.0, source, None,
                 None, [], None))  # fmt: skip


def fast_fact(agent_id: str, item: dict[str, Any]) -> FactInput | None:
    """``FactInput.model_validate({"agent_id": agent_id, **item})`` for plain valid items, else ``None``: the
    model instance of :func:`fast_row`'s values, built without validating again (the same set fields)."""
    row = fast_row(agent_id, item)
    if row is None:
        return None
    fact = _new(FactInput)
    _set(fact, "__dict__", row._asdict())
    _set(fact, "__pydantic_fields_set__", {*item, *_ALWAYS_SET})
    _set(fact, "__pydantic_extra__", None)
    _set(fact, "__pydantic_private__", None)
    return fact


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector paused (restored after, even on error).

    A bulk batch allocates several objects per fact (its model, its row tuple, its outcome) and keeps them
    until the batch is written, so the collector's full passes would walk every one of them, again and
    again, for nothing: none of them is part of a reference cycle. Reference counting still frees them.
    """
    if not gc.isenabled():  # paused by a caller already (or switched off by the application)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: The GIL switch interval while a bulk assert screens the next batch in a helper thread (CPython's default is
#: 5 ms). The writing thread takes the GIL back after every SQLite call of a batch (about eight); with the
#: helper thread busy in Python it waited up to a whole interval each time. Three alternating 100k-fact loads:
#: 78-84k facts/s with 5 ms, 86-90k with 0.5 ms (docs/facts-bulk.md).
HANDOFF_INTERVAL = 0.0005


class _Handoff:
    """The process's shortened switch interval: how many blocks use it, and what to put back."""

    lock = threading.Lock()
    users = 0
    saved: float | None = None  # the interval to put back, when a block shortened it


@contextmanager
def quick_handoff() -> Iterator[None]:
    """Run the block with a short GIL switch interval (:data:`HANDOFF_INTERVAL`), put back when the last
    block using it in this process ends (blocks in several threads may overlap). An interval already as short
    is left alone (CPython keeps whole microseconds: setting back what it reports could shorten it)."""
    with _Handoff.lock:
        if _Handoff.users == 0:
            current = sys.getswitchinterval()
            _Handoff.saved = current if current > HANDOFF_INTERVAL else None
            if _Handoff.saved is not None:
                sys.setswitchinterval(HANDOFF_INTERVAL)
        _Handoff.users += 1
    try:
        yield
    finally:
        with _Handoff.lock:
            _Handoff.users -= 1
            if _Handoff.users == 0 and _Handoff.saved is not None:
                sys.setswitchinterval(_Handoff.saved)


def check_batch_size(size: int) -> None:
    """A bulk assert's ``batch_size``: 1 to 100,000."""
    if not 1 <= size <= 100_000:
        raise InputError("batch_size", "must be between 1 and 100000")


def in_batches(items: Iterable[Any], size: int, *, lead: int = 0) -> Iterator[list[Any]]:
    """Lists of ``size`` items; the first ``size`` in lists of ``lead`` (a divisor of ``size``) when given."""
    iterator = iter(items)
    for _ in range(size // lead if lead else 0):
        batch = list(islice(iterator, lead))
        if not batch:
            return
        yield batch
    while batch := list(islice(iterator, size)):
        yield batch


#: Facts the screening thread frees at a time when it drops a written batch (:func:`drop_batch`).
DROP_SLICE = 1_024


def drop_batch(spent: list[Any]) -> None:
    """Free a written batch in the screening thread; ``spent`` (the batch as taken, its prepared facts) holds the
    last references to it. Its ~10 objects per fact took the writing thread ~4 ms a batch of 10,000 to free
    (LUBM(1): 130-200 M instructions, callgrind); here the fact list goes :data:`DROP_SLICE` at a time, so the
    GIL can change hands between slices while the writing thread waits for it after each SQLite statement."""
    for item in spent:
        facts = getattr(item, "facts", None)
        if type(facts) is list:
            while facts:
                del facts[-DROP_SLICE:]
    spent.clear()


def screening_pool(stack: ExitStack, *, tune_process: bool) -> ThreadPoolExecutor:
    """The helper thread of a bulk assert, which screens (and may take) the next batch while the caller writes;
    the caller shuts it down. ``tune_process``: a short GIL switch interval until ``stack`` closes."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - bulk asserts only

    if tune_process:
        stack.enter_context(quick_handoff())  # the writer gets the GIL back sooner
    return ThreadPoolExecutor(1, thread_name_prefix="mabos-facts-screen")
