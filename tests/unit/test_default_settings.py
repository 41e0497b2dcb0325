"""Defaults constructed at import without validation (issue 33) are what validating the same values gives.

``DEFAULT_FUSION`` and ``RELATIVE_FUSION`` (kg.recall.fusion_types) are ``model_construct``ed so that importing
their module, which a recall does, builds no validator; a recall with the default weights uses ``DEFAULT_FUSION`` as
it is. Each must equal the validated model field by field, with the
same Python types (a constructed model never converts, so an int where a float belongs would go unnoticed).
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from kg.config import RecallConfig
from kg.errors import InputError
from kg.recall.fusion_types import DEFAULT_FUSION, RELATIVE_FUSION, FusionSettings
from kg.workspace import recall_settings


def _fields(model: BaseModel) -> dict[str, tuple[type, object]]:
    return {name: (type(value), value) for name, value in vars(model).items()}


@pytest.mark.parametrize(
    ("constructed", "validated"),
    [
        (DEFAULT_FUSION, FusionSettings()),
        (RELATIVE_FUSION, FusionSettings(vector_weight=0.4, bm25_weight=0.6, normalization="relative")),
    ],
    ids=["DEFAULT_FUSION", "RELATIVE_FUSION"],
)
def test_a_constructed_default_is_the_validated_model(constructed: BaseModel, validated: BaseModel) -> None:
    assert type(constructed) is type(validated)
    assert constructed == validated
    assert _fields(constructed) == _fields(validated)
    assert constructed.model_dump_json() == validated.model_dump_json()


def test_a_recall_with_the_default_weights_uses_the_default_fusion_and_other_weights_are_validated() -> None:
    assert recall_settings(RecallConfig()).fusion is DEFAULT_FUSION
    chosen = recall_settings(RecallConfig(vector_weight=0.5, bm25_weight=0.5)).fusion
    assert _fields(chosen) == _fields(FusionSettings(vector_weight=0.5, bm25_weight=0.5))
    with pytest.raises(InputError, match="vector_weight"):  # both zero: the fusion settings' own rule refuses it
        recall_settings(RecallConfig(vector_weight=0.0, bm25_weight=0.0))
