"""Reading a Bayesian problem's numbers from its words, whichever way the sentence puts them.

Found by trying the router as a user: "has a 5% false positive rate" (the second alternative of a pattern)
crashed `reason --auto` with an internal error, because the number was read from the first group only."""

from __future__ import annotations

import pytest

from reasoning.router.extract import read_inputs

PHRASINGS = [
    (
        "A test is 95% sensitive and has a 5% false positive rate; 1 in 1000 people have it. She tested positive.",
        0.95,
        0.05,
        0.001,
    ),
    (
        "The sensitivity is 90% and the false positive rate is 10%; prevalence is 2%. He tested positive.",
        0.90,
        0.10,
        0.02,
    ),
    (
        "Sensitivity of 80%, specificity of 95%, one in 200 has the condition; the result came back positive.",
        0.80,
        0.05,
        0.005,
    ),
    (
        "The scanner is 99% sensitive and 97% specific. 1 out of 500 bags holds a weapon. A bag tested positive.",
        0.99,
        0.03,
        0.002,
    ),
]


@pytest.mark.parametrize(("text", "sensitivity", "fpr", "prevalence"), PHRASINGS)
def test_every_phrasing_is_read(text: str, sensitivity: float, fpr: float, prevalence: float) -> None:
    found = read_inputs("bayesian", text)
    assert found is not None and found.inputs is not None, found
    nodes = found.inputs["network"]["nodes"]
    assert nodes["Positive"]["cpt"]["T"] == pytest.approx(sensitivity)
    assert nodes["Positive"]["cpt"]["F"] == pytest.approx(fpr)
    assert nodes["Condition"]["cpt"][""] == pytest.approx(prevalence)
    assert found.inputs["evidence"] == {"Positive": True}


def test_a_missing_number_is_named_not_guessed() -> None:
    found = read_inputs("bayesian", "A test has a 5% false positive rate. She tested positive.")
    assert found is not None and found.inputs is None
    assert any(m.startswith("sensitivity") for m in found.missing)
    assert any(m.startswith("prevalence") for m in found.missing)
