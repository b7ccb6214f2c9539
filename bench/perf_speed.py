"""Time 10,000 performance estimates (training and inference), pure Python.

    python bench/perf_speed.py [N]
"""

from __future__ import annotations

import sys
import time

from accelkb.perf import InferenceConfig, TrainingConfig
from accelkb.perf.calibration import load_calibration
from accelkb.perf.inference import estimate as infer
from accelkb.perf.specs import ChipSpec, MemoryTierSpec, ModelSpec, NetworkLevelSpec, SystemSpec
from accelkb.perf.training import estimate as train

# A synthetic GPU-like system: the benchmark measures the model's speed, not any product.
CHIP = ChipSpec(name="bench-gpu", peak_flops={"bf16": 3e14}, tdp_watts=400.0, memory_tiers=[
    MemoryTierSpec(kind="hbm", capacity_bytes=80e9, bandwidth_bytes_per_s=2e12)])
SYSTEM = SystemSpec(name="bench", chip=CHIP, chips=1024, levels=[
    NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=3e11,
                     latency_s=1e-6, topology="switch"),
    NetworkLevelSpec(name="fabric", group_chips=1024, bandwidth_bytes_per_s_per_chip=2.5e10,
                     latency_s=5e-6, topology="switch", max_hops=3)])
# A synthetic compiler-scheduled system (8 fully connected chips per node, 9 nodes): with
# collectives=auto its collective times come from memoised schedules (accelkb.perf.scheduled).
SRAM_CHIP = ChipSpec(name="bench-lpu", peak_flops={"int8": 7.5e14}, memory_tiers=[
    MemoryTierSpec(kind="sram", capacity_bytes=2.3e8, bandwidth_bytes_per_s=8e13)])
SCHEDULED = SystemSpec(name="bench-scheduled", chip=SRAM_CHIP, chips=72, levels=[
    NetworkLevelSpec(name="node", group_chips=8, bandwidth_bytes_per_s_per_chip=9.8e10,
                     latency_s=6e-7, topology="full", generator="full:8", scheduled=True,
                     link_bandwidth_bytes_per_s=1.4e10),
    NetworkLevelSpec(name="rack", group_chips=72, bandwidth_bytes_per_s_per_chip=5.6e10,
                     latency_s=6e-7, topology="dragonfly", max_hops=3, scheduled=True,
                     generator="dragonfly:nodes=9,chips=8,ports=4",
                     link_bandwidth_bytes_per_s=1.4e10)])
SMALL = ModelSpec(name="llama-7b-like", layers=32, hidden=4096, heads=32, kv_heads=32,
                  ffn_hidden=11008, vocab=32000, seq_len=4096, gated_mlp=True)
MODEL = ModelSpec(name="gpt-175b", layers=96, hidden=12288, heads=96, kv_heads=96,
                  ffn_hidden=49152, vocab=51200, seq_len=2048, gated_mlp=False)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    cal = load_calibration()
    tcfg = TrainingConfig(tp=8, pp=16, dp=8, micro_batch=1, global_batch=1536,
                          recompute="full")
    icfg = InferenceConfig(tp=8, batch=16, prompt_len=1024, output_len=256)
    t0 = time.perf_counter()
    for _ in range(n):
        train(MODEL, SYSTEM, tcfg, cal)
    t1 = time.perf_counter()
    for _ in range(n):
        infer(MODEL, SYSTEM, icfg, cal)
    t2 = time.perf_counter()
    scfg = InferenceConfig(tp=8, pp=8, batch=1, prompt_len=512, output_len=512,
                           precision="int8", collectives="auto")
    infer(SMALL, SCHEDULED, scfg, cal)  # synthesize the schedules once (memoised)
    t3 = time.perf_counter()
    for _ in range(n):
        infer(SMALL, SCHEDULED, scfg, cal)
    t4 = time.perf_counter()
    print(f"{n} training estimates:  {t1 - t0:.2f} s ({1e6 * (t1 - t0) / n:.0f} us each)")
    print(f"{n} inference estimates: {t2 - t1:.2f} s ({1e6 * (t2 - t1) / n:.0f} us each)")
    print(f"{n} inference estimates, scheduled collectives (auto): {t4 - t3:.2f} s "
          f"({1e6 * (t4 - t3) / n:.0f} us each; first-estimate synthesis {t3 - t2:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
