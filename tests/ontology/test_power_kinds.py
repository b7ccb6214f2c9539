"""Power by definition (issue 26): maxima, averages and the legacy ak:powerWatts kept apart.

The SHACL rejection of a differing ak:powerWatts / ak:maxPowerWatts pair without a note is in
data/bad/power_max_and_legacy_differ.ttl; here the bundled data is checked in Python,
independently of the shape, and the accepted boundary cases are loaded.
"""

from __future__ import annotations

from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from accelkb.ontology.kb import KnowledgeBase
from accelkb.ontology.namespace import AK

KB = "https://w3id.org/accelkb/data/"


def _noted(g: Graph, node: Node, props: set[Node]) -> bool:
    """Whether a provenance of ``node`` for one of ``props`` carries an ak:note."""
    return any(g.value(prov, AK.note) is not None and set(g.objects(prov, AK.forProperty)) & props
               for prov in g.objects(node, AK.provenance))


def test_no_bundled_system_has_two_different_full_powers_without_a_note(
        kb: KnowledgeBase) -> None:
    g = kb.asserted
    bad = []
    for system in g.subjects(RDF.type, AK.System):
        legacy, peak = g.value(system, AK.powerWatts), g.value(system, AK.maxPowerWatts)
        if legacy is not None and peak is not None and float(legacy) != float(peak) \
                and not _noted(g, system, {AK.powerWatts, AK.maxPowerWatts}):
            bad.append(str(system))
    assert not bad


def test_every_bundled_legacy_power_says_what_it_is(kb: KnowledgeBase) -> None:
    # ak:powerWatts is kept only where a source does not say maximum or average, with a note.
    g = kb.asserted
    silent = [str(s) for s in g.subjects(AK.powerWatts, None)
              if not _noted(g, s, {AK.powerWatts})]
    assert not silent


def test_the_issue_26_power_facts_have_their_definitions(kb: KnowledgeBase) -> None:
    g = kb.asserted

    def value(name: str, prop: URIRef) -> float | None:
        v = g.value(URIRef(KB + name), prop)
        return None if v is None else float(v)

    assert value("bow-2000", AK.averagePowerWatts) == 1250      # 'an average power of 1.25kW'
    assert value("ipu-m2000", AK.maxPowerWatts) == 1500         # '1Pflop/s at 1.5kW' (peak)
    assert value("dgx-a100", AK.maxPowerWatts) == 6500          # '6.5 kW max'
    assert value("dgx-h100", AK.maxPowerWatts) == 10200         # 'maximum 10.2 kW'
    assert value("tpu-v4", AK.tdpWatts) == 192                  # measured maximum
    assert value("tpu-v4", AK.averagePowerWatts) == 170         # measured mean
    assert value("sambarack-sn40l-16", AK.averagePowerWatts) == 10000
    for name in ("bow-2000", "ipu-m2000", "dgx-a100", "dgx-h100", "sambarack-sn40l-16"):
        assert value(name, AK.powerWatts) is None, name


def test_sambarack_power_is_low_and_says_its_source_wrote_an_energy(kb: KnowledgeBase) -> None:
    g = kb.asserted
    rack = URIRef(KB + "sambarack-sn40l-16")
    provs = [p for p in g.objects(rack, AK.provenance)
             if (p, AK.forProperty, AK.averagePowerWatts) in g]
    assert len(provs) == 1
    assert g.value(provs[0], AK.confidence) == AK.Low
    assert "energy unit" in str(g.value(provs[0], AK.note))


def test_derived_pod_powers_keep_their_formula_and_stay_below_high(kb: KnowledgeBase) -> None:
    g = kb.asserted
    for name in ("ipu-pod16", "ipu-pod64", "ipu-pod256", "bow-pod16", "bow-pod64", "bow-pod256"):
        provs = [p for p in g.objects(URIRef(KB + name), AK.provenance)
                 if {AK.maxPowerWatts, AK.averagePowerWatts} & set(g.objects(p, AK.forProperty))]
        assert len(provs) == 1, name
        assert g.value(provs[0], AK.formula) is not None, name
        assert g.value(provs[0], AK.confidence) in (AK.Medium, AK.Low), name


def _user_file(tmp_path: Path, data_dir: Path, box: str) -> Path:
    text = (data_dir / "good_minimal.ttl").read_text(encoding="utf-8")
    path = tmp_path / "user.ttl"
    path.write_text(text.replace("ak:powerWatts 4000 ;", box), encoding="utf-8")
    return path


def test_a_noted_legacy_power_beside_a_maximum_is_accepted(tmp_path: Path,
                                                          data_dir: Path) -> None:
    KnowledgeBase([_user_file(tmp_path, data_dir, """ak:powerWatts 3200 ; ak:maxPowerWatts 4000 ;
    ak:provenance [ ak:forProperty ak:powerWatts ; dcterms:source ex:spec-sheet ;
                    ak:confidence ak:Medium ; ak:note "Typical draw under load." ] ;""")],
                  bundled_data=False)


def test_equal_legacy_and_maximum_powers_need_no_note(tmp_path: Path, data_dir: Path) -> None:
    KnowledgeBase([_user_file(tmp_path, data_dir, "ak:powerWatts 4000 ; ak:maxPowerWatts 4.0e3 ;")],
                  bundled_data=False)
