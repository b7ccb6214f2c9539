"""Pipeline partition: Z3 Optimize equals the exact dynamic programme; memory per stage; UNSAT."""

from __future__ import annotations

import pytest

from accelkb.ontology.kb import KnowledgeBase
from accelkb.solver.config.model import Status
from accelkb.solver.config.partition import dp_minmax, partition_pipeline, units


def test_dp_minmax_small_cases() -> None:
    assert dp_minmax([3, 1, 1, 3], [0] * 4, [0] * 4, [0] * 4, 2, 10) == (4, [0, 2, 4])
    # memory forces an uneven split: unit 0 cannot share its stage
    assert dp_minmax([1, 1, 1, 1], [6, 3, 3, 2], [0] * 4, [0] * 4, 2, 8) == (3, [0, 1, 4])
    assert dp_minmax([1, 1], [6, 6], [0, 0], [0, 0], 1, 9) is None


def test_ipu_partition_optimal_and_fits(kb: KnowledgeBase) -> None:
    res = partition_pipeline("gpt3-760m", "ipu-pod16", 8, recompute="full", seq_len=1024,
                             kb=kb)
    assert res.status == Status.OPTIMAL
    assert res.max_stage_time_s == pytest.approx(res.exact_max_stage_time_s, rel=1e-12)
    assert len(res.stages) == 8 and res.stages[0].first == "embedding"
    assert res.stages[-1].last == "head"
    assert sum(s.units for s in res.stages) == 24 + 2
    assert all(s.memory_bytes <= res.capacity_bytes for s in res.stages)
    u, _ = units("gpt3-760m", "ipu-pod16", 1, "full", seq_len=1024)
    assert max(s.time_s for s in res.stages) >= sum(u.time_ns) / 8 / 1e9


def test_partition_unsat_names_the_constraint(kb: KnowledgeBase) -> None:
    res = partition_pipeline("gpt3-2.7b", "ipu-pod16", 4, recompute="full", seq_len=512, kb=kb)
    assert res.status == Status.UNSATISFIABLE
    assert res.explanation and "constraint-stage-fits-memory" in res.explanation[0]
    assert "each stage has 0.900 GB" in res.explanation[0]
