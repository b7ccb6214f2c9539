"""Public API: ``estimate_training`` and ``estimate_inference`` with names, files or specs.

``model`` may be a :class:`ModelSpec`, a knowledge-base name (``"gpt3-175b"``) or a JSON file path
with ``layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len, gated_mlp`` (optional
``head_dim``, ``tied_embeddings``); ``system`` may be a
:class:`SystemSpec`, a knowledge-base name (``"dgx-a100-superpod"``) or a JSON file of a
SystemSpec. ``parallel`` may be a config object, a dict or a string such as
``"tp=8,pp=16,dp=8,mb=1,gbs=1536,recompute=full"``.

Examples
--------
>>> parse_parallel("tp=8,pp=2,mb=1,gbs=64,recompute=selective,sp=1")["recompute"]
'selective'
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

import pydantic

from accelkb.errors import InfeasibleError, InputError
from accelkb.jsonio import strict_json

from . import inference, training
from .calibration import Calibration, load_calibration
from .inference import InferenceConfig, InferenceEstimate
from .specs import ModelSpec, SystemSpec
from .training import TrainingConfig, TrainingEstimate
from .uncertainty import Uncertainty, WithUncertainty, bounded, uncertainty

_ALIASES = {
    "mb": "micro_batch", "micro_batch": "micro_batch", "gbs": "global_batch",
    "global_batch": "global_batch", "v": "interleave", "interleave": "interleave",
    "sp": "sequence_parallel", "sequence_parallel": "sequence_parallel", "zero": "zero",
    "rts": "rts", "overlap": "dp_overlap", "dp_overlap": "dp_overlap", "flash": "fused_attention",
    "fused_attention": "fused_attention", "precision": "precision", "recompute": "recompute",
    "tp": "tp", "pp": "pp", "dp": "dp", "batch": "batch", "bs": "batch", "in": "prompt_len",
    "prompt": "prompt_len", "prompt_len": "prompt_len", "out": "output_len",
    "output": "output_len", "output_len": "output_len", "pipelined": "pipelined",
    "offload": "offload_optimizer", "offload_optimizer": "offload_optimizer",
    "grad_bytes": "grad_bytes", "seq": "seq_len", "seq_len": "seq_len",
    "collectives": "collectives", "coll": "collectives",
}
_BOOL = {"1": True, "true": True, "yes": True, "on": True,
         "0": False, "false": False, "no": False, "off": False}


def parse_parallel(text: str) -> dict[str, Any]:
    """Parse ``"key=value,..."`` into config fields (aliases: mb, gbs, v, sp, flash, bs, in, out).

    Raises
    ------
    InputError
        For a malformed item, an unknown key, or a key given twice (an alias counts as its key).
    """
    out: dict[str, Any] = {}
    said: dict[str, str] = {}  # field -> the item that set it
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or not value.strip():
            raise InputError(f"expected key=value in --parallel, got {item!r}")
        if key not in _ALIASES:
            raise InputError(f"expected a --parallel key among {sorted(_ALIASES)}, got {key!r}")
        if _ALIASES[key] in said:  # tp=8,tp=4 (or gbs=8,global_batch=16): which did they mean?
            raise InputError(f"expected each --parallel key once, got {_ALIASES[key]} twice: "
                             f"{said[_ALIASES[key]]!r} and {item!r}")
        said[_ALIASES[key]] = item
        v = value.strip()
        if v.lower() in _BOOL and _ALIASES[key] in {"sequence_parallel", "rts", "dp_overlap",
                                                     "fused_attention", "pipelined",
                                                     "offload_optimizer"}:
            out[_ALIASES[key]] = _BOOL[v.lower()]
        else:
            out[_ALIASES[key]] = _number(v)
    return out


def _number(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def _pydantic_message(exc: pydantic.ValidationError, typed: dict[str, str] | None = None) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(_said(str(p), typed or {}) for p in err["loc"]) or "input"
        parts.append(f"{loc}: {err['msg']} (got {err.get('input')!r})")
    return "; ".join(parts)


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = strict_json(path.read_text("utf-8"), str(path), f"a readable JSON {what} file")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"expected a readable JSON {what} file, got {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object in {path}, got {type(data).__name__}")
    return data


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a file; a name no file can have (too long, a NUL) is a name."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def resolve_model(model: ModelSpec | str | Path) -> ModelSpec:
    """Turn a spec, a JSON file or a knowledge-base name into a :class:`ModelSpec`.

    Raises
    ------
    InputError
        For an unknown name, an unreadable file or invalid fields.
    """
    if isinstance(model, ModelSpec):
        return model
    path = Path(model)
    if path.suffix == ".json" or _is_file(path):
        data = _load_json(path, "model")
        data.setdefault("name", path.stem)
        try:
            return ModelSpec.model_validate(data)
        except pydantic.ValidationError as exc:
            raise InputError(f"invalid model file {path}: {_pydantic_message(exc)}") from None
    return _kb().model_spec(str(model))


def resolve_system(system: SystemSpec | str | Path, chips: int | None = None) -> SystemSpec:
    """Turn a spec, a JSON file or a knowledge-base name into a :class:`SystemSpec` of ``chips``.

    Raises
    ------
    InputError
        For an unknown name, an unreadable file, invalid fields or a bad chip count.
    """
    if chips is not None and (not isinstance(chips, int) or chips < 1):
        raise InputError(f"expected a positive number of chips, got {chips!r}")
    if isinstance(system, SystemSpec):
        spec = system
    else:
        path = Path(system)
        if path.suffix == ".json" or _is_file(path):
            try:
                spec = SystemSpec.model_validate(_load_json(path, "system"))
            except pydantic.ValidationError as exc:
                raise InputError(f"invalid system file {path}: {_pydantic_message(exc)}") from None
        else:
            return _kb().system_spec(str(system), chips)
    return spec if chips is None or chips == spec.chips else resize_system(spec, chips)


def resize_system(spec: SystemSpec, chips: int) -> SystemSpec:
    """``spec`` at ``chips`` chips; past what its outermost level joins, the knowledge base's
    system that scales it out (:func:`accelkb.perf.from_kb.resized`).

    Raises
    ------
    InputError
        A bad count, or more chips than the spec joins with nothing larger to scale out to.
    """
    if not isinstance(chips, int) or chips <= (spec.max_chips or spec.chips):
        return spec.with_chips(chips)  # resizes, or says what is wrong with the count
    return cast(SystemSpec, _kb().resized(spec, chips))


def _kb() -> Any:
    try:
        return importlib.import_module(f"{__package__}.from_kb")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.from_kb":
            raise
        raise InputError("expected the knowledge-base adapter accelkb.perf.from_kb to resolve "
                         "names, got none installed; pass an explicit spec or JSON file") from None


def config(cls: type[pydantic.BaseModel], parallel: Any) -> Any:
    """``parallel`` (a config, a dict or ``"key=value,..."``) as a validated ``cls``.

    Raises
    ------
    InputError
        For an unknown key or an invalid value, in the user's words.

    Examples
    --------
    >>> from accelkb.perf.training import TrainingConfig
    >>> config(TrainingConfig, "tp=2,pp=4").pp
    4
    """
    if isinstance(parallel, cls):
        return parallel
    data = parse_parallel(parallel) if isinstance(parallel, str) else dict(parallel or {})
    try:
        return cls.model_validate(data)
    except pydantic.ValidationError as exc:
        typed = _typed_keys(parallel) if isinstance(parallel, str) else {}
        extra = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden"]
        if extra:
            phase = "training" if issubclass(cls, TrainingConfig) else "inference"
            accepted = sorted(k for k, field in _ALIASES.items() if field in cls.model_fields)
            said = ", ".join(typed.get(f, f) for f in extra)
            raise InputError(f"expected --parallel keys of {phase} ({', '.join(accepted)}), got "
                             f"{said}: {phase} has no such setting") from None
        raise InputError(f"invalid configuration: {_pydantic_message(exc, typed)}") from None


def _said(field: str, typed: dict[str, str]) -> str:
    """A field as the user typed it, with its name where that differs: ``mb (micro_batch)``."""
    key = typed.get(field, field)
    return key if key == field else f"{key} ({field})"


def _typed_keys(text: str) -> dict[str, str]:
    """Config field -> the key the user typed for it in ``key=value,...`` (``mb`` for
    ``micro_batch``), so messages use the user's words."""
    out = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key = item.partition("=")[0].strip().lower()
        if key in _ALIASES:
            out[_ALIASES[key]] = key
    return out


