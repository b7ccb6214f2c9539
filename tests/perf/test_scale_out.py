"""A system asked for more chips than it has: the knowledge base's system built of it joins them,
never its own node fabric stretched (a DGX H100's NVLink over 64 GPUs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelkb.cli import main
from accelkb.errors import InputError
from accelkb.perf.api import resize_system
from accelkb.perf.from_kb import resized, system_spec


def test_a_node_scales_out_over_the_pod_that_contains_it() -> None:
    s = system_spec("dgx-h100", 64)
    assert s.name == "dgx-h100-superpod" and s.chips == 64
    assert [(lvl.name, lvl.group_chips, lvl.bandwidth_bytes_per_s_per_chip) for lvl in s.levels] \
        == [("switch:8", 8, 450e9), ("switch:127", 64, 50e9)]  # NVLink per node, NDR between


@pytest.mark.parametrize(("name", "chips", "scaled"), [
    ("dgx-a100", 16, "dgx-a100-superpod"),      # the smallest system that contains it
    ("groqrack", 144, "groq-576"),
    ("tpu-v4-cube", 128, "tpu-v4-pod"),
    ("ipu-pod16", 64, "ipu-pod64"),             # no system contains a POD16: one of its blocks
    ("cs-3", 4, "cs-3-cluster-4"),              # a single chip has no network of its own
    ("dgx-a100-320gb", 64, "mosaicml-a100-40gb-cluster"),
])
def test_the_smallest_larger_system_of_the_same_building_block(name: str, chips: int,
                                                               scaled: str) -> None:
    s = system_spec(name, chips)
    assert (s.name, s.chips, s.chip) == (scaled, chips, system_spec(name).chip)


def test_nothing_larger_is_refused_with_what_is_missing() -> None:
    with pytest.raises(InputError, match="sn40l-node has 8 chips and the knowledge base has no "
                       "system of at least 16 built of it"):
        system_spec("sn40l-node", 16)


def test_a_resized_spec_grows_back_through_the_knowledge_base() -> None:
    small = system_spec("dgx-h100-superpod", 4)
    assert small.with_chips(8).levels[0].group_chips == 8
    with pytest.raises(InputError, match=r"\(switch:8\) joins at most 8 chips"):
        small.with_chips(16)  # the spec alone: its node fabric, cut off above
    assert [lvl.name for lvl in resized(small, 16).levels] == ["switch:8", "switch:127"]
    assert resize_system(small, 16) == resized(small, 16)


def test_a_system_file_does_not_take_the_knowledge_base_network(tmp_path: Path) -> None:
    own = system_spec("dgx-h100").model_copy(
        update={"levels": [system_spec("dgx-h100").levels[0].model_copy(
            update={"bandwidth_bytes_per_s_per_chip": 1e11})]})
    with pytest.raises(InputError, match="joins at most 8 chips"):
        resized(own, 64)  # same name, other fabric: not the knowledge base's system


def test_estimate_names_the_system_it_ran_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "training", "--model", "gpt3-1.3b", "--system", "dgx-h100",
                 "--chips", "16", "--parallel", "dp=16,mb=1,gbs=64"]) == 0
    assert "on dgx-h100-superpod (16 chips)" in capsys.readouterr().out
    assert main(["estimate", "training", "--model", "gpt3-1.3b", "--system", "sn40l-node",
                 "--chips", "16", "--parallel", "dp=16,mb=1,gbs=64"]) == 2
    err = capsys.readouterr().err
    assert "no system of at least 16 built of it" in err and "Traceback" not in err


def test_infer_refuses_a_chip_count_nothing_in_the_knowledge_base_joins(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["infer", "--workload", "llama2-70b-inference", "--system", "sn40l-node",
                 "--chips", "16"]) == 2
    err = capsys.readouterr().err
    assert "no system of at least 16 built of it" in err and "Traceback" not in err
