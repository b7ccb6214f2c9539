"""Rule engine benchmark: load, fixpoint and query time and peak memory, per store and scale.

A synthetic catalogue (many chips, systems, models, workloads and one estimate node per
(workload, system) pair, numbers drawn with a fixed seed so every rule has work) is added to
the bundled knowledge and scaled to about 10^5 and 10^6 triples. Each configuration runs in its
own process so peak memory (max RSS) is its own. Derivation records are measured as the ratio
of fixpoint time with records to time without.

Usage::

    python bench/rules_bench.py                      # 1e5 on both stores, 1e6 on Oxigraph
    python bench/rules_bench.py --sizes 1e5 1e6 --stores oxigraph rdflib
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from typing import Any

from rdflib import RDF, Dataset, Literal, URIRef
from rdflib.namespace import XSD

SCHEMA = "https://w3id.org/accelkb/schema#"
DATA = "https://w3id.org/accelkb/data/"
SYN = "https://example.org/synthetic/"
VENDORS = ["graphcore", "sambanova", "groq", "nvidia", "google"]
FEATURES = ["SpatialDataflow", "HardwareOrchestratedLaunch", "StaticNetworkScheduling",
            "StreamingMemoryAccess", "DynamicRouting"]
TOPOLOGIES = ["Torus", "Dragonfly", "FatTree", "Switched", "Ring"]
PHASES = ["Training", "Decode", "Inference", "Prefill"]
ESTIMATE_TRIPLES = 24  # about: type, links, 20 numbers


def ak(name: str) -> URIRef:
    return URIRef(SCHEMA + name)


def catalogue(target: int, seed: int = 7) -> list[tuple[Any, Any, Any]]:
    """About ``target`` synthetic triples: catalogue plus estimates for all pairs."""
    rng = random.Random(seed)
    pairs = max(1, target // (ESTIMATE_TRIPLES + 2))
    n_sys = max(2, int(pairs ** 0.5))
    n_work = max(2, pairs // n_sys)
    out: list[tuple[Any, Any, Any]] = []
    dbl = lambda v: Literal(v, datatype=XSD.double)  # noqa: E731
    chips = []
    for c in range(max(2, n_sys // 4)):
        chip = URIRef(f"{SYN}chip-{c}")
        chips.append(chip)
        out += [(chip, RDF.type, ak("Chip")),
                (chip, ak("vendor"), URIRef(DATA + rng.choice(VENDORS))),
                (chip, ak("hasFeature"), ak(rng.choice(FEATURES))),
                (chip, ak("supportsPrecision"), ak(rng.choice(["INT8", "FP8", "BF16"])))]
    systems = []
    for s in range(n_sys):
        sys_ = URIRef(f"{SYN}system-{s}")
        topo = URIRef(f"{SYN}topology-{s}")
        systems.append(sys_)
        out += [(sys_, RDF.type, ak("System")), (sys_, ak("chip"), rng.choice(chips)),
                (sys_, ak("hasTopology"), topo),
                (topo, ak("topologyKind"), ak(rng.choice(TOPOLOGIES)))]
        if rng.random() < 0.5:
            out.append((topo, ak("hasFeature"), ak("DynamicRouting")))
    workloads = []
    for w in range(n_work):
        work = URIRef(f"{SYN}workload-{w}")
        model = URIRef(f"{SYN}model-{w}")
        workloads.append((work, model))
        out += [(work, RDF.type, ak("Workload")), (work, ak("model"), model),
                (work, ak("phase"), ak(rng.choice(PHASES))),
                (model, ak("layers"), Literal(rng.choice([24, 32, 80, 96]))),
                (model, ak("parameterCount"), Literal(rng.choice([7e9, 7e10, 1.75e11])))]
    for s, sys_ in enumerate(systems):
        for w, (work, model) in enumerate(workloads):
            e = URIRef(f"{SYN}estimate-{s}-{w}")
            chips_n = rng.choice([8, 64, 576, 4096])
            tp, pp = rng.choice([1, 4, 8, 16]), rng.choice([1, 2, 16, 72])
            values = {
                "estimatedChips": chips_n, "fastDomainChips": rng.choice([4, 8, 64]),
                "modelStateBytes": rng.uniform(1e10, 3e12),
                "deviceMemoryBytes": rng.uniform(1e10, 1e14),
                "onChipMemoryBytes": rng.uniform(0, 2e11),
                "offChipMemoryBytes": rng.uniform(0, 3e13),
                "kvCacheBytes": rng.uniform(1e7, 5e10),
                "arithmeticIntensity": rng.uniform(1, 4000), "ridgePoint": rng.uniform(2, 8000),
                "streamedArithmeticIntensity": rng.uniform(1, 8000),
                "computeSeconds": rng.uniform(0.01, 30), "communicationSeconds": rng.uniform(0, 30),
                "tensorParallelSize": tp, "pipelineParallelSize": pp,
                "dataParallelSize": rng.choice([1, 2, 16]),
                "microbatchCount": rng.choice([1, 8, 64, 1536]),
                "bubbleFraction": rng.uniform(0, 0.5),
                "tensorParallelLinkBytesPerSecond": rng.choice([2.5e10, 6.4e10, 3e11]),
                "fastLinkBytesPerSecond": rng.choice([1.28e11, 3e11]),
                "hostLinkBytesPerSecondPerChip": rng.uniform(1e9, 4e10),
                "inputBytesPerSecondPerChip": rng.uniform(1e2, 1e10),
                "secondsPerToken": rng.uniform(1e-3, 0.05),
                "hopLatencySecondsPerToken": rng.uniform(0, 0.05),
            }
            out += [(e, RDF.type, ak("Estimate")), (e, ak("system"), sys_),
                    (e, ak("workload"), work), (e, ak("model"), model)]
            out += [(e, ak(k), dbl(float(v))) for k, v in values.items()]
    return out


def worker(size: float, store: str, record: bool) -> dict[str, Any]:
    """One configuration, measured in this process."""
    from accelkb.ontology.kb import ASSERTED, ESTIMATES, KnowledgeBase, stored_query
    from accelkb.rules.engine import OxigraphStore, RdflibStore, run_fixpoint
    from accelkb.rules.parse import load_rules

    rules = load_rules()
    base = KnowledgeBase(validate=False)
    triples = catalogue(int(size) - len(base.asserted))
    t0 = time.perf_counter()
    ds = Dataset(default_union=True)
    g = ds.graph(ASSERTED)
    for t in base.asserted:
        g.add(t)
    e = ds.graph(ESTIMATES)
    for t in triples:
        e.add(t)
    target: Any
    if store == "oxigraph":
        target = OxigraphStore.from_dataset(ds)
        total = len(target)
        del ds, g, e
    else:
        target = RdflibStore(ds)
        total = len(ds)
    load_s = time.perf_counter() - t0
    report = run_fixpoint(rules.values(), target, record=record)
    query = stored_query("rules_bench_findings")
    t1 = time.perf_counter()
    if store == "oxigraph":
        rows = list(target.store.query(query, use_default_graph_as_union=True,
                                       prefixes={"ak": SCHEMA}))
    else:
        rows = list(target.dataset.query(query, initNs={"ak": URIRef(SCHEMA)}))
    query_s = time.perf_counter() - t1
    return {"size": size, "store": store, "record": record, "triples": total,
            "load_s": load_s, "fixpoint_s": report.seconds, "passes": report.passes,
            "new_triples": report.new_triples, "derivations": report.derivations,
            "query_s": query_s, "query_rows": len(rows),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6])
    parser.add_argument("--stores", nargs="+", default=["oxigraph", "rdflib"])
    parser.add_argument("--rdflib-max", type=float, default=1e5,
                        help="largest size run on rdflib (it needs minutes beyond)")
    parser.add_argument("--worker", nargs=3, metavar=("SIZE", "STORE", "RECORD"))
    args = parser.parse_args(argv)
    if args.worker:
        size, store, record = args.worker
        print(json.dumps(worker(float(size), store, record == "1")))
        return 0
    rows = []
    for size in args.sizes:
        for store in args.stores:
            if store == "rdflib" and size > args.rdflib_max:
                continue
            for record in ("0", "1"):
                out = subprocess.run([sys.executable, __file__, "--worker", str(size), store,
                                      record], capture_output=True, text=True, check=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                r = rows[-1]
                print(f"{r['store']:9s} {r['triples']:>9,d} triples  record={r['record']!s:5s} "
                      f"load {r['load_s']:7.2f} s  fixpoint {r['fixpoint_s']:8.2f} s "
                      f"({r['passes']} passes, {r['new_triples']:,d} new, "
                      f"{r['derivations']:,d} derivations)  query {r['query_s']:6.3f} s  "
                      f"peak {r['peak_rss_mb']:7.0f} MB", flush=True)
    for size in args.sizes:
        for store in args.stores:
            pair = [r for r in rows if r["size"] == size and r["store"] == store]
            if len(pair) == 2:
                plain, rec = sorted(pair, key=lambda r: r["record"])
                print(f"explanation overhead {store} {size:.0e}: "
                      f"{rec['fixpoint_s'] / plain['fixpoint_s']:.2f}x fixpoint time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
