"""A rule's bottleneck that takes a sliver of the model's time is not a main bottleneck: the
CS-3 report named 'compute-bound' among the main ones with compute at 0.4 % of the step."""

from __future__ import annotations

from accelkb.advise.pipeline import advise


def test_a_sliver_is_said_to_be_one_and_left_out_of_the_answer() -> None:
    a = advise("cs-3", "llama3.1-8b-inference")
    compute = next(f for f in a.findings if f.bottleneck == "compute")
    assert compute.share_of_time is not None and compute.share_of_time < 0.1
    assert "does not limit this layout" in compute.evidence
    main = a.answer.split("The main bottlenecks are ", 1)[1].split(".")[0]
    assert "compute-bound" not in main and "latency" in main
