"""Frozen instance of the configuration problem, built from the knowledge base and perf specs.

The instance holds the model and system specs (from :mod:`accelkb.perf`), the declared
constraints that apply (read from ``ontology/data/constraints.ttl`` through the graph API), and
the finite domain of every decision variable. Domains are candidate values only; which
combinations are allowed is the encoding's job (``encoding``).

Examples
--------
>>> divisors(12)
[1, 2, 3, 4, 6, 12]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rdflib import RDF, URIRef
from rdflib.namespace import DCTERMS, RDFS

from accelkb.errors import InputError
from accelkb.ontology.namespace import AK
from accelkb.perf.api import resolve_model, resolve_system
from accelkb.perf.calibration import Calibration, load_calibration
from accelkb.perf.specs import ModelSpec, SystemSpec
from accelkb.perf.training import stack_fuses_attention
from accelkb.solver.config.model import ConfigRequest, ConstraintInfo

RECOMPUTE = ("full", "selective", "none")  # index order = increasing activation memory
MICRO_BATCHES = (1, 2, 4, 8, 16)
INTERLEAVES = (1, 2, 3, 4, 6, 8)
DEFAULT_GLOBAL_BATCH = 512


def divisors(n: int) -> list[int]:
    """Positive divisors of ``n``, ascending (trial division up to the square root: ``n`` of
    10^12 chips used to count to 10^12 and never return).

    >>> divisors(12)
    [1, 2, 3, 4, 6, 12]
    """
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


@dataclass(frozen=True)
class Instance:
    """Everything the encoding needs, fixed before Z3 sees anything."""

    request: ConfigRequest
    model: ModelSpec
    system: SystemSpec
    calibration: Calibration
    vendor: str | None
    constraints: dict[str, ConstraintInfo]
    chip_counts: tuple[int, ...]
    tp: tuple[int, ...]
    pp: tuple[int, ...]
    dp: tuple[int, ...]
    micro_batch: tuple[int, ...]
    interleave: tuple[int, ...]
    recompute: tuple[str, ...]
    sequence_parallel: tuple[bool, ...]
    zero: tuple[int, ...]
    precision: tuple[str, ...]
    offload: tuple[bool, ...]
    batch: tuple[int, ...]
    pipelined: tuple[bool, ...]
    global_batch: int
    fast_domain: int
    notes: list[str] = field(default_factory=list)
    #: training with a fused attention kernel, as today's software runs on this chip
    #: (:func:`accelkb.perf.training.stack_fuses_attention`)
    fused_attention: bool = False

    @property
    def training(self) -> bool:
        """True for a training request."""
        return self.request.phase == "training"

    @property
    def max_chips(self) -> int:
        """Chips the configuration may use: the system's, capped by the user's limit."""
        cap = self.request.constraints.max_chips
        return min(self.system.chips, cap) if cap else self.system.chips


def declared_constraints(kb: object) -> dict[str, ConstraintInfo]:
    """Read every ``ak:Constraint`` of the knowledge base, keyed by ``ak:constraintKey``.

    Raises
    ------
    InputError
        If a constraint lacks a key, a title or a rationale.
    """
    g = kb.asserted  # type: ignore[attr-defined]
    out: dict[str, ConstraintInfo] = {}
    for c in sorted(g.subjects(RDF.type, AK.Constraint)):
        key, title, why = (g.value(c, p) for p in (AK.constraintKey, RDFS.label, AK.rationale))
        if key is None or title is None or why is None:
            raise InputError(f"constraint {c}: expected ak:constraintKey, rdfs:label and "
                             "ak:rationale in the knowledge base, got a node missing one")
        out[str(key)] = ConstraintInfo(
            iri=str(c), key=str(key), title=str(title), rationale=str(why),
            sources=tuple(sorted(str(s) for s in g.objects(c, DCTERMS.source))))
    return out


def _applicable(kb: object, keys: dict[str, ConstraintInfo], phase: str,
                vendor: URIRef | None) -> dict[str, ConstraintInfo]:
    g = kb.asserted  # type: ignore[attr-defined]
    out = {}
    for key, info in keys.items():
        node = URIRef(info.iri)
        scope = str(g.value(node, AK.constraintScope) or "always")
        if scope == "partition" or (scope in ("training", "inference") and scope != phase):
            continue
        need = g.value(node, AK.constraintVendor)
        if need is not None and need != vendor:
            continue
        out[key] = info
    return out


def _chip_vendor(kb: object, system: SystemSpec) -> URIRef | None:
    g = kb.asserted  # type: ignore[attr-defined]
    for chip in g.subjects(RDF.type, AK.Chip):
        if str(g.value(chip, AK.shortName)) == system.chip.name:
            v = g.value(chip, AK.vendor)
            return v if isinstance(v, URIRef) else None
    return None


def build_instance(req: ConfigRequest, kb: object | None = None) -> Instance:
    """Build the frozen instance of ``req`` from the knowledge base and the perf specs.

    Raises
    ------
    InputError
        For an unknown model or system, a system without a published inter-chip network, or
        a chip count the system cannot provide.
    """
    from accelkb.perf.from_kb import default_kb

    kb = kb or default_kb()
    model = resolve_model(req.model)
    if req.seq_len:
        model = model.model_copy(update={"seq_len": req.seq_len})
    system = resolve_system(req.system, req.chips)
    vendor = _chip_vendor(kb, system)
    constraints = _applicable(kb, declared_constraints(kb), req.phase, vendor)
    n = system.chips
    cap = min(n, req.constraints.max_chips or n)
    if req.objective == "chips":
        counts = sorted({c for k in range(0, 20) for c in (2**k, 3 * 2**k) if c <= cap} | {cap})
    elif req.phase == "training":
        counts = [cap]
    else:
        counts = list(range(1, cap + 1))
    chip_divs = sorted({d for c in counts for d in divisors(c)}) if req.phase == "training" \
        else sorted(set(divisors(model.heads)) | {2**k for k in range(12)})
    tp = tuple(d for d in chip_divs if d <= cap)
    if req.phase == "training":
        pp = tuple(d for d in chip_divs if d <= model.layers)
    else:  # any stage count: perf places uneven layers (and the embedding) itself
        pp = tuple(range(1, min(model.layers, cap) + 1))
    peaks = system.chip.peak_flops
    precisions = req.constraints.precisions or ()
    if req.phase == "training":
        wanted = tuple(p for p in ("bf16", "fp16") if p in peaks)[:1] or ("fp32",)
        domain_prec = tuple(sorted(set(precisions) | set(wanted)))
    else:
        domain_prec = tuple(sorted(set(precisions) | {p for p in ("int8", "fp16", "bf16")
                                                       if p in peaks}))
    multi_tier = len(system.chip.memory_tiers) > 1
    training = req.phase == "training"
    return Instance(
        request=req, model=model, system=system, calibration=load_calibration(),
        vendor=str(vendor) if vendor else None, constraints=constraints,
        chip_counts=tuple(counts), tp=tp, pp=pp,
        dp=tuple(chip_divs) if training else (1,),
        micro_batch=MICRO_BATCHES if training else (1,),
        interleave=INTERLEAVES if training else (1,),
        recompute=RECOMPUTE if training else ("none",),
        sequence_parallel=(False, True) if training else (False,),
        zero=(0, 1, 2, 3) if training else (0,),
        precision=domain_prec,
        offload=(False, True) if (training and multi_tier) else (False,),
        batch=tuple(sorted(set(req.batches))) if not training else (1,),
        pipelined=(False, True) if not training else (False,),
        global_batch=req.global_batch or DEFAULT_GLOBAL_BATCH,
        fast_domain=system.levels[0].group_chips,
        fused_attention=training and stack_fuses_attention(system.chip),
    )
