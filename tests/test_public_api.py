"""The public names survive the package layout: entry points, facades and kept module paths."""

from __future__ import annotations

import subprocess
import sys
import tempfile


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (import order matters here) and return its stdout.

    Outside the checkout: there, ``python -c`` would import the folder ``accelkb/`` in the
    working directory instead of the installed package."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tempfile.gettempdir())
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_entry_points_stay_functions_after_their_packages_load() -> None:
    out = _run(
        "import accelkb, types\n"
        "from accelkb.advise.report import render\n"       # loads the package accelkb.advise
        "import accelkb.advise.pipeline\n"
        "print(callable(accelkb.advise), isinstance(accelkb.advise, types.ModuleType))\n"
        "print(accelkb.advise.__module__)\n"
        "import accelkb.solver\n"
        "from accelkb.solver.schedule.topology import parse_topology\n"
        "print(accelkb.solver.schedule.__module__, accelkb.schedule is accelkb.solver.schedule)\n")
    assert out.splitlines() == ["True False", "accelkb.advise.pipeline",
                                "accelkb.solver.schedule.api True"]


def test_knowledge_base_of_the_api_reasons() -> None:
    import accelkb
    from accelkb.ontology.kb import KnowledgeBase as Core

    assert issubclass(accelkb.KnowledgeBase, Core)
    assert callable(accelkb.KnowledgeBase.infer) and callable(accelkb.KnowledgeBase.explain)


def test_kept_module_paths_still_import() -> None:
    from accelkb.advice import Advice
    from accelkb.advise import Advice as Moved
    from accelkb.perf.netsim import self_timed, simulate_collective, sweep
    from accelkb.perf.netsim.dynamic import simulate_collective as dynamic
    from accelkb.perf.netsim.selftimed import self_timed as selftimed
    from accelkb.perf.validation import read_rows, run_all
    from accelkb.perf.validation.training import read_rows as training_rows
    from accelkb.solver import ConfigResult, ScheduleResult, Status, configure, schedule
    from accelkb.solver.schedule.model import Status as ScheduleStatus

    assert Advice is Moved and simulate_collective is dynamic and self_timed is selftimed
    assert read_rows is training_rows and callable(run_all) and callable(sweep)
    assert Status is ScheduleStatus and ConfigResult.model_fields["status"].annotation is Status
    assert ScheduleResult.model_fields["status"].annotation is Status
    assert callable(configure) and callable(schedule)
