"""Full power from the knowledge base (issue 26): a maximum first, the legacy figure second, an
average never; the chip's TDP when a system has neither; the estimate says which it used."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf import estimate_inference
from accelkb.perf.from_kb import model_spec, system_spec

BOX_POWER = "ak:powerWatts 4000 ;"  # the x1-box line of good_minimal.ttl (8 chips of 350 W TDP)


def _kb(tmp_path: Path, data_dir: Path, box: str, extra: str = "") -> KnowledgeBase:
    text = (data_dir / "good_minimal.ttl").read_text(encoding="utf-8")
    assert text.count(BOX_POWER) == 1
    path = tmp_path / "power.ttl"
    path.write_text(text.replace(BOX_POWER, box) + extra, encoding="utf-8")
    return KnowledgeBase([path], bundled_data=False)


NOTED_LEGACY = """ak:powerWatts 3200 ; ak:maxPowerWatts 4000 ;
    ak:provenance [ ak:forProperty ak:powerWatts ; dcterms:source ex:spec-sheet ;
                    ak:confidence ak:Medium ; ak:note "Typical draw under load." ] ;"""


def test_max_power_is_taken_over_the_legacy_power(tmp_path: Path, data_dir: Path) -> None:
    spec = system_spec("acme-x1-box", kb=_kb(tmp_path, data_dir, NOTED_LEGACY))
    assert spec.power_watts_per_chip == 4000 / 8
    assert spec.watts_basis == "ak:maxPowerWatts of acme-x1-box: 4,000 W / 8 chips"


def test_legacy_power_alone_is_still_full_power(tmp_path: Path, data_dir: Path) -> None:
    spec = system_spec("acme-x1-box", kb=_kb(tmp_path, data_dir, BOX_POWER))
    assert spec.power_watts_per_chip == 4000 / 8
    assert spec.watts_basis is not None and spec.watts_basis.startswith("ak:powerWatts of")


def test_an_average_is_never_full_power(tmp_path: Path, data_dir: Path) -> None:
    kb = _kb(tmp_path, data_dir, "ak:averagePowerWatts 2000 ; ak:idlePowerWatts 900 ;")
    spec = system_spec("acme-x1-box", kb=kb)
    assert spec.power_watts_per_chip is None
    assert spec.watts_per_chip == 350  # the chip's ak:tdpWatts, not 2000 / 8
    assert spec.watts_basis == "ak:tdpWatts of acme-x1 (no system full-power figure)"
    est = estimate_inference(model_spec("tiny-gpt", kb=kb), spec, "tp=8,batch=1,in=64,out=16")
    assert est.power_w is not None and est.power_w <= 8 * 350
    assert est.power_basis == spec.watts_basis


def test_an_outer_average_does_not_hide_an_inner_maximum(tmp_path: Path,
                                                           data_dir: Path) -> None:
    pod = 'ak:shortName "acme-x1-pod" ;'
    kb_text = (data_dir / "good_minimal.ttl").read_text(encoding="utf-8")
    assert kb_text.count(pod) == 1
    path = tmp_path / "pod.ttl"
    path.write_text(kb_text.replace(BOX_POWER, "ak:maxPowerWatts 4000 ;")
                    .replace(pod, pod + " ak:averagePowerWatts 12000 ;"), encoding="utf-8")
    spec = system_spec("acme-x1-pod", kb=KnowledgeBase([path], bundled_data=False))
    assert spec.power_watts_per_chip == 4000 / 8
    assert spec.watts_basis == "ak:maxPowerWatts of acme-x1-box: 4,000 W / 8 chips"


@pytest.mark.parametrize(("system", "watts", "basis"), [
    ("ipu-pod64", 24000 / 64, "ak:maxPowerWatts of ipu-pod64"),   # 16 x the M2000's 1.5 kW peak
    ("ipu-m2000", 1500 / 4, "ak:maxPowerWatts of ipu-m2000"),
    ("dgx-a100", 6500 / 8, "ak:maxPowerWatts of dgx-a100"),       # '6.5 kW max'
    ("dgx-h100", 10200 / 8, "ak:maxPowerWatts of dgx-h100"),
])
def test_bundled_maxima_are_full_power(kb: KnowledgeBase, system: str, watts: float,
                                       basis: str) -> None:
    spec = system_spec(system, kb=kb)
    assert spec.watts_per_chip == pytest.approx(watts)
    assert spec.watts_basis is not None and spec.watts_basis.startswith(basis)


@pytest.mark.parametrize("system", ["bow-2000", "bow-pod64", "sambarack-sn40l-16"])
def test_bundled_averages_give_no_full_power(kb: KnowledgeBase, system: str) -> None:
    # Bow-2000's 1.25 kW is an average, SambaRack's '10 kWh' an average read from an energy unit;
    # neither chip has a TDP, so no energy rather than an average passed off as the maximum.
    spec = system_spec(system, kb=kb)
    assert spec.watts_per_chip is None and spec.watts_basis is None


def test_an_average_under_load_is_the_runs_power_when_no_maximum_is_published() -> None:
    """SambaRack and the Bow Pods publish only an average: it is used as the run's power, as it
    is (not scaled by activity: it already holds the activity it was measured at), and said so."""
    from accelkb.perf import estimate_inference

    est = estimate_inference("llama2-70b", "sambarack-sn40l-16", "tp=16")
    assert est.power_w == 10000.0
    assert est.power_basis and est.power_basis.startswith("ak:averagePowerWatts of "
                                                          "sambarack-sn40l-16")
    assert "not scaled by this run's activity" in est.power_basis
    dgx = estimate_inference("llama2-70b", "dgx-h100", "tp=8")
    assert dgx.power_basis and dgx.power_basis.startswith("ak:maxPowerWatts of dgx-h100")
    assert dgx.power_w < 10200  # a maximum is scaled down by the activity of decode
