"""tokens/s per W of a comparison on one boundary. DGX H100's full power is the server's
10,200 W maximum input, an MI300X platform's only its GPUs' 750 W TDP: compared as they were,
the MI300X looked 1.9x more efficient where on the chips' TDP both are within 5 %."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from accelkb.advise.advice import Comparison, Estimate
from accelkb.advise.parts import one_power_boundary
from accelkb.perf.from_kb import system_spec


def _row(name: str, tokens: float, watts: float) -> Comparison:
    est = Estimate(configuration={}, chips=8, time_s=1.0, tokens_per_s=tokens, mfu=0.1,
                   memory_per_chip_bytes={}, breakdown_s={}, power_w=watts)
    return Comparison(system=name, chips=8, estimate=est, tokens_per_s_per_watt=tokens / watts)


def test_mixed_scopes_go_on_the_chips_tdp() -> None:
    h100, mi300x = system_spec("dgx-h100"), system_spec("mi300x-platform")
    assert h100.power_watts_per_chip == pytest.approx(1275.0) and mi300x.power_watts_per_chip is None
    own = SimpleNamespace(tokens_per_s=108.0, power_w=8 * 750.0 * 0.6)
    rows, own_pw, basis = one_power_boundary(mi300x, own, [(h100, _row("dgx-h100", 95.0,
                                                                       8 * 1275.0 * 0.6))])
    assert rows[0].tokens_per_s_per_watt == pytest.approx(95.0 / (8 * 700.0 * 0.6))
    assert own_pw == pytest.approx(108.0 / (8 * 750.0 * 0.6))
    assert "differ in scope" in basis and "dgx-h100: the whole system's maximum" in basis


def test_one_scope_keeps_each_systems_own_figure() -> None:
    h100, a100 = system_spec("dgx-h100"), system_spec("dgx-a100")
    row = _row("dgx-a100", 50.0, 4000.0)
    rows, own_pw, basis = one_power_boundary(h100, SimpleNamespace(tokens_per_s=95.0,
                                                                   power_w=6000.0), [(a100, row)])
    assert basis == "" and rows == [row] and own_pw == pytest.approx(95.0 / 6000.0)


def test_without_a_common_boundary_each_keeps_its_figure_and_says_so() -> None:
    ipu, mi300x = system_spec("ipu-pod16"), system_spec("mi300x-platform")
    assert ipu.chip.tdp_watts is None  # Graphcore publishes the M2000's power, not the IPU's
    row = _row("ipu-pod16", 100.0, 5000.0)
    rows, own_pw, basis = one_power_boundary(mi300x, SimpleNamespace(tokens_per_s=100.0,
                                                                     power_w=4000.0), [(ipu, row)])
    assert rows == [row] and own_pw == pytest.approx(100.0 / 4000.0)
    assert "not like for like" in basis and "ipu-pod16: the whole system's maximum" in basis
