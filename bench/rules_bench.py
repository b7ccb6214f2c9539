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
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from rdflib import Dataset, URIRef

SCHEMA = "https://w3id.org/accelkb/schema#"
DATA = "https://w3id.org/accelkb/data/"
SYN = "https://example.org/synthetic/"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
VENDORS = ["graphcore", "sambanova", "groq", "nvidia", "google"]
FEATURES = ["SpatialDataflow", "HardwareOrchestratedLaunch", "StaticNetworkScheduling",
            "StreamingMemoryAccess", "DynamicRouting"]
TOPOLOGIES = ["Torus", "Dragonfly", "FatTree", "Switched", "Ring"]
PHASES = ["Training", "Decode", "Inference", "Prefill"]
ESTIMATE_TRIPLES = 24  # about: type, links, 20 numbers


def ak(name: str) -> str:
    """An ``ak:`` term in N-Triples."""
    return f"<{SCHEMA}{name}>"


def _dbl(v: float) -> str:
    return f'"{float(v)!r}"^^<{XSD_NS}double>'


def _int(v: int) -> str:
    return f'"{int(v)}"^^<{XSD_NS}integer>'


def catalogue(target: int, seed: int = 7) -> Iterator[str]:
    """About ``target`` synthetic triples as N-Triples lines: catalogue plus estimates for all
    (workload, system) pairs. A generator, so 10^6 triples never sit in Python at once."""
    rng = random.Random(seed)
    pairs = max(1, target // (ESTIMATE_TRIPLES + 2))
    n_sys = max(2, int(pairs ** 0.5))
    n_work = max(2, pairs // n_sys)
    a = f"<{RDF_NS}type>"
    chips = []
    for c in range(max(2, n_sys // 4)):
        chip = f"<{SYN}chip-{c}>"
        chips.append(chip)
        yield (f"{chip} {a} {ak('Chip')} .\n"
               f"{chip} {ak('vendor')} <{DATA}{rng.choice(VENDORS)}> .\n"
               f"{chip} {ak('hasFeature')} {ak(rng.choice(FEATURES))} .\n"
               f"{chip} {ak('supportsPrecision')} {ak(rng.choice(['INT8', 'FP8', 'BF16']))} .\n")
    systems = []
    for s in range(n_sys):
        sys_, topo = f"<{SYN}system-{s}>", f"<{SYN}topology-{s}>"
        systems.append(sys_)
        yield (f"{sys_} {a} {ak('System')} .\n{sys_} {ak('chip')} {rng.choice(chips)} .\n"
               f"{sys_} {ak('hasTopology')} {topo} .\n"
               f"{topo} {ak('topologyKind')} {ak(rng.choice(TOPOLOGIES))} .\n")
        if rng.random() < 0.5:
            yield f"{topo} {ak('hasFeature')} {ak('DynamicRouting')} .\n"
    workloads = []
    for w in range(n_work):
        work, model = f"<{SYN}workload-{w}>", f"<{SYN}model-{w}>"
        workloads.append((work, model))
        yield (f"{work} {a} {ak('Workload')} .\n{work} {ak('model')} {model} .\n"
               f"{work} {ak('phase')} {ak(rng.choice(PHASES))} .\n"
               f"{model} {ak('layers')} {_int(rng.choice([24, 32, 80, 96]))} .\n"
               f"{model} {ak('parameterCount')} {_dbl(rng.choice([7e9, 7e10, 1.75e11]))} .\n")
    for s, sys_ in enumerate(systems):
        for w, (work, model) in enumerate(workloads):
            e = f"<{SYN}estimate-{s}-{w}>"
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
            yield (f"{e} {a} {ak('Estimate')} .\n{e} {ak('system')} {sys_} .\n"
                   f"{e} {ak('workload')} {work} .\n{e} {ak('model')} {model} .\n"
                   + "".join(f"{e} {ak(k)} {_dbl(v)} .\n" for k, v in values.items()))


def _chunks(lines: Iterator[str], size: int = 200_000) -> Iterator[str]:
    buf: list[str] = []
    n = 0
    for text in lines:
        buf.append(text)
        n += text.count("\n")
        if n >= size:
            yield "".join(buf)
            buf, n = [], 0
    if buf:
        yield "".join(buf)


def worker(size: float, store: str, record: bool) -> dict[str, Any]:
    """One configuration, measured in this process."""
    from accelkb.ontology.kb import _PREFIXES, ASSERTED, ESTIMATES, KnowledgeBase, stored_query
    from accelkb.rules.engine import OxigraphStore, RdflibStore, run_fixpoint
    from accelkb.rules.parse import load_rules

    rules = load_rules()
    base = KnowledgeBase(validate=False)
    lines = catalogue(int(size) - len(base.asserted))
    t0 = time.perf_counter()
    ds = Dataset(default_union=True)
    g = ds.graph(ASSERTED)
    for t in base.asserted:
        g.add(t)
    target: Any
    if store == "oxigraph":
        target = OxigraphStore.from_dataset(ds)
        del ds, g, base
        graph = target.native(ESTIMATES)
        for text in _chunks(lines):  # straight from text into Oxigraph, no rdflib terms
            target.store.load(text, format=target.ox.RdfFormat.N_TRIPLES, to_graph=graph)
        total = len(target)
    else:
        e = ds.graph(ESTIMATES)
        for text in _chunks(lines):
            e.parse(data=text, format="nt")
        target = RdflibStore(ds)
        total = len(ds)
    load_s = time.perf_counter() - t0
    cpu0 = time.process_time()
    report = run_fixpoint(rules.values(), target, record=record)
    cpu_s = time.process_time() - cpu0
    findings = stored_query("rules_bench_findings")
    explain = stored_query("rules_findings_rdf12" if store == "oxigraph" else "rules_findings")
    estimate = URIRef(f"{SYN}estimate-0-0")
    prefixes = {k: str(v) for k, v in _PREFIXES.items()}
    t1 = time.perf_counter()
    if store == "oxigraph":
        rows = list(target.query(findings, use_default_graph_as_union=True, prefixes=prefixes))
        t2 = time.perf_counter()
        # Oxigraph substitutes only projected variables: ?e travels as a trailing VALUES
        # block, as accelkb.serve.store.RemoteStore sends bindings.
        bound = explain + f"\nVALUES ?e {{ {target.nt(target.native(estimate))} }}"
        found = list(target.query(bound, use_default_graph_as_union=True, prefixes=prefixes))
        ruled = sum(1 for r in found if r["rule"] is not None)
    else:
        rows = list(target.dataset.query(findings, initNs=_PREFIXES))
        t2 = time.perf_counter()
        found = list(target.dataset.query(explain, initNs=_PREFIXES,
                                          initBindings={"e": estimate}))
        ruled = sum(1 for r in found if r.rule is not None)  # type: ignore[union-attr]
    t3 = time.perf_counter()
    return {"size": size, "store": store, "record": record, "triples": total,
            "load_s": load_s, "fixpoint_s": report.seconds, "fixpoint_cpu_s": cpu_s,
            "passes": report.passes, "new_triples": report.new_triples,
            "derivations": report.derivations, "query_s": t2 - t1, "query_rows": len(rows),
            "explain_query_s": t3 - t2, "explain_rows": len(found), "explain_ruled": ruled,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _line(r: dict[str, Any]) -> str:
    return (f"{r['store']:9s} {r['triples']:>9,d} triples  record={r['record']!s:5s} "
            f"load {r['load_s']:7.2f} s  fixpoint {r['fixpoint_s']:8.2f} s "
            f"(cpu {r['fixpoint_cpu_s']:7.2f} s; {r['passes']} passes, {r['new_triples']:,d} new, "
            f"{r['derivations']:,d} derivations)  query {r['query_s']:6.3f} s  "
            f"explain-query {r['explain_query_s']:6.3f} s ({r['explain_ruled']}/"
            f"{r['explain_rows']} with rule)  peak {r['peak_rss_mb']:7.0f} MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6])
    parser.add_argument("--stores", nargs="+", default=["oxigraph", "rdflib"])
    parser.add_argument("--rdflib-max", type=float, default=1e5,
                        help="largest size run on rdflib (it needs minutes beyond)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each configuration, alternating with and without "
                        "records; the ratio uses the median fixpoint times")
    parser.add_argument("--json", help="also write every run to this file")
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
            for _ in range(args.repeat):
                for record in ("0", "1"):
                    out = subprocess.run([sys.executable, __file__, "--worker", str(size), store,
                                          record], capture_output=True, text=True, check=True)
                    rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                    print(_line(rows[-1]), flush=True)
    for size in args.sizes:
        for store in args.stores:
            pair = [r for r in rows if r["size"] == size and r["store"] == store]
            plain = [r for r in pair if not r["record"]]
            rec = [r for r in pair if r["record"]]
            if not plain or not rec:
                continue
            if len({r["triples"] for r in pair}) > 1:
                print(f"warning: input sizes differ between runs ({sorted({r['triples'] for r in pair})}"
                      "): the bundled knowledge changed meanwhile")
            wall = statistics.median(r["fixpoint_s"] for r in rec) / \
                statistics.median(r["fixpoint_s"] for r in plain)
            cpu = statistics.median(r["fixpoint_cpu_s"] for r in rec) / \
                statistics.median(r["fixpoint_cpu_s"] for r in plain)
            print(f"explanation overhead {store} {size:.0e}: {wall:.2f}x fixpoint time "
                  f"({cpu:.2f}x CPU time), median of {len(rec)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
