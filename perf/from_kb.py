"""Build performance-model specs from the knowledge base (the typed interface KB -> perf).

A system in the ontology is a chain of levels (e.g. DGX A100 SuperPOD -> DGX A100 -> chips);
each level with an ``ak:hasTopology`` becomes one :class:`NetworkLevelSpec`, innermost first.
Memory tiers attached to a chip are per chip; tiers attached to a system (IPU-M2000 streaming
memory) are shared, so each chip gets capacity and bandwidth divided by that system's chips.
Tiers without a published bandwidth (GPU L2, TPU CMEM) are left out: the model cannot time them.

Examples
--------
>>> spec = system_spec("dgx-a100-superpod")
>>> spec.chips, [lvl.group_chips for lvl in spec.levels]
(1120, [8, 1120])
>>> model_spec("llama2-70b").kv_heads
8
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import pydantic
from rdflib import RDF, Graph, Literal, URIRef

from accelkb.errors import InputError
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK
from accelkb.perf.dense import DenseWorkload, bottleneck_block_outputs, bottleneck_resnet_gemms
from accelkb.perf.specs import (
    ChipSpec,
    MemoryTierSpec,
    ModelSpec,
    NetworkLevelSpec,
    SystemSpec,
    TierKind,
    Topology,
)

_PEAKS = {AK.peakFlopsFp32: "fp32", AK.peakFlopsTf32: "tf32", AK.peakFlopsFp16: "fp16",
          AK.peakFlopsBf16: "bf16", AK.peakFlopsFp8: "fp8", AK.peakOpsInt8: "int8",
          AK.peakFlopsFp4: "fp4"}
_TIERS: dict[Any, TierKind] = {AK.OnChipSRAM: "sram", AK.HBM: "hbm", AK.DDR: "ddr",
                               AK.StreamingMemory: "streaming"}
_TOPOLOGIES: dict[Any, Topology] = {AK.FullyConnected: "full", AK.Ring: "ring", AK.Torus: "torus",
               AK.Switched: "switch", AK.FatTree: "switch", AK.Dragonfly: "dragonfly"}
_TIER_ORDER = {"sram": 0, "hbm": 1, "ddr": 2, "streaming": 3}


#: Knowledge bases made active by :func:`using`, innermost last.
_ACTIVE: list[KnowledgeBase] = []


class NoNetworkError(InputError):
    """A multi-chip system whose inter-chip network the knowledge base does not publish (a
    report can still say what one chip does; a chip count beyond the system is another error)."""


@contextlib.contextmanager
def using(kb: KnowledgeBase) -> Iterator[KnowledgeBase]:
    """Within the block, :func:`default_kb` (and so every name the performance model and the
    configuration solver resolve) is ``kb``: the bundled knowledge plus a user's files.

    Examples
    --------
    >>> kb = default_kb()
    >>> with using(kb) as active:
    ...     default_kb() is active
    True
    """
    _ACTIVE.append(kb)
    try:
        yield kb
    finally:
        _ACTIVE.remove(kb)


def default_kb() -> KnowledgeBase:
    """The active knowledge base (:func:`using`), else the bundled one, loaded once."""
    return _ACTIVE[-1] if _ACTIVE else _bundled()


@functools.lru_cache(maxsize=1)
def _bundled() -> KnowledgeBase:
    """The bundled knowledge base, loaded and validated once per process."""
    return KnowledgeBase()


def _num(g: Graph, s: Any, p: URIRef) -> float | None:
    v = g.value(s, p)
    return float(v.toPython()) if isinstance(v, Literal) else None


def _int(g: Graph, s: Any, p: URIRef) -> int | None:
    v = _num(g, s, p)
    return None if v is None else int(v)


def _short(g: Graph, s: Any) -> str:
    return str(g.value(s, AK.shortName) or s)


def _chain(g: Graph, system: URIRef) -> list[URIRef]:
    """The system and its nested subsystems, outermost first."""
    chain: list[URIRef] = []
    seen: set[URIRef] = set()
    node: Any = system
    while node is not None and node not in seen:
        chain.append(node)
        seen.add(node)
        node = g.value(node, AK.subsystem)
    return chain


def _tier(g: Graph, tier: Any, share: int) -> MemoryTierSpec | None:
    kind = _TIERS.get(g.value(tier, AK.tierKind))
    cap = _num(g, tier, AK.capacityBytes)
    bw = _num(g, tier, AK.bandwidthBytesPerSecond)
    if kind is None or cap is None or bw is None or bw <= 0:
        return None
    return MemoryTierSpec(kind=kind, capacity_bytes=cap / share, bandwidth_bytes_per_s=bw / share)


def _tier_gaps(g: Graph, chip: URIRef) -> str:
    """What the chip's memory tiers lack, e.g. ``"kb:sn30-ddr (no bandwidth)"``."""
    gaps = []
    for tier in sorted(g.objects(chip, AK.hasMemoryTier), key=str):
        missing = [what for what, prop in (("kind", AK.tierKind), ("capacity", AK.capacityBytes),
                                           ("bandwidth", AK.bandwidthBytesPerSecond))
                   if g.value(tier, prop) is None]
        label = g.value(tier, AK.shortName) or "kb:" + str(tier).rsplit("/", 1)[-1]
        gaps.append(f"{label} ({'no ' + ', no '.join(missing) if missing else 'unusable'})")
    return ", ".join(gaps) if gaps else "no memory tier"


