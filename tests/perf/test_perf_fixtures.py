"""The explicit datasheet specs of ``tests/perf_fixtures.py`` build."""

from __future__ import annotations

from perf_fixtures import resolver


def test_fixtures_build() -> None:
    assert resolver("dgx-a100-superpod", 64).chips == 64
    assert resolver("groq-576").levels[-1].group_chips == 576
