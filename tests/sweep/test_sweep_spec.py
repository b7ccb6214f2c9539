"""Sweep specs: parsed from YAML/TOML, validated whole, every problem listed before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf.from_kb import system_spec
from accelkb.sweep import whatif
from accelkb.sweep.grid import groups, points
from accelkb.sweep.run import plan
from accelkb.sweep.spec import SweepSpec, read_spec


def test_yaml_and_toml_give_the_same_spec(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("models: [llama2-7b]\nsystems: [dgx-h100]\n"
                                     "precisions: [bf16, int8]\nwhatifs:\n"
                                     "  h100-sxm.hbm.bandwidth: [x2, 4TB/s]\n")
    (tmp_path / "s.toml").write_text('models = ["llama2-7b"]\nsystems = ["dgx-h100"]\n'
                                     'precisions = ["bf16", "int8"]\n[whatifs]\n'
                                     '"h100-sxm.hbm.bandwidth" = ["x2", "4TB/s"]\n')
    a, b = read_spec(tmp_path / "s.yaml"), read_spec(tmp_path / "s.toml")
    assert a == b and a.digest() == b.digest()
    assert SweepSpec.model_json_schema()["properties"]["whatifs"]


def test_every_problem_is_listed_before_any_work(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("models: [llama2-7b, no-such-model]\nsystems: [dgx-h100, no-such-system]\n"
                    "precisions: [bf16, fp5]\nlatency_targets: [-3]\nchips: [0]\n"
                    "whatifs:\n  h100-sxm.sram.capacity: [x2]\n  h100-sxm.hbm.bandwidth: [fast]\n"
                    "  nochip.hbm.capacity: [1GiB]\n")
    out = tmp_path / "r.csv"
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    for words in ("unknown model 'no-such-model'", "unknown system 'no-such-system'",
                  "fp5", "latency_targets", "chips: expected a positive count",
                  "h100-sxm has no sram tier", "got 'fast'", "names chip 'nochip'"):
        assert words in err, words
    assert "8 problem(s)" in err
    assert not out.exists() and not list(tmp_path.glob("r.csv*"))


def test_malformed_files_and_fields_exit_2(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("models: [unclosed\n")
    assert main(["sweep", str(bad), "--out", str(tmp_path / "r.csv")]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    bad.write_text("models: [llama2-7b]\nsystems: [dgx-h100]\ngoals: [fastest]\nextra: 1\n")
    assert main(["sweep", str(bad), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "2 problem(s)" in err and "goals.0" in err and "extra" in err
    assert main(["sweep", str(bad), "--out", str(tmp_path / "r.xlsx")]) == 2
    assert "expected --out ending in .csv or .parquet" in capsys.readouterr().err


def test_an_empty_grid_is_refused() -> None:
    spec = SweepSpec(models=["llama2-7b"], systems=["dgx-h100"], phases=["training"],
                     goals=["latency"])
    with pytest.raises(InputError, match="the grid is empty"):
        plan(spec)


def test_grid_shares_one_enumeration_per_model_system_chips_phase_whatif() -> None:
    spec = SweepSpec(models=["llama2-7b"], systems=["dgx-h100", "sambarack-sn40l-16"],
                     chips=[4, 8], precisions=["bf16", "int8"], goals=["time", "cost"],
                     latency_targets=[None, 30], whatifs={"sn40l.ddr.bandwidth": ["x2"]})
    systems = {s: system_spec(s) for s in spec.systems}
    pts = points(spec, systems)
    # 2 chip counts x 2 precisions x 2 goals x 2 targets = 16 per system variant; SN40L has two
    assert len(pts) == 16 * 3 and len({p.ident() for p in pts}) == len(pts)
    assert len(groups(pts)) == 2 * 3
    assert all(len(g) == 8 for g in groups(pts))


def test_whatif_values_and_their_application() -> None:
    h100 = system_spec("dgx-h100")
    hbm = h100.chip.tier("hbm")
    assert hbm is not None
    more = whatif.apply(h100, "h100-sxm.hbm.capacity", "x2")
    assert more.chip.tier("hbm").capacity_bytes == 2 * hbm.capacity_bytes  # type: ignore[union-attr]
    exact = whatif.apply(h100, "h100-sxm.hbm.bandwidth", "4TB/s")
    assert exact.chip.tier("hbm").bandwidth_bytes_per_s == 4e12  # type: ignore[union-attr]
    fast = whatif.apply(h100, "h100-sxm.c2c.latency", "x0.5")
    assert [lv.latency_s for lv in fast.levels] == [lv.latency_s / 2 for lv in h100.levels]
    assert whatif.parse_value("1GiB", "capacity") == ("abs", 2.0**30)
    for bad, field in (("x0", "capacity"), ("-1GB", "capacity"), ("3 parsecs", "latency"),
                       ("1GB", "latency")):
        with pytest.raises(InputError):
            whatif.parse_value(bad, field)