def estimate_training(
    model: ModelSpec | str | Path,
    system: SystemSpec | str | Path,
    parallel: TrainingConfig | dict[str, Any] | str | None = None,
    chips: int | None = None,
    train_tokens: float | None = None,
    calibration: Calibration | None = None,
    with_uncertainty: bool = False,
    search_micro_batch: bool = False,
) -> TrainingEstimate:
    """Estimate one training step; see :class:`TrainingEstimate` for the outputs.

    Parameters
    ----------
    model, system
        Specs, knowledge-base names or JSON files.
    parallel
        Layout: ``tp, pp, dp, mb, gbs, v, recompute, sp, zero, rts, overlap, flash, ...``.
    chips
        Resize the system to this many chips first.
    train_tokens
        If given, also report the time and energy to train this many tokens.
    with_uncertainty
        Also give each headline figure its interval and sensitivity (about 20 more estimates).
    search_micro_batch
        The micro-batch is not the user's: take the fastest of those dividing each replica's
        share of the global batch that fit (:func:`fastest_micro_batch`), and say so in
        ``layout_note``. The command line does this when ``mb`` is not given: the default of
        one sequence leaves a 197-token ViT micro-batch to kernel launches (25x slower).

    Raises
    ------
    InputError
        For unknown names or invalid layouts (tp not dividing heads, negative batch).
    InfeasibleError
        For a configuration that does not fit in memory (with ``search_micro_batch``: at no
        micro-batch).
    """
    m = resolve_model(model)
    s = resolve_system(system, chips)
    cfg = config(TrainingConfig, parallel)
    if train_tokens is not None and train_tokens <= 0:
        raise InputError(f"expected a positive number of tokens to train, got {train_tokens}")
    cal = calibration or load_calibration()
    if search_micro_batch:
        est = fastest_micro_batch(m, s, cfg, cal, train_tokens)
        cfg = est.config
    else:
        est = training.estimate(m, s, cfg, cal, train_tokens)
    if not with_uncertainty:
        return est

    def rerun(system: SystemSpec, c: Calibration) -> dict[str, Any]:
        return training.estimate(m, system, cfg, c, train_tokens).model_dump()
    ranges, foreign = uncertainty(est.model_dump(), "training", rerun, s, cal)
    return est.model_copy(update={"uncertainty": ranges, "foreign_constants": foreign})


