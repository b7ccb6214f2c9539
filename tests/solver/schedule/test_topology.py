"""Topology generators, the spec grammar and node-link files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED

from accelkb.errors import InputError
from accelkb.solver.schedule.topology import load_topology_file, parse_topology

BENCH = SHARED / "bench"


@pytest.mark.parametrize(("spec", "chips", "units"), [
    ("ring:8", 8, 16), ("ring:2", 2, 2), ("torus:4x4", 16, 64), ("torus:3:3", 9, 36),
    ("torus:4x4x4", 64, 384), ("full:8", 8, 56), ("fc:8", 8, 56), ("hypercube:5", 32, 160),
    ("dragonfly:nodes=9", 72, 792), ("groq:2", 16, 16 * 11),
    ("dragonfly:racks=8,nodes=9", 576, 6304),
])
def test_generators_have_the_expected_size(spec: str, chips: int, units: int) -> None:
    t = parse_topology(spec)
    assert (t.n, t.unit_links) == (chips, units)


def test_dragonfly_has_nodes_of_eight_fully_connected_chips_and_four_global_ports() -> None:
    t = parse_topology("dragonfly:nodes=9,chips=8,ports=4")
    for u in range(8):
        local = [v for v in range(8) if v != u]
        assert all(t.links[(u, v)] == 1 for v in local)
        glob = sum(m for (a, b), m in t.links.items() if a == u and b // 8 != 0)
        assert glob == 4
    assert len(t.groups[0]) == 9


def test_two_level_dragonfly_is_symmetric_with_groups() -> None:
    t = parse_topology("dragonfly:racks=3,nodes=3,chips=4,ports=4,local=2")
    assert all(t.links.get((v, u)) == m for (u, v), m in t.links.items())
    assert [len(level) for level in t.groups] == [9, 3]
    assert all(t.out_units(v) <= 3 + 4 for v in range(t.n))


@pytest.mark.parametrize("spec", [
    "ring", "ring:0", "ring:x", "torus:4x", "torus:2x2x2x2", "blob:3", "dragonfly:nodes=40",
    "dragonfly:foo=3", "dragonfly:chips=8", "hypercube:20", "groq2l:10:3:2",
])
def test_bad_specs_say_what_was_expected(spec: str) -> None:
    with pytest.raises(InputError, match="expected"):
        parse_topology(spec)


def test_missing_and_malformed_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_topology_file(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="expected a node-link JSON"):
        load_topology_file(bad)
    edge = tmp_path / "edge.json"
    edge.write_text(json.dumps({"nodes": [{"id": 0}], "edges": [{"source": 0, "target": 7}]}))
    with pytest.raises(InputError, match="7 is missing or not a node id"):
        load_topology_file(edge)


def test_disconnected_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "two.json"
    f.write_text(json.dumps({"directed": True, "nodes": [{"id": "a"}, {"id": "b"}],
                             "edges": [{"source": "a", "target": "b", "links": 2}]}))
    with pytest.raises(InputError, match="strongly connected"):
        load_topology_file(f)


def test_undirected_file_gets_links_both_ways(tmp_path: Path) -> None:
    f = tmp_path / "u.json"
    f.write_text(json.dumps({"directed": False, "nodes": [{"id": 0}, {"id": 1}],
                             "edges": [{"source": 0, "target": 1, "links": 3}]}))
    t = load_topology_file(f)
    assert dict(t.links) == {(0, 1): 3, (1, 0): 3}


def test_a_file_that_does_not_say_is_undirected_as_networkx_reads_it(tmp_path: Path) -> None:
    """A ring without "directed" was read as one-way links: an all-gather took 3 steps, not 2
    (from an audit)."""
    import networkx as nx

    ring = {"nodes": [{"id": i} for i in range(4)],
            "edges": [{"source": i, "target": (i + 1) % 4} for i in range(4)]}
    f = tmp_path / "ring.json"
    f.write_text(json.dumps(ring))
    assert not nx.node_link_graph(ring, edges="edges").is_directed()
    assert dict(load_topology_file(f).links) == dict(parse_topology("ring:4").links)


@pytest.mark.skipif(not BENCH.exists(), reason="../shared/bench is not next to the repo")
def test_generators_reproduce_every_bench_file_exactly() -> None:
    files = sorted((BENCH / "topologies").glob("*.json"))
    assert len(files) >= 13
    for f in files:
        spec = json.loads(f.read_text())["graph"]["spec"]
        assert dict(parse_topology(spec).links) == dict(load_topology_file(f).links), f.name


def test_switch_node_has_a_switch_vertex_that_is_no_rank() -> None:
    t = parse_topology("switch:8")
    assert (t.n, t.endpoints, t.unit_links) == (9, 8, 16)
    assert t.reversed().endpoints == 8
