"""``accelkb estimate training|inference``: step time, throughput, MFU, memory and energy.

Examples::

    accelkb estimate training --model gpt3-175b --system dgx-a100-superpod --chips 1024 \\
        --parallel 'tp=8,pp=16,dp=8,mb=1,gbs=1536,recompute=full' --json
    accelkb estimate inference --model llama2-70b --system groq-576 \\
        --parallel 'tp=8,pp=72,batch=1,in=512,out=512,precision=int8,collectives=auto'

``collectives=auto|schedule|alpha-beta`` in ``--parallel`` chooses where collective times come
from (accelkb.perf.scheduled); the output lists each collective with its source.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from accelkb.commands._cost import add_cost_options
from accelkb.commands._knowledge import CHIPS_HELP, add_data_option, knowledge
from accelkb.commands._limit import tokens_option
from accelkb.errors import EXIT_NEGATIVE, InfeasibleError, InputError
from accelkb.jsonio import dumps_strict
from accelkb.perf.uncertainty import foreign_by_vendors

NAME = "estimate"
HELP = "estimate training step time or inference latency/throughput of a model on a system"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("phase", choices=("training", "inference"), help="what to estimate")
    parser.add_argument("--model", required=True, metavar="NAME|FILE.json",
                        help="knowledge-base model name or JSON file with layers, hidden, heads, "
                        "kv_heads, ffn_hidden, vocab, seq_len, gated_mlp (optional head_dim when "
                        "the head size is not hidden / heads)")
    parser.add_argument("--system", required=True, metavar="NAME|FILE.json",
                        help="knowledge-base system name or SystemSpec JSON file")
    parser.add_argument("--chips", type=int, default=None, help=CHIPS_HELP)
    parser.add_argument("--parallel", default="", metavar="K=V,...",
                        help="layout, e.g. 'tp=8,pp=16,dp=8,mb=1,gbs=1536,recompute=full' "
                        "(inference: 'tp=8,batch=1,in=128,out=128,precision=int8')")
    parser.add_argument("--tokens", type=float, default=None,
                        help="training: also report time and energy to train this many tokens")
    add_cost_options(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")
    add_data_option(parser)


def _fmt_bytes(b: float) -> str:
    return f"{b / 1e9:.2f} GB"


def _uncertainty_lines(ranges: dict[str, Any]) -> list[str]:
    """Each range's basis once, and what the first headline figure depends on most."""
    if not ranges:
        return []
    lines = ["  ranges: " + basis for basis in dict.fromkeys(
        r["interval"]["basis"] for r in ranges.values())]
    first, rows = next(iter(ranges.items()))
    if rows["sensitivity"]:
        lines.append(f"  {first} depends most on (value at 50 % / 150 %):")
        for s in rows["sensitivity"]:
            lo, hi = (f"{v:.4g}" if v is not None else "refused"
                      for v in (s["at_minus_50"], s["at_plus_50"]))
            lines.append(f"    {s['name']:<44} {lo} / {hi}")
    return lines