def chip_spec_of(kb: KnowledgeBase, chip: URIRef, shared_tiers: list[MemoryTierSpec] = ()) -> ChipSpec:  # type: ignore[assignment]
    """The :class:`ChipSpec` of a chip IRI, plus tiers shared from its systems."""
    g = kb.asserted
    peaks = {key: v for p, key in _PEAKS.items() if (v := _num(g, chip, p)) is not None}
    tiers = [t for tier in g.objects(chip, AK.hasMemoryTier) if (t := _tier(g, tier, 1))]
    tiers += list(shared_tiers)
    tiers.sort(key=lambda t: (_TIER_ORDER[t.kind], -t.bandwidth_bytes_per_s))
    name = _short(g, chip)
    if not peaks:
        raise InputError(f"chip {name}: expected at least one peak throughput in the knowledge base")
    if not tiers:
        raise InputError(f"chip {name}: expected a memory tier with capacity and bandwidth, got "
                         f"{_tier_gaps(g, chip)}; a Turtle file given with --data can add "
                         "what is missing (ak:tierKind, ak:capacityBytes, "
                         "ak:bandwidthBytesPerSecond, each number with its source)")
    bsp = (chip, AK.hasFeature, AK.BulkSynchronousParallel) in g
    whole = (chip, AK.hasFeature, AK.WholeProgramCompilation) in g
    xbw = _num(g, chip, AK.exchangeBandwidthBytesPerSecond) if bsp else None
    tiles = _int(g, chip, AK.computeUnitCount) if xbw else None
    maker = g.value(chip, AK.vendor)
    vendor = g.value(maker, AK.shortName) if maker is not None else None
    return ChipSpec(name=name, peak_flops=peaks, memory_tiers=tiers,
                    tdp_watts=_num(g, chip, AK.tdpWatts),
                    vendor=str(vendor) if vendor is not None else None,
                    tiles=tiles, exchange_bytes_per_s=xbw if tiles else None,
                    spatial_dataflow=(chip, AK.hasFeature, AK.SpatialDataflow) in g,
                    deterministic=(chip, AK.hasFeature, AK.DeterministicExecution) in g,
                    execution="compiled" if whole else None, fuses_elementwise=whole,
                    fused_attention_efficiency=_num(g, chip, AK.fusedAttentionEfficiency),
                    achievable_matmul_fraction={k: min(1.0, v / peaks[k]) for k, p in (
                        ("bf16", AK.maxAchievableMatmulFlopsBf16),
                        ("fp8", AK.maxAchievableMatmulFlopsFp8))
                        if (v := _num(g, chip, p)) and peaks.get(k)},
                    source_note=f"accelkb knowledge base, {chip}")


