"""Allreduce: bounds met or proven optimal, constructions verified, the Z3 proof is sound."""

from __future__ import annotations

import itertools
import random

import pytest

from accelkb.solver.schedule.api import schedule
from accelkb.solver.schedule.bounds import all_distances, lower_bounds
from accelkb.solver.schedule.constructions.allreduce.encoding import AllreduceProblem, encode_seconds, solve
from accelkb.solver.schedule.constructions.closed_form import ring_allreduce, switch_allreduce
from accelkb.solver.schedule.constructions.groups import groups_allreduce
from accelkb.solver.schedule.model import Instance, Status
from accelkb.solver.schedule.topology import Topology, parse_topology
from accelkb.solver.schedule.verify import verify


@pytest.mark.parametrize(("spec", "chunks", "steps"), [
    ("ring:8", 8, 7), ("ring:9", 9, 8), ("torus:4x4", 16, 8), ("full:8", 8, 2),
    ("switch:8", 8, 9), ("ring:4", 1, 2),
])
def test_allreduce_is_optimal_and_verified(spec: str, chunks: int, steps: int) -> None:
    r = schedule(spec, "allreduce", chunks, time_limit_s=20)
    assert r.status is Status.OPTIMAL and r.verified
    assert r.makespan_steps == steps


def test_allreduce_optimality_proven_by_z3_where_the_bound_is_loose() -> None:
    # ring:6 with 4 chunks: bounds give 4, the ring construction 5, and no 4-step allreduce
    # exists (the gossip relaxation is UNSAT): that proof is the lower bound reported
    r = schedule("ring:6", "allreduce", 4, time_limit_s=20)
    assert max(v for k, v in r.bounds.items() if k != "z3_unsat") == 4
    assert r.lower_bound_steps == r.bounds["z3_unsat"] == 5
    assert (r.makespan_steps, r.status, r.verified) == (5, Status.OPTIMAL, True)
    assert r.proof.startswith("Z3: UNSAT with 4 steps")


def test_switch_bound_is_c_plus_one_and_not_beaten() -> None:
    b = lower_bounds(parse_topology("switch:4"), "allreduce", 4)
    assert b.best == 5
    topo = parse_topology("switch:4")
    p = AllreduceProblem(topo, 4, 4, exact=False)
    assert solve(p, all_distances(topo), deadline=_far())[0] == "unsat"


def test_ring_bound_cannot_be_beaten_by_one_step() -> None:
    topo = parse_topology("ring:8")
    p = AllreduceProblem(topo, 8, 6, exact=False)
    assert solve(p, all_distances(topo), deadline=_far())[0] == "unsat"


@pytest.mark.parametrize("spec", ["ring:3", "ring:4", "ring:7", "ring:10"])
@pytest.mark.parametrize("chunks", [1, 5, 11, 20])
def test_ring_construction_verifies(spec: str, chunks: int) -> None:
    topo = parse_topology(spec)
    got = ring_allreduce(topo, chunks)
    assert got is not None
    steps, trs = got
    assert verify(Instance(topo, "allreduce", chunks), trs, steps).ok
    assert steps >= lower_bounds(topo, "allreduce", chunks).best


@pytest.mark.parametrize("chunks", [1, 3, 8])
def test_switch_construction_meets_the_bound(chunks: int) -> None:
    topo = parse_topology("switch:5")
    steps, trs = switch_allreduce(topo, chunks) or (0, [])
    assert verify(Instance(topo, "allreduce", chunks), trs, steps).ok
    assert steps == lower_bounds(topo, "allreduce", chunks).best == chunks + 1


def test_constructions_refuse_other_shapes() -> None:
    assert ring_allreduce(parse_topology("torus:3x3"), 3) is None
    assert ring_allreduce(parse_topology("switch:4"), 3) is None
    assert switch_allreduce(parse_topology("ring:5"), 3) is None


def test_exact_encoding_gives_checked_schedules() -> None:
    topo = parse_topology("full:4")
    inst = Instance(topo, "allreduce", 4)
    verdict, trs = solve(AllreduceProblem(topo, 4, 2, exact=True), all_distances(topo), _far())
    assert verdict == "sat" and verify(inst, trs, 2).ok


def _random_topology(rng: random.Random) -> Topology:
    n = rng.randint(3, 6)
    links: dict[tuple[int, int], int] = {}
    order = list(range(n))
    rng.shuffle(order)
    for a, b in zip(order, order[1:] + order[:1], strict=True):  # strongly connected cycle
        links[(a, b)] = 1
    for _ in range(rng.randint(0, n)):
        u, v = rng.sample(range(n), 2)
        links[(u, v)] = links.get((u, v), 0) + 1
    return Topology(f"random{n}", n, links)


