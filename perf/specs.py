"""Frozen input specifications for the performance model: chips, memory tiers, networks, models.

These are the contract with the knowledge-base adapter (``perf/from_kb.py``), which fills them
from the ontology. Every number is in SI base units (bytes, FLOP/s, bytes/s, seconds, watts).
Hardware numbers never appear in perf code: they arrive through these specs.

Examples
--------
>>> tier = MemoryTierSpec(kind="hbm", capacity_bytes=80e9, bandwidth_bytes_per_s=2.0e12)
>>> chip = ChipSpec(name="demo", peak_flops={"bf16": 3.0e14}, memory_tiers=[tier], tdp_watts=400.0)
>>> node = NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=3e11,
...                         latency_s=5e-6, topology="switch")
>>> system = SystemSpec(name="demo-8", chip=chip, chips=8, levels=[node], max_chips=64)
>>> system.with_chips(64).levels[-1].group_chips
64
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accelkb.errors import InputError

TierKind = Literal["sram", "hbm", "ddr", "streaming"]
Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"]
Topology = Literal["full", "switch", "torus", "ring", "dragonfly", "mesh"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


#: The least peak a chip spec may state: 1 FLOP/s (1e-300 underflowed to a division by zero).
MIN_PEAK_FLOPS = 1.0


class MemoryTierSpec(_Frozen):
    """One memory tier of one chip (SRAM on die, HBM, DDR, or IPU streaming memory)."""

    kind: TierKind = Field(description="tier kind: sram, hbm, ddr or streaming (off-chip DDR "
                           "reached through the host or gateway, as on IPU-POD)")
    capacity_bytes: float = Field(ge=0, description="capacity of this tier per chip, bytes")
    bandwidth_bytes_per_s: float = Field(
        gt=0, description="peak bandwidth between this tier and the chip's compute, per chip, "
        "bytes/s"
    )


class ChipSpec(_Frozen):
    """One accelerator chip: peak dense throughput per precision, memory tiers and power."""

    name: str = Field(description="short name of the chip, e.g. 'a100-sxm4-80gb'")
    peak_flops: dict[str, float] = Field(
        description="dense peak per precision, FLOP/s (OP/s for int8); keys among fp32, tf32, "
        "fp16, bf16, fp8, int8, fp4"
    )
    memory_tiers: list[MemoryTierSpec] = Field(
        description="memory tiers of one chip, fastest first (e.g. sram, hbm, ddr)"
    )
    tdp_watts: float | None = Field(default=None, gt=0,
                                    description="thermal design power per chip, W")
    vendor: str | None = Field(default=None, description="the vendor's short name in the "
                               "knowledge base (nvidia, graphcore, sambanova, groq, google, ...): "
                               "which validation rows an estimate's interval rests on")
    source_note: str = Field(default="", description="where the numbers come from (free text)")
    tiles: int | None = Field(default=None, ge=1, description="independent compute units that "
                              "share the on-chip exchange (IPU tiles); used with "
                              "exchange_bytes_per_s")
    exchange_bytes_per_s: float | None = Field(
        default=None, gt=0, description="aggregate on-chip exchange bandwidth of a bulk-"
        "synchronous chip, bytes/s: set only for chips whose compute and exchange phases "
        "alternate without overlap (Graphcore IPU); None for GPUs and streaming dataflow chips")
    deterministic: bool = Field(default=False, description="the compiler schedules every "
                                "instruction and chip-to-chip transfer ahead of time; nothing is "
                                "launched or arbitrated at run time (ak:DeterministicExecution: "
                                "Groq LPU); see accelkb.perf.execution.static")
    spatial_dataflow: bool = Field(default=False, description="the compiler fuses whole "
                                   "decoder layers into one pipeline across the chip's compute "
                                   "and memory units (ak:SpatialDataflow: SambaNova RDU, "
                                   "Cerebras WSE); see accelkb.perf.execution.dataflow")
    fused_attention_efficiency: float | None = Field(
        default=None, gt=0, le=1, description="fraction of the 16-bit peak a fused "
        "(FlashAttention-style) attention kernel reaches on this chip, as measured "
        "(ak:fusedAttentionEfficiency); None: the attention runs at the GEMMs' efficiency")
    achievable_matmul_fraction: dict[str, float] = Field(
        default_factory=dict, description="measured maximum achievable matmul FLOP/s over the "
        "dense peak, by precision ('bf16', 'fp8'): the best of a sweep of large shapes "
        "(ak:maxAchievableMatmulFlopsBf16 / Fp8 over the chip's peak); empty: not measured. A "
        "fraction, so a what-if on the peak moves what the matmuls reach with it")
    fuses_elementwise: bool = Field(default=False, description="the compiler fuses "
                                    "normalisation and activation into the adjacent matrix "
                                    "products, so they add no pass over memory "
                                    "(ak:WholeProgramCompilation: XLA on TPU)")
    execution: Literal["kernels", "compiled"] | None = Field(
        default=None, description="how programs run: 'kernels' launched one by one by a host "
        "framework (GPUs), or 'compiled' ahead of time into one static program (IPU, RDU, LPU; "
        "TPU, whose chips say ak:WholeProgramCompilation); None infers 'compiled' when the "
        "first memory tier is on-chip SRAM")

    def achievable_fraction(self, precision: str) -> float | None:
        """The measured maximum achievable matmul fraction of the dense peak at ``precision``,
        or None. FP16 and BF16 read the BF16 measurement; 8- and 4-bit precisions the FP8 one,
        or, where only BF16 was measured, the BF16 fraction (usually an upper bound: every chip
        measured at both but Gaudi 3 reaches less of its FP8 peak, H100 SXM 70.9 % against
        80.3 %). TF32 and FP32 have no measurement.

        >>> c = ChipSpec(name="x", peak_flops={"bf16": 1e15, "fp8": 2e15},
        ...              memory_tiers=[MemoryTierSpec(kind="hbm", capacity_bytes=1e9,
        ...                                           bandwidth_bytes_per_s=1e12)],
        ...              achievable_matmul_fraction={"bf16": 0.8})
        >>> c.achievable_fraction("bf16"), c.achievable_fraction("fp8"), c.achievable_fraction("tf32")
        (0.8, 0.8, None)
        """
        if precision in ("fp8", "int8", "fp4"):
            keys: tuple[str, ...] = ("fp8", "bf16")
        elif precision in ("fp16", "bf16"):
            keys = ("bf16",)
        else:
            return None
        return next((self.achievable_matmul_fraction[k] for k in keys
                     if k in self.achievable_matmul_fraction), None)

    @model_validator(mode="after")
    def _check(self) -> ChipSpec:
        allowed = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}
        bad = sorted(set(self.peak_flops) - allowed)
        if bad:
            raise ValueError(f"expected peak_flops keys among {sorted(allowed)}, got {bad}")
        if not self.peak_flops:
            raise ValueError("expected at least one peak_flops entry, got none")
        odd = {k: v for k, v in self.peak_flops.items() if not MIN_PEAK_FLOPS <= v < 1e30}
        if odd:  # 1e-300 divided by zero downstream (exit 70); NaN fails both comparisons
            raise ValueError(f"expected every peak_flops value between {MIN_PEAK_FLOPS:g} and "
                             f"1e30 FLOP/s, got {odd}")
        if any(not 0 < v <= 1 for v in self.achievable_matmul_fraction.values()):
            raise ValueError("expected achievable_matmul_fraction values in (0, 1], got "
                             f"{self.achievable_matmul_fraction}")
        if any(v <= 0 for v in self.peak_flops.values()):
            raise ValueError(f"expected positive peak_flops, got {self.peak_flops}")
        if not self.memory_tiers:
            raise ValueError("expected at least one memory tier, got none")
        return self

    @property
    def compiled(self) -> bool:
        """True for ahead-of-time compiled dataflow execution (no per-kernel launch cost)."""
        if self.execution is not None:
            return self.execution == "compiled"
        return self.spatial_dataflow or self.memory_tiers[0].kind == "sram"

    @property
    def bsp(self) -> tuple[int, float] | None:
        """(tiles, exchange bytes/s) of a bulk-synchronous chip, else None."""
        if self.tiles is None or self.exchange_bytes_per_s is None:
            return None
        return self.tiles, self.exchange_bytes_per_s

    def tier(self, kind: str) -> MemoryTierSpec | None:
        """Return the first tier of ``kind``, or None when the chip has none."""
        for t in self.memory_tiers:
            if t.kind == kind:
                return t
        return None


class NetworkLevelSpec(_Frozen):
    """One level of the interconnect hierarchy (node, pod, cluster), innermost first."""

    name: str = Field(description="name of the level, e.g. 'nvlink', 'infiniband', 'c2c'")
    group_chips: int = Field(
        ge=1, description="chips inside one group at this level (8 for a DGX node, 4 for an "
        "IPU-M2000, 8 for a GroqNode, all chips for the outermost level)"
    )
    bandwidth_bytes_per_s_per_chip: float = Field(
        gt=0, description="per direction, what one chip can inject at this level, bytes/s"
    )
    latency_s: float = Field(ge=0, description="latency per hop or message at this level, s")
    topology: Topology = Field(description="topology of this level")
    max_hops: int = Field(default=1, ge=1, description="largest hop count between two chips "
                          "of one group at this level (network diameter)")
    generator: str | None = Field(
        default=None, description="generator spec of this level's topology for schedule "
        "synthesis (accelkb.solver grammar, e.g. 'full:8', 'dragonfly:nodes=9'); its endpoints "
        "are the chips of one group. None: the level cannot be scheduled")
    scheduled: bool = Field(
        default=False, description="True when the compiler schedules every transfer of this "
        "level ahead of time (no run-time routing, arbitration or software synchronisation per "
        "step; ak:StaticNetworkScheduling in the knowledge base, e.g. Groq C2C)")
    link_bandwidth_bytes_per_s: float | None = Field(
        default=None, gt=0, description="bandwidth of one unit link of the generator topology, "
        "per direction, bytes/s: one step of a schedule moves one chunk over one unit link")
    library: Literal["nccl"] | None = Field(
        default=None, description="'nccl': a communication library launches this level's "
        "collectives at run time, and they are timed by NCCL's own cost model "
        "(accelkb.perf.execution.nccl; ak:RuntimeCollectiveLibrary on the chip in the knowledge base); "
        "None: the generic alpha-beta model with the fitted per-step latency")


class SystemSpec(_Frozen):
    """A system: ``chips`` copies of one chip joined by a hierarchy of network levels."""

    name: str = Field(description="short name of the system, e.g. 'dgx-a100-superpod'")
    chip: ChipSpec = Field(description="the chip every position holds")
    chips: int = Field(ge=1, description="number of chips in the system")
    levels: list[NetworkLevelSpec] = Field(description="network levels, innermost first")
    host_bandwidth_bytes_per_s_per_chip: float | None = Field(
        default=None, gt=0, description="host (CPU) link bandwidth per chip for offload, bytes/s"
    )
    power_watts_per_chip: float | None = Field(
        default=None, gt=0, description="full power (at full activity) per chip: the system's "
        "maximum power share per chip, including host and network where the figure does; None "
        "means use the chip's TDP"
    )
    power_basis: str | None = Field(
        default=None, description="where power_watts_per_chip comes from, e.g. "
        "'ak:maxPowerWatts of ipu-m2000: 1,500 W / 4 chips'"
    )
    average_watts_per_chip: float | None = Field(
        default=None, gt=0, description="a published average power under load per chip "
        "(ak:averagePowerWatts): the run's power when no full-power figure exists, not scaled "
        "by activity")
    average_basis: str | None = Field(default=None, description="where average_watts_per_chip "
                                      "comes from")
    max_chips: int | None = Field(
        default=None, ge=1, description="the most chips the outermost level joins (the whole "
        "system, before it was resized to fewer); None: ``chips``. :meth:`with_chips` resizes up "
        "to it and no further, so that a node's fabric is never stretched over chips it does not "
        "join")

    @model_validator(mode="after")
    def _check(self) -> SystemSpec:
        if not self.levels:
            raise ValueError("expected at least one network level, got none")
        if self.max_chips is not None and self.max_chips < self.chips:
            raise ValueError(f"expected max_chips >= chips ({self.chips}), got {self.max_chips}")
        groups = [lvl.group_chips for lvl in self.levels]
        if groups != sorted(groups) or groups[-1] != self.chips:
            # chips=1,000,000 over a level joining 8 was estimated as 8 chips with no word
            raise ValueError(f"expected levels whose group_chips grow from the innermost and "
                             f"whose outermost joins all {self.chips} chips, got group_chips "
                             f"{groups}")
        return self

    def with_chips(self, n: int) -> SystemSpec:
        """Return a copy of this system resized to ``n`` chips, at most :attr:`max_chips`.

        Levels whose group is at least as large as ``n`` are kept and the outermost of them is
        resized to ``n``. A system does not grow past the chips its outermost level joins: a
        DGX H100's NVLink joins 8 GPUs, so 64 of them need the InfiniBand level of a system
        that contains the node (``accelkb.perf.from_kb.system_spec`` finds it).

        Raises
        ------
        InputError
            If ``n`` is not a positive integer, or more than the outermost level joins.
        """
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise InputError(f"expected a positive chip count, got {n!r}")
        cap = self.max_chips or self.chips
        if n > cap:
            raise InputError(
                f"system {self.name}: its outermost network level ({self.levels[-1].name}) joins "
                f"at most {cap} chips, got a request for {n}. Name a larger system of the "
                "knowledge base that contains it, or give a system file whose levels and "
                f"max_chips hold {n} chips")
        kept: list[NetworkLevelSpec] = []
        for i, lvl in enumerate(self.levels):
            if lvl.group_chips >= n:
                kept.append(lvl.model_copy(update={"group_chips": n}))
                if i < len(self.levels) - 1:  # the levels above are dropped: this one is outermost
                    cap = lvl.group_chips
                break
            kept.append(lvl)
        else:
            kept[-1] = kept[-1].model_copy(update={"group_chips": n})
        return self.model_copy(update={"chips": n, "levels": kept, "max_chips": cap})

    @property
    def watts_per_chip(self) -> float | None:
        """Full power per chip: the system's share per chip if known, else the chip TDP, else
        None."""
        return self.power_watts_per_chip if self.power_watts_per_chip is not None \
            else self.chip.tdp_watts

    @property
    def watts_basis(self) -> str | None:
        """Which figure :attr:`watts_per_chip` is, in words; None when there is none."""
        if self.power_watts_per_chip is not None:
            return self.power_basis or "the system's power_watts_per_chip"
        if self.chip.tdp_watts is not None:
            return f"ak:tdpWatts of {self.chip.name} (no system full-power figure)"
        return None


class ModelSpec(_Frozen):
    """A decoder-only transformer shape (GPT, Llama) or encoder (BERT) for estimates."""

    name: str = Field(description="short name of the model, e.g. 'gpt3-175b'")
    layers: int = Field(ge=1, description="number of transformer layers")
    hidden: int = Field(ge=1, description="hidden size h")
    heads: int = Field(ge=1, description="attention (query) heads a")
    kv_heads: int = Field(ge=1, description="key/value heads (grouped-query attention); = heads "
                          "for multi-head attention")
    ffn_hidden: int = Field(ge=1, description="MLP inner size (per branch for a gated MLP)")
    vocab: int = Field(ge=1, description="vocabulary size V")
    seq_len: int = Field(ge=1, description="training/context sequence length s")
    gated_mlp: bool = Field(description="True for a gated MLP (SwiGLU: three matrices), False "
                            "for a plain two-matrix MLP")
    tied_embeddings: bool = Field(default=False, description="output layer shares the input "
                                  "embedding matrix")
    head_dim: int | None = Field(
        default=None, ge=1, description="size of one attention head when it is not hidden / "
        "heads (GPT-3 XL: 24 heads of 128 on a 2048 hidden size, Brown et al. 2020 Table 2.1); "
        "the q and o projections are then heads x head_dim wide, k and v kv_heads x head_dim. "
        "None: hidden / heads")

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        if self.head_dim is None and self.hidden % self.heads:
            raise ValueError(f"expected hidden divisible by heads, or an explicit head_dim, got "
                             f"hidden={self.hidden}, heads={self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"expected heads divisible by kv_heads, got heads={self.heads}, "
                             f"kv_heads={self.kv_heads}")
        return self

    @property
    def head_size(self) -> int:
        """Size of one attention head: ``head_dim`` if given, else hidden / heads.

        Examples
        --------
        >>> xl = ModelSpec(name="gpt3-xl", layers=24, hidden=2048, heads=24, kv_heads=24,
        ...                ffn_hidden=8192, vocab=50257, seq_len=2048, gated_mlp=False,
        ...                head_dim=128)
        >>> xl.head_size, xl.q_dim
        (128, 3072)
        """
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def q_dim(self) -> int:
        """Width of the query (and attention output) projection: heads x head size."""
        return self.heads * self.head_size


def check_tensor_parallel(model: ModelSpec, tp: int) -> None:
    """Check that ``tp`` splits the attention heads evenly.

    ``tp`` must divide the query heads; key/value heads are split when ``tp`` divides them and
    replicated when ``tp`` is a multiple of them (grouped-query attention beyond its groups).

    Raises
    ------
    InputError
        With the head counts and ``tp`` when it does not.
    """
    if model.heads % tp:
        raise InputError(f"expected tp to divide the {model.heads} attention heads of "
                         f"'{model.name}', got tp={tp}")
    if model.kv_heads % tp and tp % model.kv_heads:
        raise InputError(f"expected tp to divide the {model.kv_heads} key/value heads of "
                         f"'{model.name}' (or be a multiple of them, replicating each), got "
                         f"tp={tp}")
