"""``accelkb advise``: an explained, quantitatively checked recommendation report."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from accelkb.advise import GOALS, advise
from accelkb.advise.report import FORMATS, render
from accelkb.commands._cost import add_cost_options
from accelkb.commands._knowledge import CHIPS_HELP, add_data_option
from accelkb.commands._limit import tokens_option
from accelkb.commands._output import check_target, write_atomically
from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.perf.cost.estimate import check_overrides

NAME = "advise"
HELP = "explain the bottlenecks of a workload on a system and recommend checked optimizations"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--system", required=True, help="system short name, e.g. ipu-pod64")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--workload",
                      help="workload short name, e.g. gpt3-175b-training, llama2-70b-inference")
    what.add_argument("--model", metavar="FILE.json|FILE.ttl",
                      help="a model file instead of a workload: the JSON shapes `estimate "
                           "--model` takes, or Turtle describing one model (needs --phase)")
    parser.add_argument("--phase", choices=("training", "inference"),
                        help="with --model: what the workload does")
    parser.add_argument("--gbs", type=int, help="with --model: training global batch (sequences)")
    parser.add_argument("--tokens", type=float, help="with --model: tokens to train")
    parser.add_argument("--prompt-len", type=int, help="with --model: inference prompt tokens")
    parser.add_argument("--output-len", type=int, help="with --model: inference output tokens")
    parser.add_argument("--chips", type=int, help=CHIPS_HELP)
    parser.add_argument("--goal", choices=GOALS, default="time", help="what 'better' means")
    parser.add_argument("--slo-tokens-per-s-per-user", type=float, default=None, metavar="N",
                        dest="slo", help="with --goal cost or energy (inference): the least "
                        "per-user speed a layout and batch must keep")
    add_cost_options(parser, whose="--system's")
    parser.add_argument("--compare", nargs="*", default=[], metavar="SYSTEM[:CHIPS]",
                        help="other systems to compare on the same workload, each at its own "
                        "size, or at CHIPS chips (joined by the knowledge base's larger system "
                        "built of it), e.g. dgx-h100:16 for 16 GPUs")
    parser.add_argument("--sizes", nargs="*", default=[], metavar="MODEL",
                        help="training: also sweep the system over these models (short names), "
                        "e.g. megatron-gpt-7.5b gpt3-175b megatron-gpt-1t")
    parser.add_argument("--workloads", nargs="*", default=[], metavar="WORKLOAD",
                        help="also estimate these training workloads (short names) on the "
                        "system and the compared systems, e.g. resnet50-training "
                        "vit-b16-training")
    parser.add_argument("--format", choices=FORMATS, default="md", help="report format")
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument("--out", help="write the report to this file (atomically)")
    add_data_option(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _model_workload(args: argparse.Namespace) -> tuple[KnowledgeBase, str]:
    """The knowledge base with the model file's workload in it, and the workload's name."""
    from accelkb.advise.model_file import model_workload

    if args.phase is None:
        raise InputError("--model FILE: expected --phase training or --phase inference")
    for option, value in (("--gbs", args.gbs), ("--prompt-len", args.prompt_len),
                          ("--output-len", args.output_len)):
        if value is not None and value < 1:
            raise InputError(f"{option}: expected a positive number, got {value}")
    tokens_option(args.tokens)
    extra, text, name = model_workload(args.model, args.phase, global_batch=args.gbs,
                                       tokens=args.tokens, prompt_len=args.prompt_len,
                                       output_len=args.output_len)
    with tempfile.TemporaryDirectory(prefix="accelkb-model-") as tmp:
        generated = Path(tmp) / f"{name}.ttl"
        generated.write_text(text, encoding="utf-8")
        extra = [e for e in extra if e not in args.data]  # the same file once
        return KnowledgeBase([*args.data, *extra, str(generated)]), name


def run(args: argparse.Namespace) -> int:
    if args.chips is not None and args.chips < 1:
        raise InputError(f"--chips: expected a positive number of chips, got {args.chips}")
    check_overrides(args.price, args.kwh_price, args.pue)
    if args.out:
        check_target(args.out)  # before the minutes of work, not after
    kb = None
    workload = args.workload
    if args.model is not None:
        kb, workload = _model_workload(args)
    elif args.phase or args.gbs or args.tokens or args.prompt_len or args.output_len:
        raise InputError("--phase, --gbs, --tokens, --prompt-len and --output-len go with "
                         "--model FILE; a --workload brings its own")
    elif args.data:
        from accelkb.ontology.kb import KnowledgeBase

        kb = KnowledgeBase(args.data)
    quiet = args.quiet or not sys.stderr.isatty()

    def progress(msg: str) -> None:
        if not quiet:
            sys.stderr.write(f"accelkb advise: {msg}\n")

    # the reproducing `accelkb estimate` commands name the model as estimate takes it
    model_ref, data = None, list(args.data)
    if args.model is not None and args.model.endswith(".json"):
        model_ref = args.model
    elif args.model is not None:
        data.append(args.model)
    if args.slo is not None and args.goal not in ("cost", "energy"):
        raise InputError(f"expected --slo-tokens-per-s-per-user only with --goal cost or "
                         f"energy (it bounds their batch search), got --goal {args.goal}")
    advice = advise(args.system, workload, chips=args.chips, goal=args.goal,
                    compare=args.compare, kb=kb, progress=progress, slo=args.slo,
                    price=args.price, kwh_price=args.kwh_price, pue=args.pue,
                    model_ref=model_ref, data=data, sizes=args.sizes,
                    workloads=args.workloads)
    text = render(advice, "json" if args.json else args.format)
    if args.out:
        write_atomically(args.out, text)
        if not quiet:
            sys.stderr.write(f"accelkb advise: wrote {args.out}\n")
    else:
        sys.stdout.write(text)
    return 0