@pytest.mark.parametrize("seed", range(6))
def test_random_allreduce_schedules_verify_and_respect_the_bound(seed: int) -> None:
    rng = random.Random(seed)
    topo = _random_topology(rng)
    chunks = rng.randint(1, 4)
    r = schedule(topo, "allreduce", chunks, time_limit_s=5)
    assert r.verified and r.makespan_steps is not None
    assert r.makespan_steps >= r.lower_bound_steps
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    if r.status is Status.OPTIMAL:  # at a bound, or Z3's UNSAT one step below is the bound
        assert r.makespan_steps == r.lower_bound_steps
        assert r.proof.startswith("Z3: UNSAT") == ("z3_unsat" in r.bounds)


def _far() -> float:
    import time
    return time.monotonic() + 120


def test_small_dragonfly_allreduce_is_checked_and_never_a_false_optimal() -> None:
    # GroqDF2x8-style: 2 nodes of 8 chips, 16 chunks; the reference bounds say 3, the best
    # construction has 4, and the completion bound (bounds.py) proves that 3 is impossible
    topo = parse_topology("dragonfly:nodes=2")
    r = schedule(topo, "allreduce", 16, time_limit_s=4)
    assert r.verified and r.makespan_steps is not None
    assert verify(Instance(topo, "allreduce", 16), list(r.transfers), r.makespan_steps).ok
    assert r.makespan_steps >= r.lower_bound_steps == 4
    assert (r.status is Status.OPTIMAL) == (r.makespan_steps == 4)


def test_z3_skips_an_encoding_it_cannot_build_before_the_deadline() -> None:
    import time

    topo = parse_topology("dragonfly:nodes=2")
    p = AllreduceProblem(topo, 16, 3, exact=False)
    dist = all_distances(topo)
    assert encode_seconds(p, dist) > 0.5
    # a timeout is "unknown", never "unsat"
    assert solve(p, dist, time.monotonic() + 0.5) == ("unknown", [])


def test_the_exact_encoding_proves_what_the_relaxation_cannot() -> None:
    """ring:5, one chunk: one-way gossip fits in 2 steps, but no schedule adds without
    double-counting in 2 (the exact encoding is UNSAT: a proof); in 3 one does: it needs a
    base arrival that replaces the chip's value while another arrival adds to it."""
    topo = parse_topology("ring:5")
    dist = all_distances(topo)
    assert solve(AllreduceProblem(topo, 1, 2, exact=False), dist, _far())[0] == "sat"
    assert solve(AllreduceProblem(topo, 1, 2, exact=True), dist, _far()) == ("unsat", [])
    verdict, trs = solve(AllreduceProblem(topo, 1, 3, exact=True), dist, _far())
    assert verdict == "sat" and verify(Instance(topo, "allreduce", 1), trs, 3).ok
    r = schedule(topo, "allreduce", 1, time_limit_s=20)
    assert r.status is Status.OPTIMAL and r.makespan_steps == 3 and r.verified
    assert r.proof.startswith("Z3: UNSAT with 2 steps (exact encoding")
    # the written file lists a replacing arrival first: a replay in file order accepts it
    rows = r.schedule_file()["transfers"]
    assert isinstance(rows, list)
    in_file_order = [(x["step"], x["src"], x["dst"], tuple(x["chunk"])) for x in rows]
    assert verify(Instance(topo, "allreduce", 1), in_file_order, 3).ok


def _brute_min_steps(topo: Topology, limit: int) -> int | None:
    """Fewest steps of a one-chunk allreduce over every set of sends and every order in which
    a chip adds its arrivals: the replay's rules, searched exhaustively (tiny graphs only).
    Switches (vertices ``ranks..n-1``) start with nothing and send only what they hold."""
    n, links, ranks = topo.n, sorted(topo.links), topo.endpoints
    full = (1 << ranks) - 1
    frontier = {tuple(1 << v if v < ranks else 0 for v in range(n))}
    for step in range(1, limit + 1):
        nxt: set[tuple[int, ...]] = set()
        for state in frontier:
            usable = [(u, v) for u, v in links if state[u]]
            for pick in itertools.product((0, 1), repeat=len(usable)):
                arrivals: list[list[int]] = [[] for _ in range(n)]
                for (u, v), b in zip(usable, pick, strict=True):
                    if b:
                        arrivals[v].append(state[u])
                options = []
                for v in range(n):
                    outs = set()
                    for order in itertools.permutations(arrivals[v]):
                        cur: int | None = state[v]
                        for a in order:
                            assert cur is not None
                            if cur & a == 0:
                                cur |= a
                            elif a & cur == cur:
                                cur = a
                            elif a & cur != a:
                                cur = None
                                break
                        if cur is not None:
                            outs.add(cur)
                    options.append(outs)
                nxt.update(itertools.product(*options))
        if any(all(m == full for m in s[:ranks]) for s in nxt):
            return step
        frontier = nxt
    return None


