"""Energy: power x time, with power between idle and full according to activity.

``P = chips x W x (idle + (1 - idle) x activity)`` where ``W`` is the system's wall power share
per chip (or the chip TDP) and ``idle`` the calibrated fraction drawn by a chip that is powered
and busy with memory traffic or waiting; ``activity`` is the chip's executed FLOP/s over its
achievable FLOP/s (``peak x matmul_efficiency``): tensor-unit work is what moves power from the
idle floor to full power.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> cal = load_calibration()
>>> average_power(400.0, 8, 1.0, cal)
3200.0
>>> average_power(None, 8, 1.0, cal) is None
True
"""

from __future__ import annotations

from .calibration import Calibration
from .specs import SystemSpec


def average_power(watts_per_chip: float | None, chips: int, activity: float,
                  cal: Calibration) -> float | None:
    """Average power of ``chips`` chips at ``activity`` (clamped to 0..1), W; None if unknown."""
    if watts_per_chip is None:
        return None
    a = min(1.0, max(0.0, activity))
    return chips * watts_per_chip * (cal.idle_power_fraction + (1 - cal.idle_power_fraction) * a)


def energy_j(power_w: float | None, seconds: float) -> float | None:
    """Energy of ``seconds`` at ``power_w``, J; None if the power is unknown."""
    return None if power_w is None else power_w * seconds


def run_power(system: SystemSpec, chips: int, activity: float,
              cal: Calibration) -> tuple[float | None, str | None]:
    """The run's average power and where it comes from: full power scaled by activity
    (:func:`average_power`) where a full-power figure exists; else a published average under
    load, as it is (it already holds the activity of the run it was measured on); else None.
    """
    if system.watts_per_chip is not None:
        return average_power(system.watts_per_chip, chips, activity, cal), system.watts_basis
    if system.average_watts_per_chip is not None:
        return chips * system.average_watts_per_chip, (
            f"{system.average_basis or 'a published average under load'} (an average under "
            "load, taken as the run's power: no maximum is published, so it is not scaled by "
            "this run's activity)")
    return None, None