def _human(data: dict[str, Any], phase: str) -> str:
    lines = [f"{phase} estimate: {data['model']} on {data['system']} ({data['chips']} chips)"]
    dense = "chosen" in data.get("config", {})  # a convolutional network (api.estimate_dense)
    if dense:
        lines[0] += ", data parallel: " + ", ".join(f"{k}={v}" for k, v in data["config"].items()
                                                    if k != "chosen") + \
            f" ({data['config']['chosen']})"
        keys = ["step_time_s", "samples_per_s", "joules_per_sample", "working_set_bytes"]
    elif phase == "training":
        cfg = dict(data["config"])
        cfg["dp"] = cfg.get("dp") or data["chips"] // (cfg["tp"] * cfg["pp"])
        lines[0] += ": " + ", ".join(f"{k}={cfg[k]}" for k in (
            "tp", "pp", "dp", "micro_batch", "global_batch", "recompute", "zero"))
        if data.get("layout_note"):
            lines.append(f"  layout: {data['layout_note']}")
        keys = ["step_time_s", "tokens_per_s", "samples_per_s", "mfu", "hfu",
                "model_flops_per_s_per_chip",
                "time_to_train_s", "joules_per_token"]
    else:
        cfg = data["config"]
        lines[0] += f": tp={cfg['tp']}, pp={cfg['pp']}, batch={cfg['batch']}, " \
            f"{cfg['precision']}, in={cfg['prompt_len']}, out={cfg['output_len']}"
        if data.get("layout_note"):
            lines.append(f"  layout: {data['layout_note']}")
        keys = ["ttft_s", "decode_s_per_token", "tokens_per_s_per_user", "tokens_per_s", "bound",
                "mfu", "joules_per_token"]
    ranges = data.get("uncertainty") or {}
    for k in keys:
        v = data.get(k)
        if v is None:
            continue
        line = f"  {k:<28} {v:.4g}" if isinstance(v, float) else f"  {k:<28} {v}"
        if k in ranges:
            iv = ranges[k]["interval"]
            line += f"   range {iv['low']:.4g} - {iv['high']:.4g}"
        lines.append(line)
    lines += _uncertainty_lines(ranges)
    for vendors, names in foreign_by_vendors(data.get("foreign_constants")).items():
        lines.append(f"  note: fitted only on {vendors} measurements, applied to this other "
                     f"vendor's chip: {', '.join(names)}")
    if data.get("cost"):
        lines += _cost_lines(data["cost"])
    if data.get("power_basis") and dense:
        lines.append(f"  energy: average power {data['power_w']:,.4g} W ({data['power_basis']})")
    if "memory_per_chip_bytes" in data:
        lines.append("  memory per chip:")
        for tier, b in data["memory_per_chip_bytes"].items():
            lines.append(f"    {tier:<26} {_fmt_bytes(b)}")
    lines.append("  breakdown (s):")
    for k, v in data["breakdown"].items():
        lines.append(f"    {k:<26} {v:.4g}")
    if data.get("collectives"):
        lines.append("  collectives (s, source):")
        for k, c in data["collectives"].items():
            how = (f"schedule on {c['topology']}: {c['makespan_steps']} steps (bound "
                   f"{c['lower_bound_steps']}, {c['status']}, {c['chunks']} chunks)"
                   if c["source"] == "schedule" else f"alpha-beta ({c['fallback']})")
            lines.append(f"    {k:<26} {c['seconds']:.4g}  {how}")
    return "\n".join(lines) + "\n"


