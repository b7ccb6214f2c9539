"""Traffic matrices: from files and from parallel layouts, scheduled, verified, compared with
dynamic routing; bad input is exit 2 with a message and no file written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf.netsim import collective_messages, simulate_collective
from accelkb.solver import schedule
from accelkb.solver.schedule.model import Instance
from accelkb.solver.schedule.topology import parse_topology
from accelkb.solver.schedule.traffic import layout_traffic, parse_traffic, read_traffic
from accelkb.solver.schedule.verify import verify


def _chip(d: int, s: int, t: int, tp: int, pp: int) -> int:
    return (d * pp + s) * tp + t


def test_layout_traffic_groups_and_counts() -> None:
    tp, pp, dp = 2, 3, 2
    demand = layout_traffic(tp, pp, dp, "all", chunks=3)
    pairs = {(s, d): k for s, d, k in demand}
    assert len(pairs) == len(demand) and set(pairs.values()) == {3}
    tensor = {(a, b) for a, b in pairs if a // tp == b // tp}
    data = {(a, b) for a, b in pairs if a % (tp * pp) == b % (tp * pp)}
    pipe = set(pairs) - tensor - data
    assert len(tensor) == dp * pp * tp * (tp - 1)
    assert len(data) == pp * tp * dp * (dp - 1)
    assert pipe == {(_chip(d, s, t, tp, pp), _chip(d, s + 1, t, tp, pp))
                    for d in range(dp) for s in range(pp - 1) for t in range(tp)}
    assert layout_traffic(tp, pp, dp, "pipeline") == sorted((a, b, 1) for a, b in pipe)


@pytest.mark.parametrize("args", [(1, 4, 1, "tensor"), (4, 1, 1, "pipeline"), (4, 4, 1, "data"),
                                  (1, 1, 1, "all"), (2, 2, 1, "bogus"), (0, 2, 1, "all")])
def test_layout_traffic_refuses_empty_or_bad(args: tuple[int, int, int, str]) -> None:
    with pytest.raises(InputError, match="expected"):
        layout_traffic(*args)


def test_parse_traffic_formats_agree() -> None:
    listed = parse_traffic({"traffic": [[0, 2, 3], {"src": 2, "dst": 1, "chunks": 1}, [1, 0, 0]]})
    matrix = parse_traffic({"matrix": [[0, 0, 3], [0, 0, 0], [0, 1, 0]]})
    assert listed == matrix == [(0, 2, 3), (2, 1, 1)]


@pytest.mark.parametrize(("doc", "where"), [
    ([[0, 1, 1]], "list"),
    ({"traffic": {"a": 1}}, "list"),
    ({"traffic": [[0, 1]]}, "traffic[0]"),
    ({"traffic": [[0, 1, 1], [2, 2, 1]]}, "traffic[1]"),
    ({"traffic": [[0, 1, -1]]}, "traffic[0]"),
    ({"traffic": [[0, 1, True]]}, "traffic[0]"),
    ({"traffic": [{"src": 0, "dst": 1}]}, "traffic[0]"),
    ({"traffic": [[0, 1, 0]]}, "chunks > 0"),
    ({"matrix": [[0, 1], [1]]}, "square"),
    ({"matrix": [[1, 0], [0, 0]]}, "matrix[0][0]"),
    ({"matrix": [[0, 1.5], [0, 0]]}, "matrix[0][1]"),
])
def test_parse_traffic_errors_name_the_entry(doc: object, where: str) -> None:
    with pytest.raises(InputError, match="expected") as err:
        parse_traffic(doc)
    assert where in str(err.value)


def test_read_traffic_unreadable(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(InputError, match="readable JSON traffic file"):
            read_traffic(path)


def test_layout_traffic_schedule_is_verified_and_beats_no_bound() -> None:
    topo = parse_topology("torus:4x4")
    demand = layout_traffic(4, 2, 2, "all", chunks=2)
    res = schedule(topo, "traffic", demand=demand, time_limit_s=5)
    assert res.verified and res.makespan_steps is not None
    assert res.makespan_steps >= res.lower_bound_steps
    report = verify(Instance(topo, "traffic", 1, tuple(demand)), res.transfers, res.makespan_steps)
    assert report.ok
    delivered = Counter((c[0], c[1]) for _t, _u, v, c in res.transfers if v == c[1])
    assert delivered == {(s, d): k for s, d, k in demand}


def test_netsim_traffic_and_broadcast_messages() -> None:
    topo = parse_topology("ring:6")
    initial, released = collective_messages(topo, "traffic", demand=[(0, 3, 2), (4, 1, 1)])
    assert sorted(initial) == [(0, 3, -1), (0, 3, -1), (4, 1, -1)] and released == {}
    initial, _ = collective_messages(topo, "broadcast", chunks=2, root=5)
    assert Counter(initial) == {(5, d, -1): 2 for d in range(5)}
    sim = simulate_collective(topo, "traffic", demand=[(0, 3, 2), (4, 1, 1)])
    assert sim.messages == 3 and sim.makespan_steps >= 3
    with pytest.raises(InputError, match="traffic matrix"):
        collective_messages(topo, "traffic")


def test_cli_traffic_file_out_and_dynamic(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "traffic.json"
    f.write_text(json.dumps({"traffic": [[0, 5, 2], [3, 7, 1], [6, 1, 2]]}))
    out = tmp_path / "sched.json"
    rc = main(["schedule", "--topology", "ring:8", "--collective", "traffic", "--traffic", str(f),
               "--out", str(out), "--dynamic", "--json", "--time-limit", "5"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verified"] is True and summary["traffic"]["chunks"] == 5
    assert summary["traffic"]["pairs"] == 3
    dyn = summary["dynamic"]
    for policy in ("ecmp", "adaptive"):
        assert dyn[policy]["messages"] == 5
        assert dyn[policy]["makespan_steps"] >= summary["lower_bound_steps"]
    assert dyn["scheduled"]["makespan_steps"] == summary["makespan_steps"]
    assert len(json.loads(out.read_text())["transfers"]) == summary["transfers"]


def test_cli_traffic_of_layout_text(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", "--topology", "torus:4x4", "--collective", "traffic", "--traffic-of",
               "tp=4,pp=4,mb=2", "--traffic-kind", "pipeline", "--time-limit", "5"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "12 chunks over 12 chip pairs" in text and "verified without Z3: True" in text


@pytest.mark.parametrize("extra", [
    ["--collective", "traffic"],
    ["--collective", "traffic", "--traffic-of", "tp=8,pp=4"],
    ["--collective", "traffic", "--traffic-of", "tp=2.5"],
    ["--collective", "traffic", "--traffic-of", "tp=4,bogus=1"],
    ["--collective", "traffic", "--traffic-of", "tp=1", "--traffic-kind", "tensor"],
    ["--collective", "allgather", "--traffic-of", "tp=4"],
    ["--collective", "traffic", "--traffic", "TRAFFIC", "--chunks", "2"],
    ["--collective", "traffic", "--traffic", "OUTSIDE"],
    ["--collective", "allgather", "--traffic-kind", "tensor"],
])
def test_cli_traffic_bad_input_exits_2(extra: list[str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"traffic": [[0, 1, 1]]}))
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"traffic": [[0, 16, 1]]}))
    extra = [str(good) if a == "TRAFFIC" else str(outside) if a == "OUTSIDE" else a for a in extra]
    out = tmp_path / "never.json"
    rc = main(["schedule", "--topology", "torus:4x4", *extra, "--out", str(out)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "expected" in err and "Traceback" not in err
    assert not out.exists()


def test_detours_spread_traffic_that_shortest_paths_pile_up() -> None:
    from accelkb.solver.schedule.bounds import all_distances
    from accelkb.solver.schedule.constructions.greedy import choose_paths

    topo = parse_topology("full:3")
    demand = [((0, 1, i), 0, 1) for i in range(4)]
    dist = all_distances(topo)
    assert choose_paths(topo, demand, dist) == [[0, 1]] * 4  # one link, four steps
    paths = choose_paths(topo, demand, dist, detour=True)
    assert [0, 2, 1] in paths and all(len(set(p)) == len(p) for p in paths)
    res = schedule(topo, "traffic", demand=[(0, 1, 4)], use_z3=False)
    assert res.verified and res.makespan_steps == 3 and "detour" in res.method


def test_netsim_ranks_are_endpoints_not_switches() -> None:
    initial, _ = collective_messages(parse_topology("switch:4"), "allgather")
    assert len(initial) == 4 * 3 and all(s < 4 and d < 4 for s, d, _ in initial)


def test_cli_dynamic_skips_oversized_simulations(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from accelkb.perf.netsim import dynamic as netsim
    monkeypatch.setattr(netsim, "MAX_MESSAGES", 10)
    rc = main(["schedule", "--topology", "ring:8", "--collective", "alltoall", "--dynamic"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "dynamic routing: skipped, 56 point-to-point messages exceed" in out


def test_cli_traffic_of_a_configure_result(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"status": "OPTIMAL", "best": {"layout": {"tp": 4, "pp": 2,
                                                                        "dp": 2}}}))
    rc = main(["schedule", "--topology", "torus:4x4", "--collective", "traffic", "--traffic-of",
               str(cfg), "--traffic-kind", "data", "--json", "--time-limit", "5"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["traffic"]["source"] == "tp=4,pp=2,dp=2" and summary["traffic"]["pairs"] == 16
    unsat = tmp_path / "unsat.json"
    unsat.write_text(json.dumps({"status": "UNSATISFIABLE", "best": None}))
    assert main(["schedule", "--topology", "torus:4x4", "--collective", "traffic",
                 "--traffic-of", str(unsat)]) == 2
    assert "got none (UNSATISFIABLE)" in capsys.readouterr().err


def test_path_choice_stops_at_the_deadline() -> None:
    """A first pass cut short leaves chunks without paths: Budget, never partial paths; a later
    pass cut short keeps the complete paths of the earlier one."""
    import time

    from accelkb.solver.schedule.bounds import all_distances
    from accelkb.solver.schedule.constructions.greedy import Budget, choose_paths

    topo = parse_topology("ring:4")
    demand = [((0, 2, i), 0, 2) for i in range(3)]
    dist = all_distances(topo)
    with pytest.raises(Budget):
        choose_paths(topo, demand, dist, deadline=time.monotonic() - 1)
    paths = choose_paths(topo, demand, dist)
    assert all(p[0] == 0 and p[-1] == 2 and len(p) == 3 for p in paths)