def _level(g: Graph, system: URIRef, library: bool = False) -> NetworkLevelSpec | None:
    topo = g.value(system, AK.hasTopology)
    if topo is None:
        return None
    bw = _num(g, topo, AK.injectionBandwidthBytesPerSecondPerChip)
    if bw is None:
        links = list(g.objects(topo, AK.usesLink))
        per_link = _num(g, links[0], AK.bandwidthBytesPerSecondPerDirection) if links else None
        per_chip = _num(g, topo, AK.linksPerEndpoint)
        bw = per_link * per_chip if per_link and per_chip else None
    if bw is None:
        return None
    latency = _num(g, topo, AK.perHopLatencySeconds)
    if latency is None:
        latency = next((v for link in g.objects(topo, AK.usesLink)
                        if (v := _num(g, link, AK.latencySeconds)) is not None), 0.0)
    kind = _TOPOLOGIES.get(g.value(topo, AK.topologyKind), "switch")
    generator = g.value(topo, AK.generatorSpec)
    # one unit link of the generator graph: a switch port carries the chip's whole injection
    # bandwidth; elsewhere a unit link is one physical link (ak:usesLink)
    unit = bw if kind == "switch" else next(
        (v for link in g.objects(topo, AK.usesLink)
         if (v := _num(g, link, AK.bandwidthBytesPerSecondPerDirection)) is not None), None)
    return NetworkLevelSpec(
        name=str(generator or _short(g, system)),
        group_chips=_int(g, system, AK.chipCount) or 1,
        bandwidth_bytes_per_s_per_chip=bw, latency_s=latency,
        topology=kind,
        max_hops=max(1, _int(g, topo, AK.maxHops) or 1),
        generator=None if generator is None else str(generator),
        scheduled=(scheduled := (topo, AK.hasFeature, AK.StaticNetworkScheduling) in g),
        link_bandwidth_bytes_per_s=unit,
        library="nccl" if library and not scheduled else None,
    )


#: The system properties that give full power (the power at full activity that
#: :func:`accelkb.perf.energy.average_power` scales down to the idle floor), most specific first.
#: ak:averagePowerWatts is not among them: an average under load is not the maximum.
FULL_POWER_PROPERTIES = (AK.maxPowerWatts, AK.powerWatts)


def _full_power(g: Graph, chain: list[URIRef]) -> tuple[float | None, str | None]:
    """Full power per chip of the outermost level that has a full-power figure, and in words
    which property of which level gave it; ``(None, None)`` when no level has one.

    Per level ak:maxPowerWatts (a maximum: nameplate or at peak) comes first, then the legacy
    ak:powerWatts ("typical or maximum as the provenance says"). ak:averagePowerWatts and
    ak:idlePowerWatts are never taken as full power. With none, SystemSpec.watts_per_chip falls
    back to the chip's ak:tdpWatts.
    """
    for part in chain:
        n = _int(g, part, AK.chipCount) or 1
        for prop in FULL_POWER_PROPERTIES:
            if (w := _num(g, part, prop)) is not None:
                return w / n, f"ak:{str(prop).rsplit('#', 1)[1]} of {_short(g, part)}: {w:,.0f} W / {n} chips"
    return None, None


def _average_power(g: Graph, chain: list[URIRef]) -> tuple[float | None, str | None]:
    """Published average power under load per chip (ak:averagePowerWatts) of the outermost
    level that has one, and in words where it comes from."""
    for part in chain:
        n = _int(g, part, AK.chipCount) or 1
        if (w := _num(g, part, AK.averagePowerWatts)) is not None:
            return w / n, f"ak:averagePowerWatts of {_short(g, part)}: {w:,.0f} W / {n} chips"
    return None, None


