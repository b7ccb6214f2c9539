"""Validation against published measurements: collectives, inference, MLPerf ordering, MPT.

See :mod:`accelkb.perf.validation.training` for the row and file result types.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from accelkb.errors import InputError
from accelkb.perf.calibration import Calibration
from accelkb.perf.collectives import collective_time
from accelkb.perf.dense import DenseWorkload, bottleneck_resnet_gemms, estimate_dense_training
from accelkb.perf.inference import InferenceConfig, InferenceEstimate
from accelkb.perf.inference import estimate as infer_estimate
from accelkb.perf.shapes import total_params
from accelkb.perf.specs import ChipSpec, ModelSpec
from accelkb.perf.training import TrainingConfig
from accelkb.perf.training import estimate as train_estimate
from accelkb.perf.validation.mlperf_samples import samples_to_train
from accelkb.perf.validation.residuals import THIRD_PARTY
from accelkb.perf.validation.training import FileResult, Row, SystemResolver, cached, known_models, read_rows

NCCL = "nccl_allreduce_single_node_a100_v100.csv"


def nccl_points(step: int = 1) -> list[tuple[int, int, float]]:
    """(gpus, bytes, measured seconds) of the A100 all-reduce rows (every ``step``-th size)."""
    out = []
    for i, r in enumerate(read_rows(NCCL)):
        if r["gpu"] != "A100" or i % step:
            continue
        secs = float(r["time_us_outofplace"]) * 1e-6
        out.append((int(r["num_gpus"]), int(r["size_bytes"]), secs))
    return out


def check_nccl(systems: SystemResolver, cal: Calibration, step: int = 16) -> FileResult:
    """nccl-tests all-reduce on one DGX A100 node (2-8 GPUs, 1 MB-1 GB): predicted time."""
    systems = cached(systems)
    res = FileResult(NCCL, "all-reduce time (us), A100")
    node = systems("dgx-a100", 8)
    for n, size, t in nccl_points(step):
        pred = collective_time("all_reduce", float(size), n, node.levels, cal)
        res.rows.append(Row(f"{n} GPUs {size / 2**20:.0f} MiB", t * 1e6, pred * 1e6))
    return res


ARGONNE = "llm_inference_bench_argonne_70b.csv"
# Argonne's GPU nodes: Polaris has 4 x A100-SXM4-40GB per node; the H100 rows are SXM5 80 GB;
# the MI300X rows are 192 GB OAM modules of an 8-GPU platform.
_HW = {"Nvidia A100 GPU": "dgx-a100-320gb", "Nvidia H100 GPU": "dgx-h100"}
_HW_AMD = {"AMD MI300X GPU": "mi300x-platform"}
_MODELS = {"meta-llama/Llama-2-70b-hf": "llama2-70b", "meta-llama/Meta-Llama-3-70B": "llama3-70b",
           "Qwen/Qwen2-72B": "qwen2-72b"}
_FRAMEWORKS = {"vLLM", "TensorRT-LLM", "Deepspeed-MII"}
#: Serving engines whose documented memory default differs from the model's budget
#: (``serving_memory_fraction`` x capacity - ``serving_reserve_bytes``): engine -> (fraction,
#: reserve bytes). DeepSpeed-MII (FastGen, DeepSpeed inference v2) sizes its KV cache from
#: the free memory and keeps 1 GB back: ``MemoryConfig`` mode RESERVE, size 1_000_000_000
#: (microsoft/DeepSpeed deepspeed/inference/v2/ragged/manager_configs.py).
ENGINE_MEMORY = {"Deepspeed-MII": (1.0, 1e9)}


def check_gpu_inference(systems: SystemResolver, cal: Calibration,
                        vendor: str = "nvidia") -> FileResult:
    """Argonne LLM-Inference-Bench on NVIDIA GPUs (or, with ``vendor="amd"``, AMD MI300X GPUs):
    request latency (prefill + decode), 16-bit.

    Rows on hardware the knowledge base does not describe and llama.cpp rows (quantised GGUF
    kernels, a different precision) are skipped with the reason. Serving engines queue requests
    whose KV cache does not fit, so the batch runs in waves (``queue_when_full``). The serving
    constant (``graph_op_overhead_s``) is fitted on the NVIDIA rows only: the AMD rows are held
    out, and say how far NVIDIA's constants carry to another vendor's chip and software. The
    KV-cache budget is vLLM's form (``serving_memory_fraction``, ``serving_reserve_bytes``)
    except where an engine documents another default (:data:`ENGINE_MEMORY`).
    """
    systems = cached(systems)
    hw = _HW if vendor == "nvidia" else _HW_AMD
    res = FileResult(ARGONNE, "request latency (s), NVIDIA GPUs" if vendor == "nvidia"
                     else "request latency (s), AMD MI300X GPUs (held out)")
    models = known_models()
    for r in read_rows(ARGONNE):
        label = f"{r['Hardware']} x{r['Num of Hardware']} {r['Framework']} {r['Model']} " \
            f"io{r['Input Output Length']} b{r['Batch Size']}"
        if r["Hardware"] not in hw or r["Framework"] not in _FRAMEWORKS:
            res.skipped.append(f"{label}: hardware or framework not modelled")
            continue
        n, io, b = int(r["Num of Hardware"]), int(r["Input Output Length"]), int(r["Batch Size"])
        cfg = InferenceConfig(tp=n, batch=b, prompt_len=io, output_len=io, queue_when_full=True)
        model = models[_MODELS[r["Model"]]]
        engine = cal
        if r["Framework"] in ENGINE_MEMORY:
            fraction, reserve = ENGINE_MEMORY[r["Framework"]]
            engine = cal.model_copy(update={"serving_memory_fraction": fraction,
                                            "serving_reserve_bytes": reserve})
        try:
            system = systems(hw[r["Hardware"]], n)
            est = infer_estimate(model, system, cfg, engine)
        except InputError as exc:
            res.skipped.append(f"{label}: {exc}")
            continue
        floor = decode_floor_s(model, system.chip, n, io)
        if float(r["Latency"]) < floor:
            res.skipped.append(
                f"{label}: measured {float(r['Latency']):.3g} s is below the physical floor of "
                f"{floor:.3g} s (each of the {io} decode steps reads the 16-bit weights, "
                f"{total_params(model) * 2 / n / 1e9:.1f} GB per GPU, at the HBM's peak "
                "bandwidth): not a measurement the model can be checked on")
            continue
        res.rows.append(Row(label, float(r["Latency"]), est.request_latency_s))
    return res


def decode_floor_s(model: ModelSpec, chip: ChipSpec, tp: int, output_len: int) -> float:
    """Least time in which ``output_len`` decode steps of ``model`` can run on ``tp`` chips:
    each step reads every 16-bit weight once, at the first memory tier's peak bandwidth (no
    efficiency, no compute, no communication). A measured request faster than this is a
    recording error, not a speed.

    >>> from accelkb.perf.specs import ChipSpec, MemoryTierSpec, ModelSpec
    >>> m = ModelSpec(name="m", layers=1, hidden=64, heads=1, kv_heads=1, ffn_hidden=256,
    ...               vocab=10, seq_len=8, gated_mlp=False)
    >>> c = ChipSpec(name="c", peak_flops={"bf16": 1e12}, memory_tiers=[MemoryTierSpec(
    ...     kind="hbm", capacity_bytes=1e9, bandwidth_bytes_per_s=1e9)])
    >>> round(decode_floor_s(m, c, 1, 10) * 1e3, 3)  # 10 steps x 2 B x params / 1 GB/s
    1.038
    """
    return output_len * total_params(model) * 2.0 / tp / chip.memory_tiers[0].bandwidth_bytes_per_s


LLMPERF_GROQ = "llmperf_groq_llama2_70b.csv"


def groq_llmperf_decode(r: dict[str, str]) -> float:
    """Decode-only time per token of an LLMPerf summary row: (end-to-end - TTFT) / (output - 1)."""
    return (float(r["end_to_end_s"]) - float(r["ttft_s"])) / (int(r["output_tokens"]) - 1)


def check_groq_llmperf(systems: SystemResolver, cal: Calibration) -> FileResult:
    """LLMPerf on GroqCloud, Llama-2 70B (2024-01-10): the median decode time per token
    against groq-576 (tensor parallel 8 x pipeline 72, INT8, collectives from collision-free
    schedules). ``deterministic_feed_efficiency`` and ``deterministic_op_latency_s`` are fitted
    on it and on Artificial Analysis' Llama-3.1 8B rate (:func:`check_vendor_claims`), so its
    error here is small by construction; Artificial Analysis' 70B rates (Llama 2, 3.1, 3.3)
    and the Groq claims are the held-out check."""
    systems = cached(systems)
    res = FileResult(LLMPERF_GROQ, "decode time per token (s), Groq")
    model = known_models()["llama2-70b"]
    for r in read_rows(LLMPERF_GROQ):
        if r["quantile"] != "p50":
            continue
        cfg = InferenceConfig(tp=8, pp=72, batch=1, prompt_len=int(r["input_tokens"]),
                              output_len=int(r["output_tokens"]), precision="int8")
        est = infer_estimate(model, systems("groq-576", 576), cfg, cal)
        res.rows.append(Row(f"LLMPerf Groq {r['model']} {r['input_tokens']}/"
                            f"{r['output_tokens']} median ({r['date']})",
                            groq_llmperf_decode(r), est.decode_s_per_token))
    return res


SN40L = "llm_inference_bench_argonne_sn40l.csv"
_SN40L_MODELS = {"mistralai/Mistral-7B-v0.1": "mistral-7b", "meta-llama/Meta-Llama-3-8B": "llama3-8b",
                 "meta-llama/Llama-2-7b-hf": "llama2-7b", "meta-llama/Meta-Llama-3-70B": "llama3-70b"}
#: The rows fitted on (dataflow_section_s); the other models are held out.
SN40L_FIT_MODELS = ("mistralai/Mistral-7B-v0.1", "meta-llama/Meta-Llama-3-8B")


def check_sn40l_inference(systems: SystemResolver, cal: Calibration,
                          models: tuple[str, ...] | None = None) -> FileResult:
    """Argonne LLM-Inference-Bench on 8 SambaNova SN40L sockets (SambaFlow, 16-bit): request
    latency, prefill + decode, tensor parallel over the 8 sockets. ``models`` keeps only those
    rows (None: every row); :data:`SN40L_FIT_MODELS` are the rows ``dataflow_section_s`` was
    fitted on, the others are held out."""
    systems = cached(systems)
    res = FileResult(SN40L, "request latency (s), SambaNova SN40L" + (
        "" if models is None else f" ({', '.join(m.split('/')[-1] for m in models)})"))
    known = known_models()
    for r in read_rows(SN40L):
        if models is not None and r["Model"] not in models:
            continue
        n, io, b = int(r["Num of Hardware"]), int(r["Input Output Length"]), int(r["Batch Size"])
        label = f"SN40L x{n} {r['Model']} io{io} b{b}"
        cfg = InferenceConfig(tp=n, batch=b, prompt_len=io, output_len=io, queue_when_full=True)
        try:
            est = infer_estimate(known[_SN40L_MODELS[r["Model"]]], systems("sn40l-node", n),
                                 cfg, cal)
        except (InputError, KeyError) as exc:
            res.skipped.append(f"{label}: {exc}")
            continue
        res.rows.append(Row(label, float(r["Latency"]), est.request_latency_s))
    return res


MLPERF = "mlperf_training_ipu_vs_dgx_bert_resnet.csv"
#: Graphcore system name in the results table -> (name in the ratios, knowledge-base system,
#: chips); a Bow Pod128 is two Bow Pod64 racks joined by GW-Links, the Bow Pod256 cut in half
_IPU_SYSTEMS = {f"IPU-POD{n}": (f"ipu-pod{n}", f"ipu-pod{n}", n) for n in (16, 64, 128, 256)} | {
    f"Bow Pod{n}": (f"bow-pod{n}", "bow-pod256" if n == 128 else f"bow-pod{n}", n)
    for n in (16, 64, 128, 256)}
#: The same for the BERT rows, with NVIDIA's one-DGX-A100 submissions of each round.
_MLPERF_SYSTEMS = _IPU_SYSTEMS | {f"dgxa100_ngc{v}_pytorch": ("dgx-a100", "dgx-a100", 8)
                                  for v in ("21.05", "21.09", "22.04")}


def _submissions() -> dict[str, dict[str, object]]:
    text = resources.files("accelkb.perf").joinpath("data/mlperf_submissions.json").read_text()
    data: dict[str, dict[str, object]] = json.loads(text)
    return data


def _samples(benchmark: str, rnd: str, name: str) -> float | None:
    """Mean samples to train of one submission from its logs (:mod:`.mlperf_samples`)."""
    found = samples_to_train(benchmark, rnd, name)
    return None if found is None else found.samples


def check_mlperf_bert(systems: SystemResolver, cal: Calibration) -> FileResult:
    """MLPerf BERT closed division: ratio of time-to-train of each IPU-POD to one DGX A100.

    Predicted time-to-train is samples-to-train (from the submissions' logs where read, else
    equal on both sides) over modelled throughput. Layouts follow the submissions
    (``perf/data/mlperf_submissions.json``): Graphcore packs two sequences per 512-token pack and
    pipelines its replicas with the published layers per IPU (the slowest stage sets the pace,
    the output layer on the last stage),
    RTS, 16-bit gradients; NVIDIA removes padding (about 256 tokens per sequence). The IPU's
    exchange phases come from the chip's exchange bandwidth (:mod:`accelkb.perf.compute`).
    v2.0 ran Bow IPUs with its own layout (``by_round``: 8 pipeline stages, 3 packs per
    micro-batch); nothing is fitted on those rows.
    """
    systems = cached(systems)
    res = FileResult(MLPERF, "BERT time-to-train ratio IPU-POD / DGX A100 (x)")
    bert = known_models()["bert-large"]
    sub = _submissions()["bert"]
    ipu, gpu = sub["ipu"], sub["gpu"]
    assert isinstance(ipu, dict) and isinstance(gpu, dict)
    rows = [r for r in read_rows(MLPERF) if r["benchmark"] == "bert"
            and r["system_dir"].endswith("closed") or (r["benchmark"] == "bert" and
                                                      r["submitter"] == "NVIDIA")]
    by_round: dict[str, dict[str, _Entry]] = {}
    by_layout: dict[str, dict[str, Any]] = ipu.get("by_round", {})
    for r in rows:
        if r["system_name"] not in _MLPERF_SYSTEMS or not r["time_to_train_minutes"]:
            continue
        name, kb_name, chips = _MLPERF_SYSTEMS[r["system_name"]]
        gbs = int(r["global_batch_size"])
        try:
            if name.startswith(("ipu", "bow")):
                lay = {**ipu, **by_layout.get(r["mlperf_round"], {})}
                stages = tuple(lay["stage_layers"][str(chips)])
                pp, packs = len(stages), gbs // int(lay["seq_per_pack"])
                cfg = TrainingConfig(tp=1, pp=pp, dp=chips // pp,
                                     micro_batch=int(lay["micro_batch_packs"]),
                                     global_batch=packs, recompute=str(lay["recompute"]),  # type: ignore[arg-type]
                                     rts=True, precision="fp16", grad_bytes=2,
                                     stage_layers=stages)
            else:
                cfg = TrainingConfig(tp=1, pp=1, dp=chips, micro_batch=gbs // chips,
                                     global_batch=gbs, precision="bf16", fused_attention=True,
                                     seq_len=int(gpu["unpadded_tokens_per_sequence"]))
            est = train_estimate(bert, systems(kb_name, chips), cfg, cal)
        except (InputError, KeyError) as exc:
            res.skipped.append(f"{r['system_name']}: {exc}")
            continue
        per_sample = est.step_time_s / gbs
        by_round.setdefault(r["mlperf_round"], {})[name] = (
            float(r["time_to_train_minutes"]), per_sample,
            _samples("bert", r["mlperf_round"], name))
    _ratio_rows(res, by_round)
    return res


_Entry = tuple[float, float, float | None]  # measured minutes, predicted s/sample, samples


def _ratio_rows(res: FileResult, by_round: dict[str, dict[str, _Entry]]) -> None:
    """Rows of IPU-POD / DGX A100 ratios: measured time-to-train against predicted time per
    sample x samples to train (equal samples, said in the label, where the logs were not read)."""
    for rnd, d in sorted(by_round.items()):
        if "dgx-a100" not in d:
            continue
        ref = d["dgx-a100"]
        for name in ("ipu-pod16", "ipu-pod64", "ipu-pod128", "ipu-pod256",
                     "bow-pod16", "bow-pod64", "bow-pod128", "bow-pod256"):
            if name not in d:
                continue
            cur = d[name]
            ratio = cur[1] / ref[1]
            label = f"{rnd} {name} / dgx-a100"
            if cur[2] is not None and ref[2] is not None:
                ratio *= cur[2] / ref[2]
            else:
                label += " (equal samples)"
            res.rows.append(Row(label, cur[0] / ref[0], ratio))


POWER = "llm_inference_bench_argonne_power.csv"
_POWER_MODELS = {"meta-llama/Llama-2-7b-hf": "llama2-7b", "meta-llama/Meta-Llama-3-8B": "llama3-8b"}


def check_power(systems: SystemResolver, cal: Calibration) -> FileResult:
    """Argonne measured average GPU power (mW in the source) during a batch of requests.

    The measurement is the GPU board only, so the prediction uses the chip TDP rather than the
    system's wall-power share: ``TDP x (idle + (1 - idle) x activity)`` with the decode activity.
    """
    systems = cached(systems)
    res = FileResult(POWER, "average GPU power (W)")
    models = known_models()
    for r in read_rows(POWER):
        label = f"{r['Hardware']} {r['Framework']} {r['Model']} b{r['Batch Size']}"
        if r["Hardware"] not in _HW or r["Model"] not in _POWER_MODELS:
            res.skipped.append(f"{label}: hardware or model not modelled")
            continue
        n, io, b = int(r["Num of Hardware"]), int(r["Input Output Length"]), int(r["Batch Size"])
        system = systems(_HW[r["Hardware"]], n)
        cfg = InferenceConfig(tp=n, batch=b, prompt_len=io, output_len=io, queue_when_full=True)
        est = infer_estimate(models[_POWER_MODELS[r["Model"]]], system, cfg, cal)
        tdp = system.chip.tdp_watts
        if tdp is None:
            res.skipped.append(f"{label}: chip has no TDP")
            continue
        watts = n * tdp * (cal.idle_power_fraction + (1 - cal.idle_power_fraction) * est.activity)
        res.rows.append(Row(label, float(r["avg_power"]) / 1000.0, watts))
    return res


def _resnet() -> DenseWorkload:
    text = resources.files("accelkb.perf").joinpath("data/validation_models.json").read_text()
    d = json.loads(text)["resnet50"]
    gemms = bottleneck_resnet_gemms(tuple(d["bottleneck_blocks"])) \
        if "bottleneck_blocks" in d else ()
    return DenseWorkload(name="resnet50", params=d["params"], layers=d["layers"],
                         flops_per_sample_forward=d["flops_per_sample_forward"], gemms=gemms)


def check_mlperf_resnet(systems: SystemResolver, cal: Calibration) -> FileResult:
    """MLPerf ResNet-50 closed division: time-to-train ratio of each IPU-POD to one DGX A100,
    from the data-parallel throughput at each submission's global batch and micro-batch (IPU:
    20 images per IPU with recomputation, as submitted; v2.0's Bow Pod16 22) times the epochs
    each trained. v1.0 and v1.1 ran GC200 IPUs, v2.0 Bow IPUs (its system JSONs), so the v2.0
    rows are checked on the Bow Pods of the knowledge base; nothing is fitted on them."""
    systems = cached(systems)
    res = FileResult(MLPERF, "ResNet-50 time-to-train ratio IPU-POD / DGX A100 (x)")
    work = _resnet()
    sub = _submissions()["resnet"]
    ipu = sub["ipu"]
    assert isinstance(ipu, dict)
    mb_by_round: dict[str, dict[str, int]] = ipu.get("micro_batch_by_round", {})
    names = _IPU_SYSTEMS | {f"dgxa100_ngc{v}_mxnet": ("dgx-a100", "dgx-a100", 8)
                            for v in ("21.05", "21.09", "22.04")}
    by_round: dict[str, dict[str, _Entry]] = {}
    for r in read_rows(MLPERF):
        if r["benchmark"] != "resnet" or r["system_name"] not in names \
                or not r["time_to_train_minutes"] or r["division"] != "closed":
            continue
        name, kb_name, chips = names[r["system_name"]]
        gbs = int(r["global_batch_size"])
        try:
            if name.startswith(("ipu", "bow")):
                mb = mb_by_round.get(r["mlperf_round"], {}).get(str(chips)) \
                    or int(ipu["micro_batch"])
                est = estimate_dense_training(work, systems(kb_name, chips), chips, gbs, cal,
                                              recompute=bool(ipu["recompute"]),
                                              micro_batch=mb)
            else:
                est = estimate_dense_training(work, systems(kb_name, chips), chips, gbs, cal)
        except (InputError, KeyError) as exc:
            res.skipped.append(f"{r['system_name']}: {exc}")
            continue
        by_round.setdefault(r["mlperf_round"], {})[name] = (
            float(r["time_to_train_minutes"]), 1.0 / est.samples_per_s,
            _samples("resnet", r["mlperf_round"], name))
    _ratio_rows(res, by_round)
    return res


CLAIMS = "llm_inference_vendor_claims.csv"


def _groq_fitting(model: ModelSpec, systems: SystemResolver, cal: Calibration
                  ) -> InferenceEstimate:
    """Groq's layout for a model: 8-chip tensor parallel inside a node (its 7 local links), and
    the fewest pipeline stages whose SRAM holds the INT8 weights (as Llama-2 70B's 72 stages on
    576 chips), on Groq's Dragonfly system cut to that size; decode time barely depends on the
    stage count (each stage feeds its own weights)."""
    last: InputError | None = None
    for pp in range(1, model.layers + 1):
        try:
            return infer_estimate(model, systems("groq-dragonfly-max", 8 * pp),
                                  InferenceConfig(tp=8, pp=pp, batch=1, prompt_len=512,
                                                  output_len=512, precision="int8"), cal)
        except InputError as exc:
            last = exc
    raise last or InputError(f"expected {model.name} to fit {8 * model.layers} Groq chips")


def check_vendor_claims(systems: SystemResolver, cal: Calibration) -> FileResult:
    """Per-user decode speed from llm_inference_vendor_claims.csv: vendor claims, and the rows
    that Artificial Analysis measured on the vendors' public APIs (quoted by SambaNova's blog,
    and two Groq rows quoted by Groq itself, read only in secondary texts: low confidence),
    which are labelled :data:`THIRD_PARTY` and count as measurements. Groq: Llama-2 70B on 576
    LPUs (INT8, 8-chip tensor parallel x 72 pipeline stages); Llama-3.1 8B at the fewest stages
    that hold it (:func:`_groq_fitting`; Groq publishes no chip count for it); Llama-3.1 and
    3.3 70B as Llama-2 70B on the same 576 chips (Groq publishes no chip count; with its 128k
    vocabulary the model's first stage, embedding plus a layer, does not fit 8 chips' SRAM, and
    the larger vocabulary is 1.5 % of the weights a token reads);
    SambaNova Llama-3/3.1 8B on 16 SN40L sockets (BF16, tensor parallel over 16: the SN40L
    paper's Table IV measures on 16 sockets). SambaNova's 70B and 405B figures are skipped: the
    SN40L paper (arXiv:2405.07518 v2, §VI-B) says they use speculative decoding, which the model
    does not estimate."""
    systems = cached(systems)
    res = FileResult(CLAIMS, "CLAIMED output tokens/s per user (and third-party measurements)")
    models = known_models()
    for r in read_rows(CLAIMS):
        if r["metric"] != "output speed per user":
            continue
        label = f"{r['vendor']} {r['system']} {r['model']} ({r['date']})"
        # Artificial Analysis' own figure, whoever quotes it (the confidence column says how
        # directly it was read); not press reports that a verification took place
        if "artificialanalysis.ai" in r["source"]:
            label += f" {THIRD_PARTY}"
        try:
            if r["vendor"] == "Groq" and "8B" in r["model"]:
                est = _groq_fitting(models["llama3-8b"], systems, cal)
            elif r["vendor"] == "Groq" and "70B" in r["model"]:  # Llama-3.x 70B too, see above
                est = infer_estimate(models["llama2-70b"], systems("groq-576", 576),
                                     InferenceConfig(tp=8, pp=72, batch=1, prompt_len=512,
                                                     output_len=512, precision="int8"), cal)
            elif r["vendor"] == "SambaNova" and ("70B" in r["model"] or "405B" in r["model"]):
                res.skipped.append(f"{label}: speculative decoding (SN40L paper §VI-B), not "
                                   "modelled")
                continue
            elif r["vendor"] == "SambaNova" and "8B" in r["model"]:
                est = infer_estimate(models["llama3-8b"], systems("sambarack-sn40l-16", 16),
                                     InferenceConfig(tp=16, batch=1, prompt_len=512,
                                                     output_len=512, precision="bf16"), cal)
            else:
                res.skipped.append(f"{label}: system not in the knowledge base")
                continue
        except (InputError, KeyError) as exc:
            res.skipped.append(f"{label}: {exc}")
            continue
        res.rows.append(Row(label, float(r["value"]), est.tokens_per_s_per_user))
    return res
