"""The deterministic extractor hears more and believes less (issue 32): clauses, modality, corrections, first
person plural, pronouns, names and roles, worded dates and clean spans - each a class of sentences, read through
the real extractor; and supersession by meaning on a real workspace (SQLite, the shipped ontologies)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from kg.extraction import extraction_service
from kg.extraction.clauses import clauses
from kg.extraction.dates import find_date
from kg.extraction.deterministic import DeterministicExtractor
from kg.extraction.entities import Vocabulary
from kg.ids import new_id
from kg.models.conversation import Message, Role
from kg.workspace import Workspace

T = datetime(2024, 9, 12, 9, 0, tzinfo=UTC)  # a Thursday


CONVERSATION = new_id("conversation")


def message(text: str, seq: int = 0, when: datetime = T) -> Message:
    return Message(uid=new_id("message"), conversation_uid=CONVERSATION, agent_id="a", seq=seq, role=Role.USER,
                   content=text, token_count=1, created_at=when)  # fmt: skip


def facts(*texts: str) -> set[tuple[str, str, str]]:
    found = DeterministicExtractor().extract([message(t, i) for i, t in enumerate(texts)], speaker="user")
    return {(f.subject, f.predicate, f.object.lower()) for f in found.facts if not f.ends}


def ended(*texts: str) -> set[tuple[str, str, str]]:
    found = DeterministicExtractor().extract([message(t, i) for i, t in enumerate(texts)], speaker="user")
    return {(f.subject, f.predicate, f.object.lower()) for f in found.facts if f.ends}


@pytest.mark.parametrize("text", [
    "If I moved to Rome I would finally learn Italian.",                # conditional
    "I would move to Rome if I could afford it.",
    "Maybe I will live in Rome one day.",                               # hedged
    "I wish I lived in Rome.",                                          # wish
    "Should I move to Rome?",                                           # questions
    "Do I like Rome",
    "She said I live in Rome.",                                         # reported speech about the speaker
    "My boss thinks I work at Rome Corp.",
    "I don't live in Rome.",                                            # negation
    "I am not from Rome.",
])  # fmt: skip
def test_no_speaker_fact_from_hypotheticals_questions_reports_or_negations(text: str) -> None:
    assert not {f for f in facts(text) if f[0] == "user"}


def test_a_report_about_the_reporter_is_a_fact_about_them() -> None:
    got = facts("My friend Anna said she works at Airbus now.")
    assert ("anna", "worksAt", "airbus") in got and ("user", "hasFriend", "anna") in got
    assert not {f for f in got if f[:2] == ("user", "worksAt")}


@pytest.mark.parametrize(("text", "right", "wrong"), [
    ("I work at Deloitte, sorry, I mean KPMG.", "kpmg", "deloitte"),
    ("I'm originally from Lisbon. Sorry, actually I meant Porto.", "porto", "lisbon"),
    ("I love tennis, no wait, I mean squash.", "squash", "tennis"),
    ("I'm 41. Sorry, I mean 42.", "42", "41"),
])  # fmt: skip
def test_a_correction_replaces_what_it_corrects(text: str, right: str, wrong: str) -> None:
    objects = {o for _, _, o in facts(text)}
    assert right in objects and wrong not in objects


def test_first_person_plural_pronouns_names_and_roles() -> None:
    assert ("user", "livesIn", "porto") in facts("We moved to Porto at the start of June.")
    got = facts("My brother Tom moved to Canada. He works as a pilot.")
    assert {("tom", "livesIn", "canada"), ("tom", "occupation", "pilot"), ("user", "hasBrother", "tom")} <= got
    assert ("user", "occupation", "pilot") not in got
    assert ("sara", "livesIn", "bern") in facts("I met my friend Sara yesterday.", "She lives in Bern now.")
    assert ("user", "name", "jules") in facts("Call me Jules.")
    assert {("user", "occupation", "freelance illustrator"), ("user", "livesIn", "ghent")} <= facts(
        "I'm a freelance illustrator based in Ghent.")  # fmt: skip
    assert {("user", "name", "priya nair"), ("user", "age", "34")} <= facts("Hi! My name is Priya Nair and I'm 34.")
    assert ("user", "hasPartner", "lena") in ended("Lena and I broke up last week.")


def test_spans_stop_at_clause_boundaries() -> None:
    assert facts("I like coffee, I drink three cups a day.") == {("user", "likes", "coffee")}
    assert facts("I enjoy hiking and I hate running.") == {("user", "likes", "hiking"), ("user", "dislikes", "running")}
    assert not any("_i" in o or o.endswith(" i") for _, _, o in facts("If I moved to Rome I would learn Italian."))


@pytest.mark.parametrize(("text", "when", "expected"), [
    ("at the start of June", datetime(2024, 7, 20, tzinfo=UTC), "2024-06-01"),
    ("in March", datetime(2024, 10, 3, tzinfo=UTC), "2024-03-01"),
    ("in March", datetime(2024, 2, 3, tzinfo=UTC), "2023-03-01"),   # the latest March not after the message
    ("at the end of November", datetime(2024, 2, 20, tzinfo=UTC), "2023-11-30"),
    ("in mid-April", datetime(2024, 6, 24, tzinfo=UTC), "2024-04-15"),
    ("two years ago", datetime(2024, 5, 1, tzinfo=UTC), "2022-05-01"),
    ("two months ago", datetime(2024, 6, 10, tzinfo=UTC), "2024-04-10"),
    ("last week", T, "2024-09-02"),
])  # fmt: skip
def test_worded_dates(text: str, when: datetime, expected: str) -> None:
    found = find_date(f"I moved {text}.", when)
    assert found is not None and f"{found.when:%Y-%m-%d}" == expected


def test_a_clause_takes_its_sentence_date_and_modes_are_named() -> None:
    [left, joined] = clauses("I left Spotify and joined Klarna in March.", T)
    assert joined.text == "I joined Klarna in March" and left.date == joined.date
    assert [c.mode for c in clauses("I no longer work at Nokia. If I could, I would. Do I? I don't.", T)] == [
        "ended", "hypothetical", "hypothetical", "question", "negated"]  # fmt: skip


@pytest.fixture
def xws(quiet_workspace: Callable[[datetime], Workspace]) -> Workspace:
    return quiet_workspace(datetime(2025, 1, 1, tzinfo=UTC))


def said(ws: Workspace, *rows: tuple[str, str], agent: str = "a") -> None:
    ws.conversations.ingest(agent, "s1", [{"role": "user", "content": t, "created_at": at} for at, t in rows])
    extraction_service(ws).extract(agent)


def current(ws: Workspace, predicate: str, agent: str = "a") -> dict[str, str | None]:
    return {f.object: (f"{f.valid_until:%Y-%m-%d}" if f.valid_until else None)
            for f in ws.facts.query(agent, subject="user", predicate=predicate, limit=100)}  # fmt: skip


def test_opposites_and_change_words_close_at_the_time_the_text_gives(xws: Workspace) -> None:
    said(xws, ("2024-01-10T10:00:00Z", "I love coffee. I work at Deloitte."),
         ("2024-08-20T10:00:00Z", "These days I can't stand coffee. I switched to green tea."),
         ("2024-09-12T10:00:00Z", "I left Deloitte and joined KPMG at the start of August."),
         ("2024-09-13T10:00:00Z", "Mia and I broke up last week. I quit Bosch two years ago."))  # fmt: skip
    assert current(xws, "likes") == {"coffee": "2024-08-20", "green tea": None}
    assert current(xws, "dislikes") == {"coffee": None}
    assert current(xws, "worksAt") == {"deloitte": "2024-08-01", "kpmg": None, "bosch": "2022-09-13"}
    assert current(xws, "hasPartner") == {"mia": "2024-09-02"}  # an ending with nothing stored is recorded closed


def test_hypotheticals_never_close_and_wider_scopes_are_never_closed(xws: Workspace) -> None:
    said(xws, ("2024-03-01T09:00:00Z", "I live in Vienna."),
         ("2024-03-05T09:00:00Z", "If I moved to Rome I would finally learn Italian."))  # fmt: skip
    assert current(xws, "livesIn") == {"vienna": None}
    xws.facts.assert_fact("b", "user", "livesIn", "oslo", scope="global")
    said(xws, ("2024-04-01T09:00:00Z", "I moved to Bergen."), agent="b")
    assert current(xws, "livesIn", agent="b") == {"oslo": None, "bergen": None}  # global stays open


def test_the_ontology_declares_what_cannot_hold_together(xws: Workspace) -> None:
    (xws.path / "ontologies" / "hobbies.jsonld").write_text(json.dumps({
        "@context": {"owl": "http://www.w3.org/2002/07/owl#", "ex": "https://example.org/h#"},
        "@graph": [{"@id": "ex:enjoys", "@type": "owl:ObjectProperty",
                    "owl:propertyDisjointWith": {"@id": "ex:dislikes"}},
                   {"@id": "ex:drives", "@type": ["owl:ObjectProperty", "owl:FunctionalProperty"]}],
    }))  # fmt: skip
    vocabulary = Vocabulary.from_directory(xws.path / "ontologies")
    assert vocabulary.is_functional("drives") and vocabulary.opposite("dislikes") >= {"enjoys"}
    xws.facts.assert_fact("a", "user", "enjoys", "opera", scope="agent:a", valid_from="2024-01-01T00:00:00Z")
    said(xws, ("2024-05-01T09:00:00Z", "I can't stand opera."))
    assert current(xws, "enjoys") == {"opera": "2024-05-01"} and current(xws, "dislikes") == {"opera": None}
