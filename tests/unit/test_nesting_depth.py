"""kg.limits.nesting_depth / refuse_deep_nesting: the depth pyoxigraph's RDF/XML and JSON-LD parsers are spared.

The depth is checked against independent readers of the same text: expat (Python's XML parser) counting start and
end events, and ``json`` walking the decoded value. Generated documents put in what a naive scan would miscount:
empty-element tags, ``>`` and ``/>`` inside quoted attribute values, markup inside comments, CDATA sections and
processing instructions, brackets and escaped quotes inside JSON strings.
"""

from __future__ import annotations

import json
import xml.parsers.expat
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.limits import MAX_NESTING, nesting_depth, refuse_deep_nesting
from tests.budget import examples

_TEXT = st.text(alphabet="ab </>&\"'[]{}-!?", max_size=8)
_DECOYS = st.sampled_from(
    ["<!-- </a></b> <c><d> -->", "<![CDATA[</x></y><z>]]>", "<?pi </q> <r> ?>", "text > with /> marks"]
)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


@st.composite
def _element(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(st.sampled_from(["a", "x:p", "rdf:Description"]))
    attrs = "".join(f' k{i}="{_escape(v)}"' for i, v in enumerate(draw(st.lists(_TEXT, max_size=2))))
    if depth > 6 or draw(st.booleans()):
        return f"<{name}{attrs}/>" if draw(st.booleans()) else f"<{name}{attrs}></{name}>"
    children = draw(st.lists(st.one_of(_element(depth + 1), _DECOYS), max_size=3))
    return f"<{name}{attrs}>{''.join(children)}</{name}>"


def _expat_depth(document: str) -> int:
    parser = xml.parsers.expat.ParserCreate()
    state = [0, 0]

    def start(_name: str, _attrs: Any) -> None:
        state[0] += 1
        state[1] = max(state[1], state[0])

    def end(_name: str) -> None:
        state[0] -= 1

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.Parse(document, True)
    return state[1]


def _json_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_json_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_json_depth, value), default=0)
    return 0


@settings(max_examples=examples(150), deadline=None)
@given(_element())
def test_the_xml_depth_is_expat_s(element: str) -> None:
    document = f'<?xml version="1.0"?>\n<root xmlns:x="http://x/" xmlns:rdf="http://r/">{element}</root>'
    assert nesting_depth(document, "xml") == _expat_depth(document)


_JSON = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(alphabet='ab[]{}"\\\n', max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=30,
)


@settings(max_examples=examples(150), deadline=None)
@given(_JSON, st.booleans())
def test_the_json_depth_is_that_of_the_decoded_value(value: Any, indent: bool) -> None:
    assert nesting_depth(json.dumps(value, indent=2 if indent else None), "json") == _json_depth(value)


@pytest.mark.parametrize("syntax", ["xml", "json"])
def test_the_bound_is_inclusive_and_the_refusal_names_the_document(syntax: str) -> None:
    def nested(depth: int) -> str:
        return "<a>" * depth + "</a>" * depth if syntax == "xml" else "[" * depth + "]" * depth

    refuse_deep_nesting(nested(MAX_NESTING), syntax, "documents[0]", "ok.rdf")
    with pytest.raises(InputError) as refused:
        refuse_deep_nesting(nested(MAX_NESTING + 1), syntax, "documents[2]", "deep.rdf")
    assert str(refused.value) == (
        f"documents[2]: deep.rdf: {syntax.upper()} nested {MAX_NESTING + 1} levels deep is refused (at most 256)"
    )


def test_depth_hidden_in_attributes_comments_or_cdata_is_still_counted() -> None:
    # an attacker's tricks against a naive scan: '/>' and an end tag inside attribute values (pyoxigraph accepts a
    # '<' there, although XML forbids it), end tags inside comments, CDATA and processing instructions
    opening = "<a t=\"/>\" u='</a>'><!-- </a> --><![CDATA[</a>]]><?pi </a>?>"
    assert nesting_depth(opening * 300 + "</a>" * 300, "xml") == 300
    assert nesting_depth('{"k": "]]]}}}\\"]]", "l": ' * 300 + "1" + "}" * 300, "json") == 300


def test_unterminated_markup_is_read_once() -> None:
    # every '<!--', '<![CDATA[', '<?' and '"' left open: each scan attempt stops at the next '<' or consumes the
    # rest, so a megabyte of them ends (a quadratic scan would not, in any practical time)
    # (pyoxigraph reads a '<' inside a quoted attribute value, so the scan does too)
    for text in ("<!--" * 250_000, "<![CDATA[" * 120_000, "<?" * 500_000, '<a x="' * 170_000, "<a x='<b y=\"" * 80_000,
                 '<a x="' + "<b " * 300_000, '<a x="<">' * 100_000):  # fmt: skip
        assert nesting_depth(text, "xml") <= 100_000
    assert nesting_depth('"\\' * 500_000, "json") == 0