def _graph(name: str, n: int, edges: list[tuple[int, int]]) -> Topology:
    return Topology(name, n, {e: 1 for a, b in edges for e in ((a, b), (b, a))})


@pytest.mark.parametrize("topo", [
    parse_topology("ring:4"), parse_topology("full:4"), parse_topology("ring:3"),
    _graph("path4", 4, [(0, 1), (1, 2), (2, 3)]),
    _graph("star5", 5, [(0, 1), (0, 2), (0, 3), (0, 4)]),
    _graph("paw4", 4, [(0, 1), (1, 2), (2, 0), (2, 3)]),
    parse_topology("switch:3"),
    Topology("path3+switch", 4, {e: 1 for a, b in [(0, 1), (1, 2), (2, 3), (0, 3)]
                                 for e in ((a, b), (b, a))}, ranks=3),
], ids=lambda t: t.name)
def test_the_exact_encoding_agrees_with_exhaustive_search(topo: Topology) -> None:
    """Soundness and completeness of the exact mode: its fewest steps (UNSAT below, SAT at)
    equal the exhaustive search's over all sends and all orders of adding."""
    dist = all_distances(topo)
    want = _brute_min_steps(topo, 4)
    got = next(t for t in range(1, 6)
               if solve(AllreduceProblem(topo, 1, t, exact=True), dist, _far())[0] == "sat")
    assert want == got
    assert solve(AllreduceProblem(topo, 1, got - 1, exact=True), dist, _far())[0] == "unsat"


@pytest.mark.parametrize("n", [4, 5, 7, 8, 11, 12, 16, 21])
def test_ring_halves_schedules_replay_for_several_chunks(n: int) -> None:
    from accelkb.solver.schedule.constructions.ring import halves_allreduce
    from accelkb.solver.schedule.topology import ring

    for chunks in (1, 2, 3, 5):
        made = halves_allreduce(ring(n), chunks)
        assert made is not None
        steps, trs = made
        report = verify(Instance(ring(n), "allreduce", chunks), trs, steps)
        assert report.ok and report.max_link_load <= 1.0, (n, chunks, report.errors[:2])
    assert halves_allreduce(parse_topology("torus:4x4"), 1) is None


def test_ring_halves_beat_reduce_and_broadcast_on_long_rings() -> None:
    """One chunk on ring:32: reduce-and-broadcast takes 31 steps, the halves 23 (diameter 16);
    on ring:12 with three chunks the halves give 8, which the exact encoding proves optimal."""
    r = schedule("ring:32", "allreduce", 1, time_limit_s=10)
    assert r.verified and r.makespan_steps == 23
    r = schedule("ring:12", "allreduce", 3, time_limit_s=30)
    assert r.verified and r.status is Status.OPTIMAL and r.makespan_steps == 8


@pytest.mark.parametrize("nodes", [2, 3, 4, 5])
@pytest.mark.parametrize("chunks", [1, 2, 3, 5])
def test_groups_allreduce_replays(nodes: int, chunks: int) -> None:
    """Add inside every node, with every node's sum sent after or the singletons before:
    accepted by the independent checker (no double counting, no collision), in ``max(c, 2)``
    steps."""
    topo = parse_topology(f"dragonfly:nodes={nodes}")
    got = groups_allreduce(topo, chunks)
    assert got is not None and got[0] == max(2, chunks)
    assert verify(Instance(topo, "allreduce", chunks), got[1], got[0]).ok


@pytest.mark.parametrize("spec", ["dragonfly:nodes=9", "torus:4x4", "ring:8", "switch:4",
                                  "full:8"])
def test_groups_allreduce_needs_its_shape(spec: str) -> None:
    """GroqRack: 4 global ports cannot reach 8 other nodes; no groups elsewhere."""
    assert groups_allreduce(parse_topology(spec), 1) is None


def test_one_chunk_dragonfly_allreduce_meets_the_diameter() -> None:
    """dragonfly:nodes=4, one chunk: 4 steps before this construction, now the bound."""
    r = schedule("dragonfly:nodes=4", "allreduce", 1, time_limit_s=10)
    assert r.status is Status.OPTIMAL and r.verified
    assert r.makespan_steps == r.lower_bound_steps == 2
