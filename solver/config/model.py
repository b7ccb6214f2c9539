"""Typed inputs and outputs of the configuration solver (pydantic, frozen, no extra fields).

A :class:`ConfigRequest` names the workload (model, phase, batch), the system and the user's
constraints; :func:`accelkb.solver.config.api.configure` answers with a :class:`ConfigResult`
whose ``status`` is one of OPTIMAL, FEASIBLE, UNSATISFIABLE, UNKNOWN (timeout) or ERROR.

Examples
--------
>>> req = ConfigRequest(model="gpt3-175b", system="dgx-a100-superpod", chips=1024,
...                     global_batch=1536)
>>> req.objective, req.phase
('time', 'training')
>>> Layout(tp=8, pp=16, dp=8, micro_batch=1).text()
'tp=8,pp=16,dp=8,mb=1,v=1,recompute=none,sp=0,zero=0,precision=bf16,offload=0,batch=1,pipelined=0'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from accelkb.solver.status import Status

Objective = Literal["time", "throughput", "energy", "chips"]
Phase = Literal["training", "inference"]
__all__ = ["ConfigRequest", "ConfigResult", "ConstraintInfo", "Layout", "Reason", "Scored",
           "Status", "UserConstraints"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UserConstraints(_Frozen):
    """Limits the user puts on the answer (all optional)."""

    max_chips: int | None = Field(default=None, ge=1, description="use at most this many chips")
    max_tp: int | None = Field(default=None, ge=1, description="largest tensor-parallel degree "
                               "(e.g. the chips of one node)")
    sram_only: bool = Field(default=False, description="everything must fit in on-chip SRAM")
    time_budget_s: float | None = Field(default=None, gt=0, description="training: step time "
                                        "limit; inference: per-token decode latency limit, s")
    min_tokens_per_s: float | None = Field(default=None, gt=0, description="throughput target, "
                                           "tokens/s over all chips used")
    precisions: tuple[Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"], ...] | None = Field(
        default=None, description="allowed precisions (None: the chip's 16-bit format)")


class ConfigRequest(_Frozen):
    """What to configure: a model in a phase on a system, with an objective and limits."""

    model: str = Field(description="knowledge-base model name or JSON model file")
    system: str = Field(description="knowledge-base system name or JSON system file")
    phase: Phase = Field(default="training", description="training or inference")
    chips: int | None = Field(default=None, ge=1, description="chips available (None: the "
                              "system's)")
    global_batch: int | None = Field(default=None, ge=1, description="training: sequences per "
                                     "step (None: 512)")
    batches: tuple[int, ...] = Field(default=(1, 8, 32, 64), description="inference: candidate "
                                     "concurrent sequences")
    prompt_len: int = Field(default=512, ge=1, description="inference: prompt tokens")
    output_len: int = Field(default=512, ge=1, description="inference: generated tokens")
    seq_len: int | None = Field(default=None, ge=1, description="training sequence length "
                                "(None: the model's)")
    objective: Objective = Field(default="time", description="time (step or token latency), "
                                 "throughput (tokens/s), energy (J/token) or chips (fewest)")
    constraints: UserConstraints = Field(default_factory=UserConstraints,
                                         description="the user's limits")
    timeout_s: float = Field(default=60.0, gt=0, le=7 * 86400.0, allow_inf_nan=False,
                             description="solver time limit, s (at most a week: Z3 holds it "
                             "in 32-bit milliseconds)")


class Layout(_Frozen):
    """One configuration: parallel degrees, batching, memory options and precision."""

    tp: int = Field(description="tensor-parallel degree")
    pp: int = Field(description="pipeline stages")
    dp: int = Field(description="data-parallel degree (inference: independent replicas)")
    micro_batch: int = Field(default=1, description="training: sequences per micro-batch")
    interleave: int = Field(default=1, description="model chunks per stage (interleaved 1F1B)")
    recompute: Literal["none", "selective", "full"] = Field(default="none",
                                                           description="activation recompute")
    sequence_parallel: bool = Field(default=False, description="sequence parallelism")
    zero: int = Field(default=0, description="ZeRO stage 0..3 (1 = RTS: sharded optimizer)")
    precision: str = Field(default="bf16", description="arithmetic and weight precision")
    offload_optimizer: bool = Field(default=False, description="optimizer state in the slowest "
                                    "memory tier")
    batch: int = Field(default=1, description="inference: concurrent sequences per replica")
    pipelined: bool = Field(default=False, description="inference: keep pp batches in flight")

    @property
    def chips(self) -> int:
        """Chips used, tp x pp x dp."""
        return self.tp * self.pp * self.dp

    def parallel(self, phase: str) -> str:
        """The layout as ``accelkb estimate PHASE --parallel`` takes it: the phase's own keys,
        with data-parallel communication overlapped in training, as the solver estimated it
        (:meth:`text` holds every key, and ``estimate training`` refuses batch and pipelined).

        >>> Layout(tp=8, pp=16, dp=8, micro_batch=1).parallel("training")
        'tp=8,pp=16,dp=8,mb=1,v=1,recompute=none,sp=0,zero=0,precision=bf16,offload=0,overlap=1'
        >>> Layout(tp=8, pp=2, batch=16).parallel("inference")
        'tp=8,pp=2,batch=16,precision=bf16,pipelined=0'
        """
        if phase == "training":
            return (f"tp={self.tp},pp={self.pp},dp={self.dp},mb={self.micro_batch},"
                    f"v={self.interleave},recompute={self.recompute},"
                    f"sp={int(self.sequence_parallel)},zero={self.zero},"
                    f"precision={self.precision},offload={int(self.offload_optimizer)},overlap=1")
        return (f"tp={self.tp},pp={self.pp},batch={self.batch},precision={self.precision},"
                f"pipelined={int(self.pipelined)}")

    def text(self) -> str:
        """The layout as ``key=value,...``, every key (what ``accelkb estimate --parallel``
        takes is :meth:`parallel`)."""
        return (f"tp={self.tp},pp={self.pp},dp={self.dp},mb={self.micro_batch},"
                f"v={self.interleave},recompute={self.recompute},"
                f"sp={int(self.sequence_parallel)},zero={self.zero},precision={self.precision},"
                f"offload={int(self.offload_optimizer)},batch={self.batch},"
                f"pipelined={int(self.pipelined)}")


class Scored(_Frozen):
    """A feasible layout with the performance module's estimates."""

    layout: Layout = Field(description="the configuration")
    chips: int = Field(description="chips used")
    time_s: float = Field(description="training step time or inference decode time per token, s")
    tokens_per_s: float = Field(description="tokens per second over all chips used")
    joules_per_token: float | None = Field(description="energy per token, J (None if unknown)")
    memory_per_chip_bytes: float = Field(description="bytes per chip, all tiers")
    memory_by_tier_bytes: dict[str, float] = Field(description="bytes per chip per tier")
    objective_value: float = Field(description="value of the objective for this layout")


