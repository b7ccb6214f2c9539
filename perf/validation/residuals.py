"""The validation residuals by vendor and regime: what an estimate's interval rests on.

Each validated row (:mod:`.training`, :mod:`.others`) is tagged with the vendor of the measured
system, the regime (training, prefill, decode or whole inference requests) and whether its
metric is a time or a rate. Its residual is ``r = ln(measured time / predicted time)`` (for a
rate, ``ln(predicted / measured)``), so ``exp(r)`` is the factor the model's time should be
multiplied by. ``python bench/perf_validation.py --residuals`` writes the summary to
``perf/data/residuals.json``; a test checks that the stored file is what the validation gives.

Rows of vendor claims (``llm_inference_vendor_claims.csv``) are kept apart as ``claims``:
they are not measurements, and an interval that rests on them says so. The rows of that file
that Artificial Analysis measured on the vendors' public APIs (labelled
:data:`THIRD_PARTY`) are measurements and count as such.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from accelkb.perf.validation.training import FileResult

#: (file, metric prefix) -> (vendor, regime, "time" | "rate"); files not listed (the NCCL
#: collectives, power, memory) are not headline figures and give no residuals.
TAGS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("megatron_sc21_table1_weak_scaling.csv", "achieved"): ("nvidia", "training", "rate"),
    ("korthikanti2022_table5_iteration_time.csv", "iteration"): ("nvidia", "training", "time"),
    ("vtrain_ground_truth_multi_node_a100.csv", "iteration"): ("nvidia", "training", "time"),
    ("vtrain_ground_truth_single_node_a100.csv", "iteration"): ("nvidia", "training", "time"),
    ("mosaicml_mpt_training_throughput_mfu.csv", "tokens"): ("nvidia", "training", "rate"),
    ("mlperf_training_ipu_vs_dgx_bert_resnet.csv", "BERT"): ("graphcore", "training", "time"),
    ("mlperf_training_ipu_vs_dgx_bert_resnet.csv", "ResNet"): ("graphcore", "training", "time"),
    ("llm_inference_bench_argonne_70b.csv", "request latency (s), NVIDIA"):
        ("nvidia", "inference", "time"),
    ("llm_inference_bench_argonne_70b.csv", "request latency (s), AMD"):
        ("amd", "inference", "time"),
    ("llm_inference_bench_argonne_sn40l.csv", "request"): ("sambanova", "inference", "time"),
    ("llmperf_groq_llama2_70b.csv", "decode"): ("groq", "decode", "time"),
    ("graphcore_bow_training_throughput.csv", "training"): ("graphcore", "training", "rate"),
    ("mlperf_training_tpu_v4_throughput.csv", "training"): ("google", "training", "rate"),
}
CLAIMS_FILE = "llm_inference_vendor_claims.csv"
#: The label mark of a row of the claims file whose source is Artificial Analysis' own
#: benchmark pages (artificialanalysis.ai, quoted in a vendor's blog or press release; the row's
#: confidence says whether the quote was read first hand): a third-party measurement
#: of a public API, tagged as measured (:func:`accelkb.perf.validation.others.check_vendor_claims`).
THIRD_PARTY = "[Artificial Analysis]"
#: Vendor claims by the label's first word.
CLAIM_VENDORS = {"Groq": "groq", "SambaNova": "sambanova", "Cerebras": "cerebras"}


@dataclass(frozen=True)
class Residual:
    """One row's residual with its tags."""

    vendor: str
    regime: str
    kind: str  # "measured" or "claims"
    r: float
    file: str
    error: float  # predicted / measured - 1, in the row's own metric


