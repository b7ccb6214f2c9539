"""Hardware what-ifs of a sweep: named fact overrides applied to a system's perf spec.

A what-if names a chip fact as ``CHIP.PART.FIELD`` and gives its value, absolute with a unit
or as a multiple of the published value:

- ``CHIP.TIER.capacity`` / ``CHIP.TIER.bandwidth``: a memory tier (sram, hbm, ddr, streaming),
  e.g. ``sn40l.sram.capacity: 1GiB`` or ``sn40l.ddr.bandwidth: x2``;
- ``CHIP.link.bandwidth`` / ``CHIP.link.latency`` (``c2c`` and ``network`` are the same
  part): every network level's per-chip bandwidth or per-hop latency,
  e.g. ``groqchip.c2c.bandwidth: x2``;
- ``CHIP.peak.PRECISION``: the dense peak at a precision, e.g. ``sn40l.peak.fp8: 1.3PFLOPS``.

Units: bytes in B, kB/KB, MB, GB, TB (decimal) or KiB, MiB, GiB, TiB (binary); bandwidth in
those per second (``2TB/s``); latency in s, ms, us, ns; peaks in FLOPS, TFLOPS, PFLOPS.

Examples
--------
>>> parse_value("520MiB", "capacity"), parse_value("x2", "bandwidth")
(('abs', 545259520.0), ('mul', 2.0))
>>> parse_key("groqchip.c2c.bandwidth")
('groqchip', 'link', 'bandwidth')
"""

from __future__ import annotations

import re

from accelkb.errors import InputError
from accelkb.perf import SystemSpec

TIERS = ("sram", "hbm", "ddr", "streaming")
_LINK = {"link": "link", "c2c": "link", "network": "link"}
_BYTES = {"b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2.0**10,
          "mib": 2.0**20, "gib": 2.0**30, "tib": 2.0**40}
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_FLOPS = {"flops": 1.0, "gflops": 1e9, "tflops": 1e12, "pflops": 1e15}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")


def parse_key(key: str) -> tuple[str, str, str]:
    """(chip, part, field) of a what-if key; part is a tier kind, 'link' or 'peak'.

    Raises
    ------
    InputError
        For a key that is not CHIP.PART.FIELD with a known part and field.
    """
    bits = key.strip().split(".")
    if len(bits) != 3 or not all(bits):
        raise InputError(f"what-if '{key}': expected CHIP.PART.FIELD, e.g. sn40l.sram.capacity")
    chip, part, field = (b.lower() for b in bits)
    if part in TIERS:
        if field not in ("capacity", "bandwidth"):
            raise InputError(f"what-if '{key}': expected capacity or bandwidth of the {part} "
                             f"tier, got '{field}'")
        return chip, part, field
    if part in _LINK:
        if field not in ("bandwidth", "latency"):
            raise InputError(f"what-if '{key}': expected bandwidth or latency of the links, "
                             f"got '{field}'")
        return chip, "link", field
    if part == "peak":
        return chip, "peak", field
    raise InputError(f"what-if '{key}': expected a part among {', '.join(TIERS)}, link (c2c, "
                     f"network) or peak, got '{part}'")


def parse_value(text: object, field: str) -> tuple[str, float]:
    """('mul', factor) for ``xN``, or ('abs', value in base units) for a number with a unit.

    Raises
    ------
    InputError
        For a value that is not a positive number with a unit this field takes.
    """
    s = str(text).strip()
    if s[:1] in ("x", "*", "×"):
        try:
            factor = float(s[1:])
        except ValueError:
            raise InputError(f"expected a multiple such as x2, got '{s}'") from None
        if not factor > 0 or factor == float("inf"):
            raise InputError(f"expected a positive multiple, got '{s}'")
        return "mul", factor
    m = _NUMBER.match(s)
    if m is None:
        raise InputError(f"expected a number with a unit (e.g. 1GiB, 2TB/s, 0.5us) or a "
                         f"multiple (x2), got '{s}'")
    value, unit = float(m.group(1)), m.group(2).lower()
    if field == "capacity":
        table, what = _BYTES, "bytes (B, MB, GB, MiB, GiB, ...)"
    elif field == "bandwidth":
        table = {k + "/s": v for k, v in _BYTES.items()}
        what = "bytes per second (GB/s, TB/s, ...)"
    elif field == "latency":
        table, what = _SECONDS, "seconds (s, ms, us, ns)"
    else:
        table, what = _FLOPS, "FLOP/s (TFLOPS, PFLOPS)"
    if unit not in table:
        raise InputError(f"expected a value in {what}, got '{s}'")
    if value <= 0:
        raise InputError(f"expected a positive value, got '{s}'")
    return "abs", value * table[unit]


def applies(key: str, system: SystemSpec) -> bool:
    """Whether the what-if names this system's chip."""
    return parse_key(key)[0] == system.chip.name.lower()


def check(key: str, value: object, system: SystemSpec) -> None:
    """Refuse a what-if this system's chip cannot take (no such tier or precision)."""
    chip, part, field = parse_key(key)
    parse_value(value, field if part != "peak" else "peak")
    if part in TIERS and system.chip.tier(part) is None:
        kinds = ", ".join(t.kind for t in system.chip.memory_tiers)
        raise InputError(f"what-if '{key}': {system.chip.name} has no {part} tier in the "
                         f"performance model (it has {kinds}; a tier the knowledge base stores "
                         "without both a capacity and a bandwidth is left out of the model)")
    if part == "peak" and field not in system.chip.peak_flops and parse_value(
            value, "peak")[0] == "mul":
        raise InputError(f"what-if '{key}': {system.chip.name} has no {field} peak to multiply; "
                         "give an absolute value (e.g. 1PFLOPS)")


def apply(system: SystemSpec, key: str, value: object) -> SystemSpec:
    """A copy of ``system`` with the what-if applied.

    Raises
    ------
    InputError
        If the what-if does not fit the chip (see :func:`check`).
    """
    check(key, value, system)
    _, part, field = parse_key(key)
    how, number = parse_value(value, field if part != "peak" else "peak")

    def new(old: float) -> float:
        return old * number if how == "mul" else number

    chip = system.chip
    if part in TIERS:
        name = "capacity_bytes" if field == "capacity" else "bandwidth_bytes_per_s"
        tiers = [t.model_copy(update={name: new(getattr(t, name))}) if t.kind == part else t
                 for t in chip.memory_tiers]
        return system.model_copy(update={"chip": chip.model_copy(update={"memory_tiers": tiers})})
    if part == "link":
        name = "bandwidth_bytes_per_s_per_chip" if field == "bandwidth" else "latency_s"
        levels = [lv.model_copy(update={name: new(getattr(lv, name))}) for lv in system.levels]
        return system.model_copy(update={"levels": levels})
    peaks = dict(chip.peak_flops)
    peaks[field] = new(peaks.get(field, 0.0))
    return system.model_copy(update={"chip": chip.model_copy(update={"peak_flops": peaks})})