def system_spec(name: str, chips: int | None = None, kb: KnowledgeBase | None = None) -> SystemSpec:
    """The :class:`SystemSpec` of a system short name, optionally scaled to ``chips`` chips.

    Raises
    ------
    UnknownNameError
        The name is not a system (the message lists the closest names).
    InputError
        The knowledge base lacks what the model needs (e.g. no inter-chip network is published).
    """
    kb = kb or default_kb()
    g = kb.asserted
    iri = kb.resolve("system", name)
    chain = _chain(g, iri)
    chip = g.value(iri, AK.chip)
    if not isinstance(chip, URIRef):
        raise InputError(f"system {name}: expected an ak:chip in the knowledge base, got none")
    shared = []
    for part in chain:
        n = _int(g, part, AK.chipCount) or 1
        shared += [t for tier in g.objects(part, AK.hasMemoryTier) if (t := _tier(g, tier, n))]
    library = (chip, AK.hasFeature, AK.RuntimeCollectiveLibrary) in g
    levels = [lvl for part in reversed(chain) if (lvl := _level(g, part, library)) is not None]
    total = _int(g, iri, AK.chipCount) or 1
    if chips is not None and chips > total:  # another system's network joins them
        return system_spec(_scale_out(g, iri, chip, chips), chips, kb)
    if not levels:
        if total > 1 or (chips or 1) > 1:
            raise NoNetworkError(
                f"system {name}: the knowledge base has no inter-chip network for it (no ak:hasTopology "
                "with a bandwidth on any level); add one in Turtle to estimate multi-chip runs")
        levels = []
    # Power and host links are often given for the repeated part (a DGX node, an IPU-M2000):
    # take the outermost level that has one and share it among that level's chips.
    # Host links are per part (one 100 GbE per IPU-M2000), so the innermost one is used.
    power, power_basis = _full_power(g, chain)
    average, average_basis = _average_power(g, chain)
    host_bw = None
    for part in reversed(chain):
        n = _int(g, part, AK.chipCount) or 1
        host = g.value(part, AK.hostLink)
        if host_bw is None and host is not None and (
                b := _num(g, host, AK.bandwidthBytesPerSecondPerDirection)) is not None:
            host_bw = b / n
    spec = SystemSpec(
        name=name, chip=chip_spec_of(kb, chip, shared), chips=total, levels=levels or [
            NetworkLevelSpec(name="single-chip", group_chips=1, bandwidth_bytes_per_s_per_chip=1.0,
                             latency_s=0.0, topology="full")],
        host_bandwidth_bytes_per_s_per_chip=host_bw,
        power_watts_per_chip=power, power_basis=power_basis,
        average_watts_per_chip=average, average_basis=average_basis,
    )
    return spec.with_chips(chips) if chips is not None and chips != total else spec


def resized(spec: SystemSpec, chips: int, kb: KnowledgeBase | None = None) -> SystemSpec:
    """``spec`` at ``chips`` chips: itself resized while its outermost level joins them, else,
    when ``spec`` is a system of the knowledge base, the larger system that scales it out
    (:func:`system_spec`). A spec that is not the knowledge base's (a system file) does not grow.

    >>> [lvl.name for lvl in resized(system_spec("dgx-h100"), 16).levels]
    ['switch:8', 'switch:127']

    Raises
    ------
    InputError
        ``chips`` is more than the spec joins and the knowledge base has nothing larger.
    """
    if not isinstance(chips, int) or chips <= (spec.max_chips or spec.chips):
        return spec.with_chips(chips)  # resizes, or says what is wrong with the count
    kb = kb or default_kb()
    try:
        own = system_spec(spec.name, kb=kb)
    except InputError:
        return spec.with_chips(chips)  # raises: a system file keeps its own size
    if own.chip != spec.chip or own.with_chips(min(spec.chips, own.chips)).levels != spec.levels:
        return spec.with_chips(chips)
    return system_spec(spec.name, chips, kb)