def fastest_micro_batch(model: ModelSpec, system: SystemSpec, cfg: TrainingConfig,
                        cal: Calibration, train_tokens: float | None = None) -> TrainingEstimate:
    """The fastest estimate of ``cfg`` over the micro-batches that divide each data-parallel
    replica's share of the global batch and fit, its ``layout_note`` saying how it was chosen.

    Raises
    ------
    InfeasibleError
        When no valid micro-batch fits: the error of the smallest.
    InputError
        For a layout invalid whatever the micro-batch (the first such error, unchanged); a
        micro-batch the rest of the layout refuses (an interleaved pipeline's m % pp) is
        passed over.
    """
    dp = cfg.dp if cfg.dp is not None else max(1, system.chips // (cfg.tp * cfg.pp))
    if cfg.global_batch % dp:  # no micro-batch helps: the estimate's own message says why
        return training.estimate(model, system, cfg, cal, train_tokens)
    share = cfg.global_batch // dp
    options = [b for b in range(1, share + 1) if share % b == 0]
    best: TrainingEstimate | None = None
    first: InfeasibleError | None = None
    invalid: InputError | None = None  # e.g. an interleaved pipeline needing m % pp == 0
    for mb in options:
        try:
            est = training.estimate(model, system, cfg.model_copy(update={"micro_batch": mb}),
                                    cal, train_tokens)
        except InfeasibleError as exc:
            first = first or exc
            continue
        except InputError as exc:
            invalid = invalid or exc
            continue
        if best is None or est.step_time_s < best.step_time_s:
            best = est
    if best is None:
        raise first or invalid or InfeasibleError(f"no micro-batch of {cfg.global_batch} fits")
    tried = ", ".join(map(str, options)) if len(options) <= 8 else \
        f"{', '.join(map(str, options[:4]))}, ... {options[-1]}"
    return best.model_copy(update={"layout_note": (
        f"micro-batch {best.config.micro_batch}: not given, so the fastest that fits of the "
        f"{len(options)} dividing each replica's {share} sequences ({tried})")})


def estimate_inference(
    model: ModelSpec | str | Path,
    system: SystemSpec | str | Path,
    parallel: InferenceConfig | dict[str, Any] | str | None = None,
    chips: int | None = None,
    calibration: Calibration | None = None,
    with_uncertainty: bool = False,
) -> InferenceEstimate:
    """Estimate prefill (TTFT) and decode; see :class:`InferenceEstimate` for the outputs.

    ``parallel`` keys: ``tp, pp, batch (bs), in (prompt_len), out (output_len), precision,
    pipelined``.

    Raises
    ------
    InputError
        For unknown names, invalid layouts or a configuration that does not fit in memory.
    """
    m = resolve_model(model)
    s = resolve_system(system, chips)
    cfg = config(InferenceConfig, parallel)
    cal = calibration or load_calibration()
    est = inference.estimate(m, s, cfg, cal)
    if not with_uncertainty:
        return est

    def rerun(system: SystemSpec, c: Calibration) -> dict[str, Any]:
        return inference.estimate(m, system, cfg, c).model_dump()
    ranges, foreign = uncertainty(est.model_dump(), "inference", rerun, s, cal)
    for key, (least, most) in inference.physical_bounds(est).items():
        if key in ranges:
            ranges[key] = ranges[key].model_copy(update={"interval": bounded(
                ranges[key].interval, least, most)})
    return est.model_copy(update={"uncertainty": ranges, "foreign_constants": foreign})


class DenseEstimate(WithUncertainty):
    """A convolutional network's data-parallel training step (:mod:`accelkb.perf.dense`), as
    ``accelkb estimate`` reports it: the per-image counterpart of :class:`TrainingEstimate`."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")
    model: str = pydantic.Field(description="model short name")
    system: str = pydantic.Field(description="system short name")
    chips: int = pydantic.Field(description="chips used (data parallel over all of them)")
    config: dict[str, Any] = pydantic.Field(description="global_batch, micro_batch, recompute, "
                                            "precision, and how the micro-batch was chosen")
    step_time_s: float = pydantic.Field(description="time of one optimizer step, s")
    samples_per_s: float = pydantic.Field(description="images (samples) per second, all chips")
    breakdown: dict[str, float] = pydantic.Field(description="step time by component, s")
    working_set_bytes: float | None = pydantic.Field(description="bytes one chip holds at once")
    power_w: float | None = pydantic.Field(description="average power of the chips, W")
    power_basis: str | None = pydantic.Field(default=None, description="full-power figure used")
    joules_per_sample: float | None = pydantic.Field(description="energy per image, J")


def is_dense_model(model: ModelSpec | str | Path) -> bool:
    """True when ``model`` names a convolutional network of the knowledge base (ResNet-50)."""
    if isinstance(model, ModelSpec) or Path(model).suffix == ".json" or _is_file(Path(model)):
        return False
    try:
        _kb().dense_spec(str(model))
    except InputError:
        return False
    return True


def estimate_dense(model: str, system: SystemSpec | str | Path,
                   parallel: dict[str, Any] | str | None = None, chips: int | None = None,
                   calibration: Calibration | None = None,
                   with_uncertainty: bool = False) -> DenseEstimate:
    """Data-parallel training step of a convolutional network of the knowledge base.

    ``parallel`` keys: ``gbs`` (required), ``mb`` and ``recompute`` (``full`` or ``none``; both
    left out: the fastest fitting pair, as :func:`accelkb.perf.dense.best_dense_layout` picks),
    ``precision`` (default fp16).

    Raises
    ------
    InputError
        For an unknown name, a key a data-parallel network has no use for, a batch that does
        not split over the chips or a working set that does not fit.
    """
    from .compute import peak_for
    from .dense import best_dense_layout, estimate_dense_training
    from .energy import run_power
    from .uncertainty import foreign_constants, interval, sensitivities

    work = _kb().dense_spec(model)
    s = resolve_system(system, chips)
    par = parse_parallel(parallel) if isinstance(parallel, str) else dict(parallel or {})
    extra = sorted(set(par) - {"global_batch", "micro_batch", "recompute", "precision", "dp"})
    if extra:
        raise InputError(f"expected gbs, mb, recompute and precision for {model} (data parallel "
                         f"over every chip), got {', '.join(extra)}")
    if "global_batch" not in par:
        raise InputError(f"expected gbs=N (images per optimizer step) for {model}, got none")
    gbs, prec = int(par["global_batch"]), str(par.get("precision", "fp16"))
    peak_for(s.chip, prec)  # an unsupported precision is refused before any search
    if par.get("dp") not in (None, s.chips):
        raise InputError(f"expected dp = the {s.chips} chips for {model}, got {par['dp']}")
    rc_word = par.get("recompute")
    if rc_word not in (None, "full", "none"):
        raise InputError(f"expected recompute=full or none for {model}, got {rc_word}")
    cal = calibration or load_calibration()
    if par.get("micro_batch") is None and rc_word is None:
        best, mb, rc = best_dense_layout(work, s, s.chips, gbs, cal, prec)
        chosen = "the fastest fitting micro-batch and recomputation"
    else:
        given = par.get("micro_batch")
        mb, rc = int(given) if given else gbs // max(1, s.chips), rc_word == "full"
        best = estimate_dense_training(work, s, s.chips, gbs, cal, prec, rc, mb)
        chosen = "as given"

    def run(system: SystemSpec, c: Calibration) -> dict[str, Any]:
        return estimate_dense_training(work, system, s.chips, gbs, c, prec, rc, mb).model_dump()

    power, basis = run_power(s, s.chips, best.activity, cal)
    est = DenseEstimate(
        model=model, system=s.name, chips=s.chips,
        config={"global_batch": gbs, "micro_batch": mb, "recompute": "full" if rc else "none",
                "precision": prec, "chosen": chosen},
        step_time_s=best.step_time_s, samples_per_s=best.samples_per_s, breakdown=best.breakdown,
        working_set_bytes=best.working_set_bytes, power_w=power, power_basis=basis,
        joules_per_sample=power / best.samples_per_s if power else None)
    if not with_uncertainty:
        return est
    figures = {"step_time_s": ("time", best.step_time_s),
               "samples_per_s": ("rate", best.samples_per_s)}
    sens = sensitivities(run, s, cal, {k: v for k, (_, v) in figures.items()})
    used = sorted({x.name for x in sens.pop("")})
    ranges = {k: Uncertainty(interval=interval(v, sense, s.chip.vendor, "training"),
                             sensitivity=sens[k]) for k, (sense, v) in figures.items()}
    return est.model_copy(update={"uncertainty": ranges,
                                  "foreign_constants": foreign_constants(used, s.chip.vendor)})
