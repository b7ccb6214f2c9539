"""A user file is validated against the nodes it touches once the bundled knowledge is known
valid (ontology.kb, loader.affected_nodes): it must find exactly what whole-graph validation
finds. Every bad file of tests/data/bad goes through the focused path in the loader tests (the
bundled knowledge is known valid there: ``unknown_confidence`` is the case of a shape on a
blank provenance node); this one, a SHACL-SPARQL constraint across nodes, is also compared
with the whole-graph result, which costs ~15 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.ontology import loader

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = [DATA / "bad" / "chips_used_exceed_system.ttl"]


@pytest.fixture(scope="module")
def bundled() -> list[tuple[str, bytes]]:
    return loader.bundled_schema() + loader.bundled_data()


@pytest.fixture(scope="module")
def shapes() -> object:
    return loader.build_graph(loader.bundled_shapes())


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_focused_validation_finds_what_whole_graph_validation_finds(
        bundled: list[tuple[str, bytes]], shapes: object, path: Path) -> None:
    user = [loader.read_user_file(path)]
    graph = loader.build_graph(bundled + user)
    focus = loader.affected_nodes(graph, loader.build_graph(user))
    whole = loader.violations(graph, shapes)  # type: ignore[arg-type]
    focused = loader.violations(graph, shapes, focus)  # type: ignore[arg-type]
    assert [str(v) for v in focused] == [str(v) for v in whole]
    if path.parent.name == "bad":
        assert whole, f"{path.name} should be invalid"
