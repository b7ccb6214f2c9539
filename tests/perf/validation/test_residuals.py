"""The intervals' basis: the stored residuals are what the validation gives, and the interval
rules do what the module says (issue 25, part 3)."""

from __future__ import annotations

import json
import math

import pytest

from accelkb.cli import main
from accelkb.perf.calibration import load_calibration
from accelkb.perf.from_kb import system_spec
from accelkb.perf.uncertainty import interval, residual_table
from accelkb.perf.validation import residuals
from accelkb.perf.validation.suite import run_all


def test_the_stored_residuals_are_those_of_the_current_model() -> None:
    """perf/data/residuals.json must be rewritten (bench/perf_validation.py --residuals) when
    the model or the data change: an interval resting on stale residuals would be a fiction."""
    fresh = residuals.summary(residuals.residuals(run_all(system_spec, load_calibration())))
    stored = residual_table()
    assert stored["groups"] == fresh["groups"]
    assert stored["pooled_abs_q95"] == fresh["pooled_abs_q95"]


TABLE = {"pooled_abs_q95": 0.25, "groups": {
    "many": {"training": {"rows": 40, "kind": "measured", "files": ["a.csv"], "min": -0.5,
                          "max": 0.9, "q05": -0.1, "q95": 0.3, "median_abs": 0.1}},
    "few": {"decode": {"rows": 4, "kind": "claims", "files": ["c.csv"], "min": 0.1,
                       "max": 0.2, "q05": 0.1, "q95": 0.2, "median_abs": 0.15}},
    "inf": {"inference": {"rows": 12, "kind": "measured", "files": ["b.csv"], "min": -1.0,
                          "max": 1.0, "q05": -0.2, "q95": 0.4, "median_abs": 0.2}}}}


def test_many_rows_give_their_5th_to_95th_percentile() -> None:
    iv = interval(10.0, "time", "many", "training", TABLE)
    assert (round(iv.low, 4), round(iv.high, 4)) == (round(10 * math.exp(-0.1), 4),
                                                      round(10 * math.exp(0.3), 4))
    rate = interval(10.0, "rate", "many", "training", TABLE)  # a rate moves the other way
    assert math.isclose(rate.low, 10 * math.exp(-0.3)) and math.isclose(rate.high,
                                                                         10 * math.exp(0.1))
    assert "40 measured rows of many training (a.csv)" in iv.basis


def test_few_rows_widen_their_extremes_and_always_hold_the_estimate() -> None:
    iv = interval(10.0, "rate", "few", "decode", TABLE)
    # residuals 0.1-0.2 (measured times longer than predicted): widened by 20 % each way
    assert math.isclose(iv.low, 10 * math.exp(-0.2) / 1.2)
    assert math.isclose(iv.high, 10 * math.exp(-0.1) * 1.2)
    narrow = dict(TABLE, groups={"few": {"decode": dict(TABLE["groups"]["few"]["decode"],
                                                        min=0.5, max=0.6)}})
    assert math.isclose(interval(10.0, "rate", "few", "decode", narrow).high, 10.0)  # held
    assert "only 4 claims rows" in iv.basis and "vendor claims, not measurements" in iv.basis


def test_measured_rows_alone_are_the_basis_where_there_are_three_or_more() -> None:
    """A vendor claim is not a measurement: Groq's decode interval rests on its five measured
    rows (LLMPerf, Artificial Analysis), not on the 100 tokens/s demo of August 2023."""
    def row(kind: str, r: float) -> residuals.Residual:
        return residuals.Residual("v", "decode", kind, r, "f.csv", 0.0)

    table = residuals.summary([row("measured", x) for x in (-0.1, 0.0, 0.1)]
                              + [row("claims", 1.0)])
    group = table["groups"]["v"]["decode"]
    assert (group["rows"], group["kind"], group["claims_left_out"]) == (3, "measured", 1)
    assert group["max"] == 0.1
    few = residuals.summary([row("measured", 0.0), row("measured", 0.1), row("claims", 1.0)])
    assert few["groups"]["v"]["decode"]["kind"] == "measured+claims"  # two measured: all kept
    groq = interval(100.0, "rate", "groq", "decode")
    assert "measured rows of groq decode" in groq.basis and "claims left out" in groq.basis


def test_no_rows_fall_back_to_twice_the_pooled_spread_and_say_so() -> None:
    iv = interval(10.0, "time", "nobody", "training", TABLE)
    assert math.isclose(iv.low, 10 * math.exp(-0.5)) and math.isclose(iv.high,
                                                                       10 * math.exp(0.5))
    assert iv.basis.startswith("no validation rows for nobody training")
    # prefill and decode borrow the vendor's whole-request rows before falling back
    assert "inf inference" in interval(1.0, "time", "inf", "prefill", TABLE).basis


@pytest.mark.parametrize(("argv", "figure"), [
    (["training", "--model", "gpt3-13b", "--system", "dgx-a100", "--parallel",
      "tp=8,mb=1,gbs=8"], "step_time_s"),
    (["inference", "--model", "llama2-70b", "--system", "groq-576", "--parallel",
      "tp=8,pp=72,batch=1,in=512,out=512,precision=int8"], "tokens_per_s_per_user"),
])
def test_estimate_json_gives_each_headline_figure_a_range_and_its_dependencies(
        argv: list[str], figure: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", *argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ranges = out["uncertainty"]
    assert figure in ranges
    for name, rows in ranges.items():
        iv = rows["interval"]
        assert iv["low"] <= out[name] <= iv["high"] and iv["basis"], name
        assert 1 <= len(rows["sensitivity"]) <= 3
        for s in rows["sensitivity"]:
            assert s["at_minus_50"] != s["at_plus_50"], (name, s)
    if argv[0] == "inference":  # issue 25: Groq's figure rests on Groq's own constant
        names = [s["name"] for s in ranges[figure]["sensitivity"]]
        own = {"calibration deterministic_feed_efficiency", "calibration deterministic_op_latency_s"}
        assert names[0] in own and own <= set(names)
        assert "collective_step_latency_s" not in out["foreign_constants"]
        assert not {"deterministic_feed_efficiency", "deterministic_op_latency_s"} & set(
            out["foreign_constants"])
    else:  # NVIDIA's own constants on an NVIDIA chip
        assert out["foreign_constants"] == {}


def test_held_out_coverage_leaves_each_row_out_of_its_own_interval() -> None:
    from accelkb.perf.validation.residuals import loo_inside

    # an outlier is inside the in-sample range it widens, but not inside the others' range
    assert loo_inside([0.0, 0.01, -0.01, 0.02, 0.5], 1.0) == [True, True, True, True, False]
    # with fewer than 3 other rows the pooled spread stands in
    assert loo_inside([0.1, 1.5], 0.5) == [True, False]
    # the range always holds the estimate itself (0)
    assert loo_inside([0.3] * 12, 1.0) == [True] * 12
