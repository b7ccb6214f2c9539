"""GPU collectives timed as NCCL times them: its own tuning model, not a fitted cost per step.

NCCL picks, for each call, the algorithm (ring, tree) and protocol (LL, LL128, Simple) that its
cost model says is fastest: ``latency + bytes / bandwidth``, where the latency is a base cost
of the algorithm and protocol plus a hardware latency per algorithm step (NVLink, PCI or
network step), and the bandwidth is the bus bandwidth times what the protocol delivers (LL
carries a flag beside every 4 data bytes, LL128 one per 120) times ranks / steps. The constants
are NVIDIA's (``perf/data/nccl_tuning.json``, from ``src/graph/tuning.cc``); only the bus
bandwidth comes from the system (per level crossed, its per-chip bandwidth times the ranks inside
one group of it, as NCCL's channels use every NIC; the smallest, at the fitted
``link_efficiency``). A 16 KB all-reduce over 8 NVLink GPUs thus takes about 15 microseconds
(LL: 6.6 + 14 steps x 0.6), where a fitted 10 microseconds per ring step gave 140.

``calibration.nccl_latency_scale`` scales every NCCL latency (1.0: NCCL's own figures); it is
there so that the sensitivity of an estimate shows what those latencies decide, and so that an
estimate on another vendor's chip says it borrows NVIDIA's numbers.

Examples
--------
>>> from accelkb.perf.calibration import load_calibration
>>> from accelkb.perf.specs import NetworkLevelSpec
>>> node = [NetworkLevelSpec(name="nvswitch", group_chips=8, bandwidth_bytes_per_s_per_chip=4.5e11,
...                          latency_s=1e-6, topology="switch")]
>>> t, how = nccl_time("all_reduce", 16e3, 8, node, load_calibration(), parts=[(0, 8)])
>>> how, round(t * 1e6, 1)
('ring/LL', 15.3)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from ..calibration import Calibration
from ..specs import NetworkLevelSpec

OPS = ("all_reduce", "all_gather", "reduce_scatter")
PROTOCOLS = ("LL", "LL128", "Simple")


@lru_cache(maxsize=1)
def tuning() -> dict[str, Any]:
    """``perf/data/nccl_tuning.json``: NCCL's latencies and protocol bandwidth factors."""
    text = resources.files("accelkb.perf").joinpath("data/nccl_tuning.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def nccl_time(op: str, size_bytes: float, n: int, levels: Sequence[NetworkLevelSpec],
              cal: Calibration, parts: Sequence[tuple[int, int]]) -> tuple[float, str]:
    """Seconds of one collective as NCCL's cost model gives it, and the algorithm/protocol
    chosen (the fastest, as NCCL picks). ``op`` is one of :data:`OPS`; ``parts`` are the group's
    members per network level, innermost first
    (:func:`accelkb.perf.collectives.split_group`)."""
    t = tuning()
    per_node = parts[0][1] if parts[0][0] == 0 else 1
    nodes, outer = max(1, n // per_node), parts[-1][0]
    # a ring crosses each boundary of a group once per channel, and NCCL spreads its channels
    # over every NIC of the group: a level's boundary carries its per-chip bandwidth times the
    # ranks inside the group (8 x 25 GB/s out of a DGX A100, not 25)
    bus, inside = math.inf, 1
    for i, k in parts:
        bus = min(bus, levels[i].bandwidth_bytes_per_s_per_chip * inside)
        inside *= k
    bus *= cal.link_efficiency
    intra = "nvlink" if levels[0].bandwidth_bytes_per_s_per_chip > \
        t["pci_bandwidth_bytes_per_s"]["value"] else "pci"
    inter_hw = levels[outer].latency_s * 1e6  # the network's own latency, per inter-node step
    steps = 2 * (n - 1) if op == "all_reduce" else n - 1
    inter_steps = (2 * nodes if nodes > 1 else 0) if op == "all_reduce" else nodes - 1
    llmax = t["ll_max_bus_bandwidth_gbps"]
    ll_cap = 1e9 * (llmax["one_node"] if nodes == 1 else llmax["two_nodes"] if nodes == 2
                    else llmax["more_nodes"])
    pb = t["protocol_bandwidth"]
    scale = cal.nccl_latency_scale
    best, how = math.inf, ""
    for p in PROTOCOLS:
        if p == "LL128" and intra != "nvlink":
            continue  # NCCL enables LL128 only where the whole path is NVLink
        intra_lat = t["step_latency_us"][intra]["ring"][p]
        inter_lat = t["step_latency_us"]["net"]["ring"][p] + inter_hw * (2 if p == "Simple" else 1)
        if nodes > 1:
            over = t["net_overhead_us"]
            intra_lat = max(intra_lat, over["value"] * (over["simple_factor"] if p == "Simple"
                                                        else 1.0))
        lat = t["base_latency_us"]["ring"][p] + (steps - inter_steps) * intra_lat \
            + inter_steps * inter_lat
        bw = {"LL": min(ll_cap, bus * (pb["ring_LL_allreduce"] if op == "all_reduce" or nodes > 1
                                       else pb["ring_LL_other"])),
              "LL128": bus * pb["ring_LL128"], "Simple": bus}[p] * n / steps
        secs = lat * 1e-6 * scale + size_bytes / bw
        if secs < best:
            best, how = secs, f"ring/{p}"
        if op != "all_reduce":
            continue
        # tree: up and down a chain inside each node, a binary tree across nodes
        tintra = t["step_latency_us"][intra]["tree"][p]
        tinter = t["step_latency_us"]["net"]["tree"][p] + inter_hw * (2 if p == "Simple" else 1)
        tlat = t["base_latency_us"]["tree"][p] + 2 * ((per_node - 1) * tintra
                                                      + math.log2(nodes) * tinter)
        tbw = bus * pb["tree"]
        if p == "LL":
            tbw = min(tbw * pb["tree_LL"], ll_cap)
        elif p == "LL128":
            tbw *= pb["tree_LL128_one_node"] if nodes == 1 else pb["tree_LL128_nodes"]
        secs = tlat * 1e-6 * scale + size_bytes / (tbw * 0.5)
        if secs < best:
            best, how = secs, f"tree/{p}"
    return best, how
