"""The 2024-2026 hardware files (issue 28): every new system is queryable, every new chip has what
the perf model reads, and every new measured result is complete and fits the system it names.

"New" means defined in one of :data:`NEW_FILES`, read from the installed package, so a chip, system
or result added to those files later is checked too; :data:`NEW_SYSTEMS` pins the systems that must
be there, so a file that fails to ship (package data) or loses a system fails here.
"""

from __future__ import annotations

import importlib.resources
import json

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF

from accelkb.cli import main
from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK

NEW_FILES = ("nvidia_2024.ttl", "amd.ttl", "google_2024.ttl", "aws.ttl", "intel.ttl", "cerebras.ttl",
             "models_2024.ttl")

NEW_SYSTEMS = {
    "nvidia_2024.ttl": ["dgx-b200", "dgx-b200-nyx-n8", "gb200-compute-tray", "gb200-nvl72",
                        "h100-nvl-pair", "h100-nvl-x8", "h100-pcie-pair", "h100-pcie-x8",
                        "gh200-144gb-node"],
    "amd.ttl": ["mi300x-platform", "mi325x-platform", "mi355x-platform"],
    "google_2024.ttl": ["tpu-v5e-pod", "tpu-v5e-multislice-4096", "tpu-v6e-pod",
                        "tpu-v6e-multislice-2048", "tpu-v7-cube", "tpu-v7-superpod"],
    "aws.ttl": ["trn2", "trn2-ultraserver"],
    "intel.ttl": ["gaudi3-node", "gaudi3-pod-128"],
    "cerebras.ttl": ["cs-3", "cs-3-cluster-4", "condor-galaxy-3", "cs-3-cluster-2048"],
}

SYSTEM_NAMES = "SELECT ?n WHERE { ?s a ak:System ; ak:shortName ?n }"
MEASURED = (AK.measuredSeconds, AK.measuredTokensPerSecond, AK.measuredFlopsPerSecondPerChip)


def _new(cls: URIRef) -> list[URIRef]:
    """Subjects of class ``cls`` defined in the new files as installed (package data)."""
    root = importlib.resources.files("accelkb.ontology").joinpath("data")
    found: set[URIRef] = set()
    for name in NEW_FILES:
        g = Graph().parse(data=root.joinpath(name).read_bytes(), format="turtle")
        found |= {s for s in g.subjects(RDF.type, cls) if isinstance(s, URIRef)}
    return sorted(found)


def _number(g: Graph, s: URIRef, p: URIRef) -> float | None:
    v = g.value(s, p)
    return float(v) if isinstance(v, Literal) else None


def test_new_files_are_package_data() -> None:
    root = importlib.resources.files("accelkb.ontology").joinpath("data")
    missing = [n for n in NEW_FILES if not root.joinpath(n).is_file()]
    assert not missing, f"not installed with the package (pyproject package-data): {missing}"


def test_query_lists_every_new_system(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", SYSTEM_NAMES, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    listed = {b["n"]["value"] for b in json.loads(out)["results"]["bindings"]}
    missing = {f: [n for n in names if n not in listed] for f, names in NEW_SYSTEMS.items()}
    assert not any(missing.values()), f"systems not listed by `accelkb query`: {missing}"


def test_query_api_agrees_with_the_new_files(kb: KnowledgeBase) -> None:
    listed = {str(r[0]) for r in kb.query(SYSTEM_NAMES)}
    g = kb.asserted
    defined = {str(g.value(s, AK.shortName)) for s in _new(AK.System)}
    assert defined == {n for names in NEW_SYSTEMS.values() for n in names}
    assert defined <= listed


def test_every_new_chip_has_a_16_bit_peak_and_a_sized_memory_tier(kb: KnowledgeBase) -> None:
    g = kb.asserted
    chips = _new(AK.Chip)
    assert len(chips) >= 15
    problems = []
    for chip in chips:
        name = g.value(chip, AK.shortName)
        peaks = [x for x in (_number(g, chip, AK.peakFlopsBf16), _number(g, chip, AK.peakFlopsFp16))
                 if x is not None]
        if not peaks or min(peaks) <= 0:
            problems.append(f"{name}: expected a positive dense ak:peakFlopsBf16 or ak:peakFlopsFp16")
        tiers = list(g.objects(chip, AK.hasMemoryTier))
        sized = [t for t in tiers if _number(g, t, AK.capacityBytes)
                 and g.value(t, AK.capacityConvention) in (AK.DecimalPrefix, AK.BinaryPrefix)]
        if not sized:
            problems.append(f"{name}: expected a memory tier with ak:capacityBytes and "
                            f"ak:capacityConvention, got tiers {[str(t) for t in tiers]}")
        unsized = [str(t) for t in tiers if _number(g, t, AK.capacityBytes)
                   and g.value(t, AK.capacityConvention) is None]
        if unsized:
            problems.append(f"{name}: tiers with capacityBytes but no ak:capacityConvention: {unsized}")
    assert not problems, "\n".join(problems)


def test_every_new_system_has_a_chip_count(kb: KnowledgeBase) -> None:
    g = kb.asserted
    missing = [str(g.value(s, AK.shortName)) for s in _new(AK.System)
               if not (_number(g, s, AK.chipCount) or 0) >= 1]
    assert not missing, f"systems without a positive ak:chipCount: {missing}"


def test_every_new_result_is_complete_and_fits_its_system(kb: KnowledgeBase) -> None:
    g = kb.asserted
    results = _new(AK.BenchmarkResult)
    assert len(results) >= 34
    problems = []
    for r in results:
        system = g.value(r, AK.measuredOn)
        workload = g.value(r, AK.workload)
        if system is None or (system, RDF.type, AK.System) not in g:
            problems.append(f"{r}: expected ak:measuredOn a declared system, got {system}")
            continue
        if workload is None or (workload, RDF.type, AK.Workload) not in g:
            problems.append(f"{r}: expected ak:workload a declared workload, got {workload}")
        if not any(_number(g, r, p) is not None for p in MEASURED):
            problems.append(f"{r}: expected a measured value ({', '.join(str(p) for p in MEASURED)})")
        used, count = _number(g, r, AK.chipsUsed), _number(g, system, AK.chipCount)
        if used is None or count is None or used > count:
            problems.append(f"{r}: expected ak:chipsUsed <= chipCount of {g.value(system, AK.shortName)}, "
                            f"got {used} of {count}")
    assert not problems, "\n".join(problems)


def test_each_model_and_workload_is_defined_once() -> None:
    """The new files share Llama 3.x models and MLPerf workloads through models_2024.ttl."""
    root = importlib.resources.files("accelkb.ontology").joinpath("data")
    where: dict[URIRef, list[str]] = {}
    for name in NEW_FILES:
        g = Graph().parse(data=root.joinpath(name).read_bytes(), format="turtle")
        for cls in (AK.Workload, AK.DecoderModel):
            for s in g.subjects(RDF.type, cls):
                where.setdefault(s, []).append(name)  # type: ignore[arg-type]
    outside = {str(s): f for s, f in where.items() if f != ["models_2024.ttl"]}
    assert not outside, f"models or workloads defined outside models_2024.ttl: {outside}"
