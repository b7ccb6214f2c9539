"""accelkb.solver.config: the configuration solver (parallel layout, pipeline partition).

Instance (:mod:`.instance`, frozen, from the knowledge base and perf specs) -> encoding
(:mod:`.encoding`, one function per declared constraint, tracked under its IRI) -> search
(:mod:`.search`: Z3 enumerates, :mod:`.theory` adds the performance module's memory and budget
clauses lazily) -> ranking (:mod:`.rank`) -> independent check (:mod:`.check`) and, when
infeasible, a minimal explanation in domain words (:mod:`.explain`). :mod:`.partition` is the
pipeline partition (contiguous layers to stages). Typed inputs and outputs: :mod:`.model`.

Entry point: :func:`accelkb.solver.config.api.configure` (re-exported as
``accelkb.solver.configure``). May import :mod:`accelkb.perf`, :mod:`accelkb.ontology`,
:mod:`accelkb.errors` and :mod:`accelkb.solver.status`; never the schedule solver.
"""
