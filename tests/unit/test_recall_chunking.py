"""Chunking of Markdown: token count, sizes and overlap, header awareness, line spans, CJK, stable ids."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.memory.files import daily_log_entry, daily_log_header
from kg.recall.chunking import Chunk, chunk_markdown, count_tokens, headed_lines, split_lines
from kg.text.words import TOKEN_RE


def words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{k}" for k in range(n))


def lines_of(text: str) -> list[str]:
    return split_lines(text)


def cited(text: str, chunk: Chunk) -> str:
    """The lines a chunk cites, as they are in the file."""
    return "\n".join(lines_of(text)[chunk.line_start - 1 : chunk.line_end])


def test_a_token_is_a_word_or_one_cjk_character():
    assert count_tokens("JWT uses RS256.") == 3
    assert count_tokens("snake_case, e-mail: 3.14") == 5
    assert count_tokens("## 14:03 — **bold**") == 3
    assert count_tokens("東京タワー") == 5
    assert count_tokens("Café naïve Straße") == 3


def test_empty_and_blank_text_give_no_chunks():
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n   \n\t\n") == []


def test_a_small_file_is_one_chunk_citing_its_lines():
    text = "\n# Title\n\nfirst line\nsecond line\n\n"
    [chunk] = chunk_markdown(text, "agents/a/MEMORY.md")
    assert (chunk.line_start, chunk.line_end) == (2, 5)
    assert chunk.text == "# Title\n\nfirst line\nsecond line" == cited(text, chunk)
    assert chunk.heading == "Title" and chunk.starts_at_heading
    assert chunk.tokens == 5
    assert chunk.id.startswith("agents/a/MEMORY.md:2:") and len(chunk.id.rsplit(":", 1)[1]) == 16


def test_chunks_hold_at_most_size_tokens_and_overlap_by_80():
    text = "\n".join(words(10, f"l{n}x") for n in range(100))  # 100 lines of 10 tokens, no headings
    chunks = chunk_markdown(text, "f.md")
    assert [c.tokens for c in chunks[:-1]] == [400] * (len(chunks) - 1)
    for before, after in itertools.pairwise(chunks):
        assert after.line_start == before.line_end - 7  # the last 8 lines (80 tokens) are repeated
    assert chunks[0].line_start == 1 and chunks[-1].line_end == 100
    assert all(c.text == cited(text, c) for c in chunks)


def test_overlap_never_exceeds_its_budget_with_uneven_lines():
    text = "\n".join(words(7 + n % 13, f"l{n}x") for n in range(200))
    chunks = chunk_markdown(text, "f.md", size=120, overlap=30)
    assert all(c.tokens <= 120 for c in chunks)
    for before, after in itertools.pairwise(chunks):
        shared = lines_of(text)[after.line_start - 1 : before.line_end]
        assert 0 < sum(count_tokens(s) for s in shared) <= 30


def test_zero_overlap_gives_disjoint_chunks():
    text = "\n".join(words(10, f"l{n}x") for n in range(50))
    chunks = chunk_markdown(text, "f.md", size=100, overlap=0)
    assert [(c.line_start, c.line_end) for c in chunks] == [(1 + 10 * k, 10 + 10 * k) for k in range(5)]


def test_sections_are_packed_whole_and_a_chunk_starts_at_the_header_that_does_not_fit():
    sections = [f"## Section {n}\n\n{words(40 * (n + 1), f's{n}x')}\n" for n in range(6)]
    text = "# Notes\n\n" + "\n".join(sections)  # sections of 42, 82, 122, 162, 202 and 242 tokens
    chunks = chunk_markdown(text, "f.md")
    assert all(c.starts_at_heading for c in chunks)
    assert [c.heading for c in chunks] == ["Notes", "Notes > Section 3", "Notes > Section 5"]
    assert [c.tokens for c in chunks] == [1 + 42 + 82 + 122, 162 + 202, 242]
    assert all(c.text == cited(text, c) for c in chunks)


def test_a_long_section_is_split_with_overlap_and_keeps_its_heading_path():
    body = "\n".join(words(20, f"p{n}x") for n in range(50))  # 1000 tokens in one section
    text = f"# Daily log 2024-05-01\n\n## 14:03 decision M-1 (importance 0.80, store working)\n\n{body}\n"
    chunks = chunk_markdown(text, "f.md")
    assert [(c.line_start, c.line_end, c.tokens) for c in chunks] == [(1, 23, 395), (20, 39, 400), (36, 54, 380)]
    assert chunks[0].starts_at_heading and not chunks[1].starts_at_heading
    entry = "Daily log 2024-05-01 > 14:03 decision M-1 (importance 0.80, store working)"
    assert [c.heading for c in chunks] == ["Daily log 2024-05-01", entry, entry]


def test_a_heading_inside_the_overlap_window_is_where_the_next_chunk_starts():
    # a section too small to end the chunk at (less than half of it) but inside the overlap window
    text = "\n".join([*(words(2, f"a{n}x") for n in range(20)), "## Late", *(words(5, f"c{n}x") for n in range(30))])
    chunks = chunk_markdown(text, "f.md", size=100, overlap=60)
    assert chunks[0].line_start == 1 and chunks[0].line_end == 32
    assert chunks[1].line_start == 21 and chunks[1].starts_at_heading and chunks[1].heading == "Late"


def test_daily_log_entries_carry_the_entry_heading_path():
    day = date(2024, 5, 1)
    text = daily_log_header(day)
    for minute in range(40):
        text += daily_log_entry(when=datetime(2024, 5, 1, 14, minute, tzinfo=UTC), uid=f"M-{minute:026d}",
                                type_="decision", importance=0.8, store="working", tags=["auth"],
                                content=words(25, f"e{minute}x"))  # fmt: skip
    chunks = chunk_markdown(text, "agents/a/memory/2024-05-01.md")
    assert len(chunks) > 3
    assert chunks[0].heading == "Daily log 2024-05-01"
    for chunk in chunks[1:]:
        assert chunk.starts_at_heading
        assert chunk.heading.startswith("Daily log 2024-05-01 > 14:")
        assert chunk.heading.split(" > ")[1] == lines_of(text)[chunk.line_start - 1].removeprefix("## ")
    assert all(c.text == cited(text, c) for c in chunks)


def test_nested_headings_build_the_path_and_a_shallower_one_pops_it():
    text = "# A\n## B\n### C\nc text\n## D\nd text\n# E\ne text\n"
    path_of = {line: heading for _, line, heading in headed_lines(text)}
    assert path_of["c text"] == "A > B > C"
    assert path_of["d text"] == "A > D"
    assert path_of["e text"] == "E"


def test_hashes_in_fenced_code_and_without_a_space_are_not_headings():
    text = "# Real\n```bash\n# not a heading\n```\n#hashtag\n~~~\n## nor this\n~~~\nafter\n"
    assert {heading for _, _, heading in headed_lines(text)} == {"Real"}


def test_a_line_longer_than_the_overlap_is_split_into_pieces_that_cite_it():
    text = f"# T\n{words(1000)}\nend\n"
    chunks = chunk_markdown(text, "l.md")
    assert all(c.tokens <= 400 for c in chunks)
    assert all(c.line_start == 2 for c in chunks[1:]) and chunks[-1].line_end == 3
    assert ":2+" in chunks[1].id  # a chunk that starts inside a line says where
    assert len({c.id for c in chunks}) == len(chunks)
    assert all(c.tokens == count_tokens(c.text) for c in chunks)
    assert {t for c in chunks for t in TOKEN_RE.findall(c.text)} == {"T", "end", *words(1000).split()}


def test_cjk_text_without_spaces_is_chunked_by_character():
    text = "# 日本語のメモ\n\n" + "東京タワーに行きました。" * 100 + "\n\n## 次\n\n中文也可以。\n"
    chunks = chunk_markdown(text, "cjk.md")
    assert all(c.tokens <= 400 for c in chunks) and len(chunks) >= 3
    assert chunks[0].heading == "日本語のメモ"
    assert chunks[-1].line_end == 7 and chunks[-1].text.endswith("## 次\n\n中文也可以。")


def test_crlf_and_bom_keep_line_numbers_right():
    text = "\ufeff# Title\r\n\r\nline three\r\nline four\r\n"
    [chunk] = chunk_markdown(text, "w.md")
    assert (chunk.line_start, chunk.line_end) == (1, 4)
    assert chunk.text == "# Title\n\nline three\nline four"


def test_ids_are_stable_and_survive_edits_further_down():
    sections = [f"## S{n}\n{words(150, f's{n}x')}\n" for n in range(6)]
    before = chunk_markdown("\n".join(sections), "f.md")
    assert before == chunk_markdown("\n".join(sections), "f.md")
    edited = chunk_markdown("\n".join([*sections[:-1], sections[-1] + "one more line\n"]), "f.md")
    assert [c.id for c in edited[:-1]] == [c.id for c in before[:-1]]
    assert edited[-1].id != before[-1].id and edited[-1].line_start == before[-1].line_start


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1)])
def test_bad_parameters_are_refused(size, overlap):
    with pytest.raises(InputError):
        chunk_markdown("x", size=size, overlap=overlap)


_LINE = st.one_of(
    st.lists(st.sampled_from(["alpha", "beta", "γάμμα", "東京", "x1", "—", "`", "  "]), max_size=60).map(" ".join),
    st.sampled_from(["# H1", "## H2", "### H3", "```", "", "   "]),
)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, max_size=80), size=st.integers(20, 120), overlap=st.integers(0, 19))
def test_chunks_cover_every_line_within_budget(lines, size, overlap):
    text = "\n".join(lines)
    chunks = chunk_markdown(text, "p.md", size=size, overlap=overlap)
    covered = {n for c in chunks for n in range(c.line_start, c.line_end + 1)}
    assert {n for n, line in enumerate(lines, 1) if line.strip()} <= covered
    for chunk in chunks:
        assert chunk.tokens == count_tokens(chunk.text) <= size
        assert chunk.text.strip() and chunk.line_start <= chunk.line_end
    starts = [(c.line_start, c.id) for c in chunks]
    assert [s for s, _ in starts] == sorted(s for s, _ in starts)