class ConstraintInfo(_Frozen):
    """A declared constraint as the knowledge base states it."""

    iri: str = Field(description="IRI of the ak:Constraint")
    key: str = Field(description="the constraint's key in the encoding")
    title: str = Field(description="rdfs:label of the constraint")
    rationale: str = Field(description="why it holds")
    sources: tuple[str, ...] = Field(description="source IRIs (dcterms:source)")


class Reason(_Frozen):
    """One constraint of a minimal infeasible set, in domain words with numbers."""

    constraint: ConstraintInfo = Field(description="the declared constraint")
    message: str = Field(description="what it demands here, with numbers from the knowledge "
                         "base and the performance module")
    numbers: dict[str, float] = Field(description="the numbers quoted in the message")


class ConfigResult(_Frozen):
    """Outcome of :func:`configure`: best layout, Pareto front or the reasons it cannot run."""

    status: Status = Field(description="OPTIMAL, FEASIBLE, UNSATISFIABLE, UNKNOWN or ERROR")
    model: str = Field(description="model name")
    system: str = Field(description="system name")
    phase: Phase = Field(description="training or inference")
    chips_available: int | None = Field(description="chips of the system considered")
    objective: Objective = Field(description="what was optimised")
    global_batch: int | None = Field(default=None, description="training: the global batch "
                                     "the layouts were sized for")
    best: Scored | None = Field(default=None, description="the optimum (OPTIMAL) or best found")
    pareto: list[Scored] = Field(default_factory=list, description="layouts not dominated in "
                                 "(time, memory per chip, chips), sorted by time")
    feasible_count: int = Field(default=0, description="feasible layouts enumerated by Z3")
    explanation: list[Reason] = Field(default_factory=list, description="UNSATISFIABLE: a "
                                      "minimal set of constraints that cannot hold together")
    message: str = Field(default="", description="summary or, for ERROR/UNKNOWN, what happened")
    method: str = Field(default="", description="how the answer was computed")
    solve_time_s: float = Field(default=0.0, description="wall time of the solve, s")
    constraints_used: list[str] = Field(default_factory=list, description="IRIs of the "
                                        "constraints encoded for this instance")
