"""The ``accelkb estimate`` command that reproduces a figure of a report (issue 27).

Every layout a report estimates (the baseline, each recommendation's "after", the combined plan)
comes with the one command that gives the same figure from the command line, so that a reader can
check it and change it. The layout is written in ``--parallel`` syntax with every field that is
not the configuration's default (tp, pp and dp always), so nothing the report changed is left out.

Examples
--------
>>> from accelkb.perf.training import TrainingConfig
>>> cfg = TrainingConfig(tp=4, dp=16, micro_batch=4, global_batch=256, zero=2, dp_overlap=True)
>>> parallel_text(cfg)
'tp=4,pp=1,dp=16,mb=4,gbs=256,zero=2,overlap=1'
>>> command("ipu-pod64", "gpt3-13b", cfg.model_dump(), "training", tokens=2.6e11).split(" --")
['accelkb estimate training', 'model gpt3-13b', 'system ipu-pod64', \
'parallel tp=4,pp=1,dp=16,mb=4,gbs=256,zero=2,overlap=1', 'tokens 2.6e+11']
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from accelkb.perf.inference import InferenceConfig
from accelkb.perf.training import TrainingConfig

#: Field -> the short ``--parallel`` key (``accelkb.perf.api.parse_parallel`` reads both).
_KEYS = {"micro_batch": "mb", "global_batch": "gbs", "interleave": "v",
         "sequence_parallel": "sp", "dp_overlap": "overlap", "fused_attention": "flash",
         "offload_optimizer": "offload", "prompt_len": "in", "output_len": "out",
         "seq_len": "seq"}
#: Fields ``--parallel`` cannot set: a layout using them has no command.
_NOT_PARALLEL = ("stage_layers", "queue_when_full")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def parallel_text(cfg: TrainingConfig | InferenceConfig) -> str | None:
    """``cfg`` in ``--parallel`` syntax, or None when it sets a field the syntax cannot."""
    fields = type(cfg).model_fields
    items = []
    for name, value in cfg.model_dump().items():
        default = fields[name].default
        if value is None or (value == default and name not in ("tp", "pp", "dp")):
            continue
        if name in _NOT_PARALLEL:
            return None
        items.append(f"{_KEYS.get(name, name)}={_value(value)}")
    return ",".join(items)


def command(system: str, model: str, configuration: dict[str, Any], phase: str,
            chips: int | None = None, tokens: float | None = None,
            data: Sequence[str] = ()) -> str:
    """The ``accelkb estimate`` command line for one estimated layout (``configuration``: an
    estimate's config fields), or '' when ``--parallel`` cannot express it."""
    config_type = TrainingConfig if phase == "training" else InferenceConfig
    par = parallel_text(config_type.model_validate(configuration))
    if par is None:
        return ""
    argv = ["accelkb", "estimate", phase, "--model", model, "--system", system]
    if chips is not None:
        argv += ["--chips", str(chips)]
    argv += ["--parallel", par]
    if tokens and phase == "training":
        argv += ["--tokens", f"{tokens:g}"]
    for path in data:
        argv += ["--data", path]
    return shlex.join(argv)
