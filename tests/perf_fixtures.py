"""Explicit hardware specs for the perf tests (numbers from the vendors' datasheets).

They let the perf tests run without the knowledge-base adapter; the validation tests prefer
``accelkb.perf.from_kb`` when it is installed. Other perf tests import the builders from here.
"""

from __future__ import annotations

from accelkb.perf.specs import (
    ChipSpec,
    MemoryTierSpec,
    ModelSpec,
    NetworkLevelSpec,
    SystemSpec,
)


def _hbm(cap: float, bw: float) -> list[MemoryTierSpec]:
    return [MemoryTierSpec(kind="hbm", capacity_bytes=cap, bandwidth_bytes_per_s=bw)]


A100 = ChipSpec(name="a100-sxm4-80gb", vendor="nvidia", tdp_watts=400.0, memory_tiers=_hbm(80e9, 2.039e12),
                peak_flops={"fp32": 19.5e12, "tf32": 156e12, "bf16": 312e12, "fp16": 312e12,
                            "int8": 624e12})
A100_40 = A100.model_copy(update={"name": "a100-sxm4-40gb",
                                  "memory_tiers": _hbm(40e9, 1.555e12)})
H100 = ChipSpec(name="h100-sxm", vendor="nvidia", tdp_watts=700.0, memory_tiers=_hbm(80e9, 3.35e12),
                peak_flops={"bf16": 989e12, "fp16": 989e12, "fp8": 1979e12, "int8": 1979e12})
GROQ = ChipSpec(name="groqchip", tdp_watts=300.0, peak_flops={"fp16": 188e12, "int8": 750e12},
                memory_tiers=[MemoryTierSpec(kind="sram", capacity_bytes=230e6,
                                             bandwidth_bytes_per_s=80e12)])
GC200 = ChipSpec(name="gc200", tdp_watts=300.0, peak_flops={"fp16": 250e12, "fp32": 62.5e12},
                 memory_tiers=[MemoryTierSpec(kind="sram", capacity_bytes=900e6,
                                              bandwidth_bytes_per_s=47.5e12),
                               MemoryTierSpec(kind="streaming", capacity_bytes=32e9,
                                              bandwidth_bytes_per_s=20e9)])
SN40L = ChipSpec(name="sn40l", tdp_watts=None, peak_flops={"bf16": 638e12},
                 memory_tiers=[MemoryTierSpec(kind="sram", capacity_bytes=520e6,
                                              bandwidth_bytes_per_s=100e12),
                               MemoryTierSpec(kind="hbm", capacity_bytes=64e9,
                                              bandwidth_bytes_per_s=1.6e12),
                               MemoryTierSpec(kind="ddr", capacity_bytes=1.5e12,
                                              bandwidth_bytes_per_s=0.1e12)])


def _lvl(name: str, group: int, bw: float, lat: float, topo: str = "switch",
         hops: int = 1) -> NetworkLevelSpec:
    return NetworkLevelSpec(name=name, group_chips=group, bandwidth_bytes_per_s_per_chip=bw,
                            latency_s=lat, topology=topo, max_hops=hops)


def dgx(chip: ChipSpec, n: int = 8, nvlink: float = 300e9, ib: float = 25e9,
        watts: float = 6500 / 8) -> SystemSpec:
    """DGX-style nodes of 8 GPUs (NVSwitch) joined by InfiniBand; the fat tree of a cluster
    (``n`` > 8) is built for 4,480 GPUs (Selene's), one node alone does not grow."""
    levels = [_lvl("nvlink", min(8, n), nvlink, 1e-6)]
    if n > 8:
        levels.append(_lvl("infiniband", n, ib, 5e-6, hops=3))
    return SystemSpec(name=f"dgx-{chip.name}-{n}", chip=chip, chips=n, levels=levels,
                      host_bandwidth_bytes_per_s_per_chip=32e9, power_watts_per_chip=watts,
                      max_chips=max(n, 4480) if n > 8 else None)


def groq(n: int = 576) -> SystemSpec:
    """GroqNodes of 8 fully connected chips, racks of 72, dragonfly between racks."""
    return SystemSpec(name=f"groq-{n}", chip=GROQ, chips=n, levels=[
        _lvl("node", 8, 7 * 4 * 14e9 / 7, 0.3e-6, "full"),
        _lvl("rack", 72, 4 * 14e9, 0.6e-6, "full", 2),
        _lvl("system", n, 4 * 14e9, 1.0e-6, "dragonfly", 3)])


def ipu_pod(n: int = 16) -> SystemSpec:
    """IPU-M2000 boxes of 4 GC200 joined by IPU-Links."""
    return SystemSpec(name=f"ipu-pod{n}", chip=GC200, chips=n, levels=[
        _lvl("m2000", 4, 64e9, 1e-6, "full"), _lvl("pod", n, 32e9, 2e-6, "ring", n // 4)],
        power_watts_per_chip=1500 / 4)


def sn40l(n: int = 8) -> SystemSpec:
    """An SN40L node of 8 RDUs."""
    return SystemSpec(name="sn40l-node", chip=SN40L, chips=n,
                      levels=[_lvl("node", n, 100e9, 2e-6, "full")])


def resolver(name: str, chips: int | None = None) -> SystemSpec:
    """Knowledge-base-like names to explicit specs."""
    table = {
        "dgx-a100": lambda n: dgx(A100, n), "dgx-a100-superpod": lambda n: dgx(A100, n),
        "dgx-a100-320gb": lambda n: dgx(A100_40, n),
        "dgx-h100": lambda n: dgx(H100, n, 450e9, 50e9, 10200 / 8),
        "groq-576": groq, "ipu-pod16": ipu_pod, "ipu-pod64": ipu_pod, "sn40l-node": sn40l,
    }
    default = {"groq-576": 576, "ipu-pod16": 16, "ipu-pod64": 64}.get(name, 8)
    return table[name](chips or default)


def gpt3() -> ModelSpec:
    """GPT-3 175B as in Megatron (tied embeddings, vocab 51200)."""
    return ModelSpec(name="gpt3-175b", layers=96, hidden=12288, heads=96, kv_heads=96,
                     ffn_hidden=49152, vocab=51200, seq_len=2048, gated_mlp=False,
                     tied_embeddings=True)


def llama70() -> ModelSpec:
    """Llama-2 70B (grouped-query attention, gated MLP)."""
    return ModelSpec(name="llama2-70b", layers=80, hidden=8192, heads=64, kv_heads=8,
                     ffn_hidden=28672, vocab=32000, seq_len=4096, gated_mlp=True)


def small() -> ModelSpec:
    """A small GPT for quick checks."""
    return ModelSpec(name="small", layers=24, hidden=2048, heads=16, kv_heads=16,
                     ffn_hidden=8192, vocab=50257, seq_len=2048, gated_mlp=False)
