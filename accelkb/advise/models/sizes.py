"""What limits training on one system as the model grows: a sweep over model sizes.

For each model the baseline layout search runs as for the report's own workload (the same
global batch, the best fitting layout), then every hardware what-if of
:data:`accelkb.advise.parts.WHAT_IFS` is re-estimated on that layout, and so is every software
lever given (the knowledge base's catalogued layout changes, one at a time). A row gives the
step time, tokens/s and tokens per joule, the largest share of the step, and the hardware and
software levers that buy most at that size; a size that does not fit says why, with the
numbers of the failed check.

Examples
--------
>>> from accelkb.perf.from_kb import system_spec
>>> rows = size_sweep(["gpt3-1.3b"], system_spec("dgx-a100"), global_batch=64)
>>> rows[0].model, rows[0].fits, rows[0].largest_share in ("compute", "recompute", "bubble",
...     "tensor_parallel_comm", "pipeline_p2p", "data_parallel_comm", "optimizer", "offload")
('gpt3-1.3b', True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from accelkb.advise import parts
from accelkb.advise.advice import SizePoint
from accelkb.advise.plan.commands import parallel_text
from accelkb.errors import InputError
from accelkb.perf import SystemSpec, TrainingConfig
from accelkb.perf.from_kb import model_spec
from accelkb.perf.shapes import total_params


class SoftwareLever(NamedTuple):
    """A catalogued software change: its words and the layout fields it sets."""

    label: str
    change: dict[str, Any]


def best_software(model: Any, system: SystemSpec, cfg: TrainingConfig, step_s: float,
                  levers: Sequence[SoftwareLever]) -> tuple[SoftwareLever, float] | None:
    """The lever whose one change to ``cfg`` shortens the step most, with its speed-up; None
    when no lever applies, changes anything, fits or gains more than 0.5 %."""
    best: tuple[SoftwareLever, float] | None = None
    current = cfg.model_dump()
    for lever in levers:
        if all(current.get(k) == v for k, v in lever.change.items()):
            continue
        try:
            new = TrainingConfig.model_validate({**current, **lever.change})
            after = parts.estimate(model, system, new)
        except (InputError, ValueError):
            continue
        gain = step_s / parts.key_time(after)
        if gain > 1.005 and (best is None or gain > best[1]):
            best = (lever, gain)
    return best


def size_sweep(models: Sequence[str], system: SystemSpec, global_batch: int,
               precision: str | None = None,
               software: Sequence[SoftwareLever] = (),
               seq_len: int | None = None) -> list[SizePoint]:
    """One :class:`SizePoint` per model name (knowledge-base short names), smallest first,
    each at ``seq_len`` tokens per sequence where given (the report's workload's), else at
    its own.

    Raises
    ------
    UnknownNameError
        A model name the knowledge base does not know.
    """
    specs = sorted((model_spec(m) if seq_len is None else
                    model_spec(m).model_copy(update={"seq_len": seq_len}) for m in models),
                   key=total_params)
    out = []
    for model in specs:
        params = float(total_params(model))
        try:
            cfg, base, _ = parts.baseline(model, system, "training", global_batch, 0, 0,
                                          precision, "time")
        except InputError as exc:
            out.append(SizePoint(model=model.name, parameters=params, fits=False,
                                 note=str(exc).splitlines()[0][:240]))
            continue
        est = parts.as_estimate(base)
        whatifs = [w for w in parts.what_ifs(model, system, cfg, base) if w.speedup is not None]
        top = whatifs[0] if whatifs else None
        soft = best_software(model, system, cfg, est.time_s, software) \
            if isinstance(cfg, TrainingConfig) else None
        share = max(est.breakdown_s, key=lambda k: est.breakdown_s[k]) if est.breakdown_s else ""
        out.append(SizePoint(
            model=model.name, parameters=params, fits=True,
            layout=parallel_text(cfg) or parts.to_parallel(cfg),
            step_s=est.time_s, tokens_per_s=est.tokens_per_s, mfu=est.mfu,
            tokens_per_joule=1.0 / est.joules_per_token if est.joules_per_token else None,
            largest_share=share,
            largest_share_fraction=est.breakdown_s[share] / est.time_s if share else None,
            best_lever=top.lever if top else "", best_lever_change=top.change if top else "",
            best_lever_speedup=top.speedup if top else None,
            next_lever=(f"{whatifs[1].lever} ({whatifs[1].speedup:.2f}x)"
                        if len(whatifs) > 1 else ""),
            software_lever=soft[0].label if soft else "",
            software_lever_change=(", ".join(f"{k}={v}" for k, v in soft[0].change.items())
                                   if soft else ""),
            software_lever_speedup=soft[1] if soft else None))
    return out


def sentence(rows: list[SizePoint], system: str) -> str:
    """What limits training on ``system`` as models grow, in one sentence (empty without
    rows)."""
    if not rows:
        return ""
    from accelkb.advise.figures import label

    fit = [r for r in rows if r.fits]
    lo, hi = _billions(rows[0].parameters), _billions(rows[-1].parameters)
    if not fit:
        return (f"From {lo} to {hi} parameters no model fits {system}: "
                f"{rows[0].note}.")
    shares = list(dict.fromkeys(label(r.largest_share) for r in fit))
    limit = (f"the largest share of the step is {shares[0]} at every size that fits" if
             len(shares) == 1 else "the largest share of the step moves from "
             + " to ".join(shares))
    levers = list(dict.fromkeys(r.best_lever for r in fit if r.best_lever))
    gains = [r.best_lever_speedup for r in fit if r.best_lever_speedup]
    lever = (f", the hardware lever that buys most is {' or '.join(levers)} "
             f"({min(gains):.2f}x to {max(gains):.2f}x)" if levers and gains else "")
    soft = [r for r in fit if r.software_lever]
    software = ("; no catalogued software change gains more than 0.5 % at any size" if not soft
                else "; the software lever that buys most is " + _lever_span(soft))
    tpj = [r.tokens_per_joule for r in fit if r.tokens_per_joule]
    watt = (f"; performance per watt falls from {max(tpj):.3g} to {min(tpj):.3g} tokens/J"
            if len(tpj) > 1 and max(tpj) > min(tpj) else "")
    missing = [r for r in rows if not r.fits]
    miss = (f"; {', '.join(r.model for r in missing)} do(es) not fit ({missing[0].note})"
            if missing else "")
    return (f"From {lo} to {hi} parameters on {system}, {limit}{lever}{software}{watt}"
            f"{miss}.")


def _lever_span(rows: list[SizePoint]) -> str:
    """'ZeRO-3 (1.2x at 7.7B to 1.4x at 175B) or ...': each lever with its sizes and gains."""
    by: dict[str, list[SizePoint]] = {}
    for r in rows:
        by.setdefault(r.software_lever, []).append(r)
    parts_ = []
    for name, rs in by.items():
        g = [r.software_lever_speedup or 1.0 for r in rs]
        sizes = [_billions(r.parameters) for r in rs]
        where = "at " + (" and ".join(sizes) if len(sizes) <= 3 else
                         f"{len(sizes)} sizes from {sizes[0]} to {sizes[-1]}")
        span = f"{min(g):.2f}x" if len(rs) == 1 else f"{min(g):.2f}x to {max(g):.2f}x"
        parts_.append(f"{name} ({span}, {where})")
    return " or ".join(parts_)


def _billions(parameters: float) -> str:
    """'7.7B', '175B', '1.01T'."""
    b = parameters / 1e9
    return f"{b / 1e3:.3g}T" if b >= 1e3 else f"{b:.3g}B"