def _scale_out(g: Graph, iri: URIRef, chip: URIRef, chips: int) -> str:
    """The short name of the smallest system of the knowledge base that holds ``chips`` chips
    and is built of ``iri`` (``ak:subsystem``: a DGX H100 SuperPOD of DGX H100 nodes) or, failing
    that, of ``iri``'s own building block (an IPU-POD64 and an IPU-POD16 are both IPU-M2000s):
    its outer levels are the network that joins more chips than ``iri`` has.

    Raises
    ------
    InputError
        No such system: the knowledge base does not say how ``iri`` scales out.
    """
    chain = _chain(g, iri)
    block = chain[1] if len(chain) > 1 else None
    found: list[tuple[bool, int, str]] = []
    smaller: list[tuple[bool, int, str]] = []
    for other in g.subjects(RDF.type, AK.System):
        held = _int(g, other, AK.chipCount) or 1
        if not isinstance(other, URIRef) or other == iri or g.value(other, AK.chip) != chip:
            continue
        parts = _chain(g, other)[1:]
        if iri in parts or (block is not None and block in parts):
            (found if held >= chips else smaller).append((iri not in parts, held,
                                                          _short(g, other)))
    if not found:
        name, total = _short(g, iri), _int(g, iri, AK.chipCount) or 1
        most = max(smaller, key=lambda f: f[1], default=(False, total, name))
        raise InputError(
            f"system {name} has {total} chips and the knowledge base has no system of at least "
            f"{chips} built of it (ak:subsystem), so how its chips join beyond {most[1]} is "
            f"unknown; got a request for {chips} chips. Ask for at most {most[1]}"
            + (f" ({most[2]})" if most[2] != name else "") + ", name a larger system, or give "
            "a system file with the network that joins them")
    return min(found)[2]


def dense_spec(name: str, kb: KnowledgeBase | None = None) -> DenseWorkload:
    """The :class:`~accelkb.perf.dense.DenseWorkload` of a convolutional model short name: its
    parameters, forward FLOPs per sample and weighted layers, and with ``ak:bottleneckBlocks``
    (a bottleneck ResNet) its convolutions as implicit matrix products.

    Raises
    ------
    UnknownNameError
        The name is not a model.
    InputError
        The model is a transformer, or lacks one of the totals.
    """
    kb = kb or default_kb()
    g = kb.asserted
    iri = kb.resolve("model", name)
    if (iri, RDF.type, AK.ConvolutionalModel) not in g:
        raise InputError(f"model {name}: expected a convolutional network (ak:ConvolutionalModel),"
                         " got a transformer or another architecture")
    params, layers = _int(g, iri, AK.parameterCount), _int(g, iri, AK.layers)
    flops = g.value(iri, AK.flopsPerSampleForward)
    if params is None or layers is None or not isinstance(flops, Literal):
        raise InputError(f"model {name}: expected parameterCount, layers and "
                         "flopsPerSampleForward in the knowledge base")
    blocks_text = g.value(iri, AK.bottleneckBlocks)
    gemms: tuple[tuple[int, int, int], ...] = ()
    checkpoints = 0
    if blocks_text is not None:
        try:
            blocks = tuple(int(b) for b in str(blocks_text).split(","))
        except ValueError:
            raise InputError(f"model {name}: expected bottleneckBlocks like '3,4,6,3', got "
                             f"'{blocks_text}'") from None
        gemms, checkpoints = bottleneck_resnet_gemms(blocks), bottleneck_block_outputs(blocks)
    return DenseWorkload(name=name, params=params, layers=layers,
                         flops_per_sample_forward=float(flops.toPython()), gemms=gemms,
                         checkpoint_elements=checkpoints)


