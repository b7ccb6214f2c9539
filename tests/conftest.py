"""Shared fixtures: one validated knowledge base per test session (validation takes seconds)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from accelkb.knowledge import KnowledgeBase

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SHARED = REPO.parent / "shared"



@pytest.fixture(scope="session", autouse=True)
def _fresh_validation_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test session validates for real once, then reuses the result (never a stale cache)."""
    os.environ["ACCELKB_CACHE_DIR"] = str(tmp_path_factory.mktemp("accelkb-cache"))



@pytest.fixture(scope="session")
def kb(_fresh_validation_cache: None) -> KnowledgeBase:
    return KnowledgeBase()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return TESTS / "data"