def _cost(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The estimate's cost and energy, or why there is none (no price: not an error)."""
    from accelkb.perf.cost.estimate import cost_of

    system = data["system"]
    try:
        report = cost_of(data, args.phase, system, data["chips"], args.price, args.kwh_price,
                         args.pue)
    except InputError as exc:
        if args.price is not None or args.kwh_price is not None or args.pue is not None:
            raise  # the user asked for a cost: a bad override is their error
        return {"unavailable": str(exc)}
    return report.model_dump(mode="json")


def _cost_lines(cost: dict[str, Any]) -> list[str]:
    if "unavailable" in cost:
        return [f"  cost: none ({cost['unavailable']})"]
    hour, per = cost["usd_per_hour"], cost["usd_per_million_tokens"]
    lines = ["  cost and energy:",
             f"    usd_per_hour               {hour['usd']:,.4g}   range {hour['low']:,.4g} - "
             f"{hour['high']:,.4g}",
             f"    usd_per_million_tokens     {per['usd']:,.4g}   range {per['low']:,.4g} - "
             f"{per['high']:,.4g}"]
    if cost.get("usd_to_train"):
        run = cost["usd_to_train"]
        lines.append(f"    usd_to_train               {run['usd']:,.4g}   range {run['low']:,.4g}"
                     f" - {run['high']:,.4g}")
    for key in ("kwh_per_million_tokens", "kwh_to_train", "tokens_per_joule"):
        if cost.get(key) is not None:
            lines.append(f"    {key:<26} {cost[key]:,.4g}")
    lines += [f"    basis: {b}" for b in hour["basis"]] + [f"    energy: {cost['energy_basis']}"]
    return lines


def _training_layout(args: argparse.Namespace, given: dict[str, Any]) -> tuple[str, str]:
    """The user's training layout, with the attention kernel today's software runs on the chip
    where they did not say (``flash``): Llama 2 7B on a DGX H100 at gbs 256 was refused for
    104 GB of attention scores that FlashAttention never stores. Also what to say about it."""
    from accelkb.perf.api import resolve_model, resolve_system
    from accelkb.perf.training import stack_fuses_attention

    text = args.parallel or ""
    if "fused_attention" in given:
        return text, ""
    resolve_model(args.model)  # an unknown model is said before an unknown system, as always
    chip = resolve_system(args.system, args.chips).chip
    fused = stack_fuses_attention(chip)
    how = (f"fused attention {'on' if fused else 'off'}: no flash given, so as today's "
           f"software runs it on {chip.name}")
    return ",".join(x for x in (text, f"flash={int(fused)}") if x), how


def _sequence_hint(args: argparse.Namespace, given: dict[str, Any]) -> str:
    """Where the user gave no sequence length: the one the estimate trained at (the model's
    context: Llama 3.1 8B's 131,072 tokens needed 637 GB per H100 without a word on it)."""
    from accelkb.perf.api import resolve_model

    if "seq_len" in given:
        return ""
    seq = resolve_model(args.model).seq_len
    return (f"; each sequence is the model's {seq:,}-token context (no seq given): seq=N trains "
            "shorter ones")


def _searched_inference(args: argparse.Namespace, given: dict[str, Any]) -> Any:
    """Where an inference layout gives neither tp nor pp: the lowest-latency layout over the
    system's chips (advise's baseline search; one chip of a four-wafer CS-3 cluster decoded
    Llama 3.1 70B at 1.25 tokens/s) at the user's batch, lengths and precision, estimated with
    its range, and a note saying so."""
    from accelkb.advise.baseline import best_inference_config
    from accelkb.perf import estimate_inference
    from accelkb.perf.api import config, resolve_model, resolve_system
    from accelkb.perf.inference import InferenceConfig

    cfg = config(InferenceConfig, args.parallel or "")  # errors in the keys the user typed
    model, system = resolve_model(args.model), resolve_system(args.system, args.chips)
    base = best_inference_config(model, system, cfg.prompt_len, cfg.output_len, cfg.batch,
                                 cfg.precision if "precision" in given else None)
    found = base.config.model_copy(update={k: v for k, v in given.items()
                                           if k not in ("precision",)})
    est = estimate_inference(model, system, found, with_uncertainty=True)
    prec = ("" if found.precision == cfg.precision or "precision" not in given else
            f"; {cfg.precision} fits no layout, so {found.precision}")
    return est.model_copy(update={"layout_note": (
        f"tp={found.tp}, pp={found.pp}, {found.precision}: no tp or pp given, so the lowest "
        f"per-token latency of {base.fitted} fitting layouts ({base.tried} tried){prec}")})


def run(args: argparse.Namespace) -> int:
    """Run the command with the user's ``--data`` files active; returns the exit code. A layout
    that does not fit is a negative answer (exit 1): with ``--json`` it is also said on stdout
    as ``{"status": "INFEASIBLE", "reason": ...}``, so a script reads a result, not nothing."""
    with knowledge(args):
        try:
            return _run(args)
        except InfeasibleError as exc:
            if not args.json:
                raise  # the CLI says it on stderr and exits 1
            sys.stdout.write(dumps_strict({
                "status": "INFEASIBLE", "reason": str(exc), "model": args.model,
                "system": args.system, "phase": args.phase, "parallel": args.parallel,
                "chips": args.chips}, indent=2, sort_keys=True) + "\n")
            sys.stderr.write(f"accelkb estimate: infeasible: {exc}\n")
            return EXIT_NEGATIVE


def _run(args: argparse.Namespace) -> int:
    from accelkb.perf import estimate_inference, estimate_training
    from accelkb.perf.api import estimate_dense, is_dense_model, parse_parallel

    tokens_option(args.tokens)
    if args.chips is not None and args.chips < 1:
        raise InputError(f"expected --chips to be a positive integer, got {args.chips}")
    dense = is_dense_model(args.model)
    if dense and (args.phase != "training" or args.tokens is not None):
        raise InputError(f"expected 'training' without --tokens for the convolutional network "
                         f"{args.model} (its runs are counted in images), got "
                         f"{'--tokens' if args.phase == 'training' else args.phase}")
    if dense:
        est: Any = estimate_dense(args.model, args.system, args.parallel, chips=args.chips,
                                  with_uncertainty=True)
    elif args.phase == "training":
        given = parse_parallel(args.parallel or "")
        layout, flash = _training_layout(args, given)
        try:  # no mb given: the fastest that fits, as for a convolutional network
            est = estimate_training(args.model, args.system, layout, chips=args.chips,
                                    train_tokens=args.tokens, with_uncertainty=True,
                                    search_micro_batch="micro_batch" not in given)
        except InfeasibleError as exc:
            raise InfeasibleError(f"{exc}{_sequence_hint(args, given)}") from None
        if flash:
            est = est.model_copy(update={"layout_note": "; ".join(
                x for x in (est.layout_note, flash) if x)})
    else:
        if args.tokens is not None:
            raise InputError("expected --tokens only with 'training', got it with 'inference'")
        given = parse_parallel(args.parallel or "")
        if "tp" not in given and "pp" not in given:
            est = _searched_inference(args, given)
        else:
            est = estimate_inference(args.model, args.system, args.parallel, chips=args.chips,
                                     with_uncertainty=True)
    data = est.model_dump(mode="json")
    data["cost"] = {"unavailable": "priced per token; a convolutional network's run is priced "
                    "in advise --workloads"} if dense else _cost(data, args)
    if args.json:
        sys.stdout.write(dumps_strict(data, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(_human(data, args.phase))
    return 0
