"""The sweep specification: a YAML or TOML file, validated by a pydantic model (its JSON schema
is ``accelkb sweep --schema``), then checked against the knowledge base before any work starts.

Examples
--------
>>> s = SweepSpec(models=["llama2-7b"], systems=["dgx-h100"], phases=["inference"])
>>> s.goals, s.precisions, s.chips
(['time'], ['best'], ['all'])
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from accelkb.errors import InputError, UnknownNameError
from accelkb.sweep import whatif

Goal = Literal["time", "throughput", "latency", "cost", "energy"]
Phase = Literal["training", "inference"]


def _all() -> list[int | Literal["all"]]:
    return ["all"]


def _inference() -> list[Phase]:
    return ["inference"]


def _time() -> list[Goal]:
    return ["time"]


def _no_target() -> list[float | None]:
    return [None]
PRECISIONS = ("best", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")


class SweepSpec(BaseModel):
    """A grid of models x systems x chip counts x phases x precisions x goals x latency
    targets x hardware what-ifs; every point is solved like ``accelkb configure``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="", description="a name for the sweep")
    models: list[str] = Field(min_length=1, description="model short names or JSON model files")
    systems: list[str] = Field(min_length=1, description="system short names (from the "
                               "knowledge base and the data files)")
    data: list[str] = Field(default_factory=list, description="Turtle files added to the "
                            "knowledge base, as --data (relative to the spec file)")
    chips: list[int | Literal["all"]] = Field(default_factory=_all, min_length=1,
                                              description="chip counts; 'all' is the system's")
    phases: list[Phase] = Field(
        default_factory=_inference, min_length=1, description="phases")
    precisions: list[str] = Field(default_factory=lambda: ["best"], min_length=1,
                                  description="'best' (the solver's choice among the chip's "
                                  "precisions) or one of fp32, tf32, bf16, fp16, fp8, int8")
    goals: list[Goal] = Field(default_factory=_time, min_length=1,
                              description="what the best layout minimises or maximises")
    latency_targets: list[float | None] = Field(
        default_factory=_no_target, min_length=1, description="inference: the least "
        "tokens/s per user a layout must keep (null: none)")
    global_batch: int = Field(default=512, ge=1, description="training: sequences per step")
    prompt_len: int = Field(default=512, ge=1, description="inference: prompt tokens")
    output_len: int = Field(default=512, ge=1, description="inference: generated tokens")
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False,
                             description="solver time limit per model x system x chips x "
                             "phase x what-if, s")
    whatifs: dict[str, list[str | float]] = Field(
        default_factory=dict, description="hardware what-ifs: CHIP.PART.FIELD -> values, each "
        "tried alone on the systems with that chip, e.g. {'sn40l.sram.capacity': ['1GiB', 'x2']}")

    def digest(self) -> str:
        """A hash of the spec's content (16 hex digits), written in every row."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _where(exc: Exception) -> str:
    """A parser's error in one line, with its line and column where the parser gives them
    (PyYAML's first line, 'while parsing a flow sequence', said neither what nor where)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"{what} at line {mark.line + 1}, column {mark.column + 1}"
    return str(exc).splitlines()[0]


def read_spec(path: str | Path) -> SweepSpec:
    """Parse and validate a spec file (.yaml, .yml, .toml or .json).

    Raises
    ------
    InputError
        An unreadable or malformed file, or fields that do not validate (all of them listed).
    """
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read sweep spec {p}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"sweep spec {p}: expected UTF-8 text, got byte "
                         f"0x{exc.object[exc.start]:02x} at offset {exc.start}") from None
    data: Any
    try:
        if p.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif p.suffix == ".toml":
            data = tomllib.loads(text)
        elif p.suffix == ".json":
            data = json.loads(text)
        else:
            raise InputError(f"expected a sweep spec ending in .yaml, .yml, .toml or .json, "
                             f"got {p.name}")
    except InputError:
        raise
    except Exception as exc:  # yaml.YAMLError, tomllib.TOMLDecodeError, JSONDecodeError
        raise InputError(f"sweep spec {p}: not valid {p.suffix[1:].upper()}: "
                         f"{_where(exc)}") from None
    if not isinstance(data, dict):
        raise InputError(f"sweep spec {p}: expected a mapping of fields, got "
                         f"{type(data).__name__}")
    try:
        spec = SweepSpec.model_validate(data)
    except pydantic.ValidationError as exc:
        lines = [f"  - {'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}"
                 for e in exc.errors()]
        raise InputError(f"{len(lines)} problem(s) in sweep spec {p}:\n" + "\n".join(lines)
                         ) from None
    base = p.resolve().parent
    return spec.model_copy(update={"data": [str((base / d).resolve()) if not Path(d).is_absolute()
                                            else d for d in spec.data]})


def problems(spec: SweepSpec, kb: Any) -> list[str]:
    """Every way the spec does not fit the knowledge base: unknown names, what-ifs on facts
    that do not exist, impossible values (the empty grid is :func:`accelkb.sweep.run.plan`'s
    check)."""
    from accelkb.perf.api import resolve_model
    from accelkb.perf.from_kb import system_spec

    out: list[str] = []
    for m in spec.models:
        try:
            resolve_model(m) if m.endswith(".json") else kb.resolve("model", m)
        except (UnknownNameError, InputError) as exc:
            out.append(f"models: {str(exc).splitlines()[0]}")
    systems = {}
    for s in spec.systems:
        try:
            systems[s] = system_spec(s, kb=kb)
        except (UnknownNameError, InputError) as exc:
            out.append(f"systems: {str(exc).splitlines()[0]}")
    for c in spec.chips:
        if isinstance(c, int) and c < 1:
            out.append(f"chips: expected a positive count or 'all', got {c}")
    for p in spec.precisions:
        if p not in PRECISIONS:
            out.append(f"precisions: expected one of {', '.join(PRECISIONS)}, got '{p}'")
    for t in spec.latency_targets:
        if t is not None and not t > 0:
            out.append(f"latency_targets: expected tokens/s per user > 0 or null, got {t}")
    for key, values in spec.whatifs.items():
        try:
            chip, part, field = whatif.parse_key(key)
        except InputError as exc:
            out.append(f"whatifs: {exc}")
            continue
        hosts = [sp for sp in systems.values() if sp.chip.name.lower() == chip]
        if not hosts:
            names = sorted({sp.chip.name for sp in systems.values()})
            out.append(f"whatifs: '{key}' names chip '{chip}', which none of the spec's systems "
                       f"uses (their chips: {', '.join(names) or 'none'})")
            continue
        if not values:
            out.append(f"whatifs: '{key}' has no values")
        for v in values:
            try:
                whatif.check(key, v, hosts[0])
            except InputError as exc:
                out.append(f"whatifs: {exc}")
    return out