def model_spec(name: str, kb: KnowledgeBase | None = None) -> ModelSpec:
    """The :class:`ModelSpec` of a transformer model short name.

    Raises
    ------
    UnknownNameError
        The name is not a model.
    InputError
        The model is not a transformer (e.g. ResNet-50) or lacks a shape property.
    """
    kb = kb or default_kb()
    g = kb.asserted
    iri = kb.resolve("model", name)
    if (iri, None, None) in g and not any(
            (c, None, None) for c in g.objects(iri, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"))
            if c in (AK.DecoderModel, AK.EncoderModel, AK.TransformerModel)):
        raise InputError(f"model {name}: expected a transformer (layers, hidden, heads), "
                         "got another architecture; the transformer performance model cannot shape it")
    fields = {"layers": AK.layers, "hidden": AK.hiddenSize, "heads": AK.attentionHeads,
              "ffn_hidden": AK.ffnHiddenSize, "vocab": AK.vocabSize, "seq_len": AK.sequenceLength}
    values: dict[str, Any] = {}
    for key, prop in fields.items():
        v = _int(g, iri, prop)
        if v is None:
            raise InputError(f"model {name}: expected {prop.split('#')[-1]} in the knowledge base")
        values[key] = v
    values["kv_heads"] = _int(g, iri, AK.kvHeads) or values["heads"]
    values["head_dim"] = _int(g, iri, AK.headDimension)  # None: hidden / heads
    gated = g.value(iri, AK.gatedMlp)
    values["gated_mlp"] = bool(gated.toPython()) if isinstance(gated, Literal) else False
    try:
        return ModelSpec(name=name, **values)
    except pydantic.ValidationError as exc:
        reasons = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise InputError(f"model {name}: the performance model cannot shape it: {reasons}") from None


def workload_model_spec(workload: str | URIRef, kb: KnowledgeBase | None = None) -> ModelSpec:
    """The :class:`ModelSpec` a workload runs: its model, at the workload's own sequence length
    (``ak:sequenceLength`` of the workload) where it gives one. A model's ``sequenceLength`` is
    its context window (131,072 for Llama 3.1); a training run states the length it trains at.

    >>> workload_model_spec("llama3.1-70b-training").seq_len
    8192

    Raises
    ------
    UnknownNameError
        Not a workload of the knowledge base.
    InputError
        The workload has no model, or the model cannot be shaped (:func:`model_spec`).
    """
    kb = kb or default_kb()
    g = kb.asserted
    iri = workload if isinstance(workload, URIRef) else kb.resolve("workload", workload)
    model = g.value(iri, AK.model)
    if model is None:
        raise InputError(f"workload {_short(g, iri)}: expected an ak:model in the knowledge base")
    spec = model_spec(_short(g, model), kb=kb)
    seq = _int(g, iri, AK.sequenceLength)
    return spec if seq is None else spec.model_copy(update={"seq_len": seq})


def _topology_level(g: Graph, system: URIRef) -> tuple[URIRef, float, float, str] | None:
    """``(level, bandwidth, latency, spec)``: the outermost of the system and its subsystems
    whose topology has a generator spec spanning that level's chips and a link bandwidth."""
    for part in _chain(g, system):
        topo = g.value(part, AK.hasTopology)
        spec = g.value(topo, AK.generatorSpec) if topo is not None else None
        if spec is None or _int(g, topo, AK.endpointCount) != _int(g, part, AK.chipCount):
            continue
        link = g.value(topo, AK.usesLink)
        bw = _num(g, link, AK.bandwidthBytesPerSecondPerDirection) if link is not None else None
        if bw is None:
            continue
        lat = _num(g, topo, AK.perHopLatencySeconds)
        if lat is None and link is not None:
            lat = _num(g, link, AK.latencySeconds)
        return part, bw, lat or 0.0, str(spec)
    return None


def topology_spec(name: str, kb: KnowledgeBase | None = None) -> tuple[str, float, float]:
    """(generator spec, unit-link bandwidth per direction in B/s, per-hop latency in s) of the
    outermost level of a system whose topology spans all of its chips (the level's; see
    :func:`topology_scope` for systems whose own level has no such topology).

    Raises
    ------
    InputError
        No level of the system has a chip-level generator spec.
    """
    kb = kb or default_kb()
    found = _topology_level(kb.asserted, kb.resolve("system", name))
    if found is None:
        raise InputError(f"system {name}: expected a topology with a generator spec spanning its "
                         "chips and a link bandwidth in the knowledge base, found none")
    _level, bw, lat, spec = found
    return spec, bw, lat


def topology_scope(name: str, kb: KnowledgeBase | None = None) -> tuple[str, int, int] | None:
    """``(level, level chips, system chips)`` where :func:`topology_spec` comes from a subsystem
    that holds only part of the system's chips, e.g. ``("bow-pod64", 64, 256)`` for
    ``bow-pod256``, whose GW-Link level joins four Pod64 tori through switches; None where the
    topology spans the whole system (or there is none)."""
    kb = kb or default_kb()
    g = kb.asserted
    system = kb.resolve("system", name)
    found = _topology_level(g, system)
    if found is None or found[0] == system:
        return None
    level = found[0]
    short = g.value(level, AK.shortName)
    return (str(short) if short is not None else str(level), _int(g, level, AK.chipCount) or 0,
            _int(g, system, AK.chipCount) or 0)