def residuals(results: list[FileResult]) -> list[Residual]:
    """Tag every row of the validation results that bears on a headline figure."""
    out = []
    for fr in results:
        tag = next((t for (f, prefix), t in TAGS.items()
                    if fr.file == f and fr.metric.startswith(prefix)), None)
        for row in fr.rows:
            if row.measured <= 0 or row.predicted <= 0:
                continue
            if fr.tag is not None:
                vendor, regime, kind = fr.tag
                sense = row.sense
            elif tag is not None:
                vendor, regime, sense = tag
                kind = "measured"
            elif fr.file == CLAIMS_FILE:
                first = row.label.split()[0]
                if first not in CLAIM_VENDORS:
                    continue
                vendor, regime, sense = CLAIM_VENDORS[first], "decode", "rate"
                kind = "measured" if THIRD_PARTY in row.label else "claims"
            else:
                continue
            ratio = row.measured / row.predicted
            r = math.log(ratio) if sense == "time" else -math.log(ratio)
            out.append(Residual(vendor, regime, kind, r, fr.file, row.error))
    return out


def _quantile(xs: list[float], q: float) -> float:
    """Linear-interpolation quantile of a sorted list."""
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def loo_inside(group: list[float], pooled_abs_q95: float) -> list[bool]:
    """For each residual of a (vendor, regime) group, whether it lies inside the interval the
    *other* rows of the group would give (the rules of :func:`accelkb.perf.uncertainty.interval`:
    5th-95th percentile with 10 or more rows, extremes widened by 20 % with 3 to 9, twice the
    pooled 95th percentile below). A held-out coverage, where the in-sample one is ~90 % by
    construction.

    >>> loo_inside([0.0] * 9 + [1.0], 0.5)
    [True, True, True, True, True, True, True, True, True, False]
    """
    out = []
    for i, r in enumerate(group):
        others = sorted(group[:i] + group[i + 1:])
        if len(others) >= 10:
            lo, hi = _quantile(others, 0.05), _quantile(others, 0.95)
        elif len(others) >= 3:
            lo, hi = others[0] - 0.2, others[-1] + 0.2
        else:
            lo, hi = -2 * pooled_abs_q95, 2 * pooled_abs_q95
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        out.append(lo - 1e-9 <= r <= hi + 1e-9)
    return out


#: Measured rows a (vendor, regime) group needs for its interval to rest on them alone; with
#: fewer, the vendor's claims join them (and the basis says so).
MIN_MEASURED = 3


def basis_rows(rows: list[Residual]) -> list[Residual]:
    """The rows an interval rests on: the measured ones where there are :data:`MIN_MEASURED`
    or more, else all (claims too).

    >>> m = Residual("v", "decode", "measured", 0.0, "f", 0.0)
    >>> c = Residual("v", "decode", "claims", 1.0, "f", 0.0)
    >>> [r.kind for r in basis_rows([m, m, m, c])], len(basis_rows([m, c]))
    (['measured', 'measured', 'measured'], 2)
    """
    measured = [r for r in rows if r.kind == "measured"]
    return measured if len(measured) >= MIN_MEASURED else rows


def summary(found: list[Residual]) -> dict[str, Any]:
    """Per vendor and regime: rows, files, kind and the residuals' spread (rounded: stable),
    over :func:`basis_rows` (claims left out where enough rows are measured)."""
    groups: dict[tuple[str, str], list[Residual]] = {}
    for res in found:
        groups.setdefault((res.vendor, res.regime), []).append(res)
    table: dict[str, Any] = {}
    for (vendor, regime), every in sorted(groups.items()):
        rows = basis_rows(every)
        rs = sorted(x.r for x in rows)
        table.setdefault(vendor, {})[regime] = {
            "rows": len(rs),
            "kind": "+".join(sorted({x.kind for x in rows}, reverse=True)),
            "claims_left_out": len(every) - len(rows),
            "files": sorted({x.file for x in rows}),
            "min": round(rs[0], 4), "max": round(rs[-1], 4),
            "q05": round(_quantile(rs, 0.05), 4), "q95": round(_quantile(rs, 0.95), 4),
            "median_abs": round(statistics.median(abs(x) for x in rs), 4),
        }
    measured = sorted(abs(x.r) for x in found if x.kind == "measured")
    return {
        "_about": "ln(measured time / predicted time) of the validation rows by vendor and "
                  "regime; written by `python bench/perf_validation.py --residuals`",
        "pooled_abs_q95": round(_quantile(measured, 0.95), 4) if measured else None,
        "groups": table,
    }
