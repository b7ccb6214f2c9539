"""accelkb.solver.schedule.constructions: schedules built by construction, checked afterwards.

Each module is one strategy :func:`accelkb.solver.schedule.api.schedule` may try: pull
heuristics and store-and-forward routing (:mod:`.greedy`), closed forms at the bounds
(:mod:`.closed_form`), rings (:mod:`.ring`), tori as products of rings (:mod:`.product`), fully
connected groups (:mod:`.groups`), decompositions and rounds (:mod:`.decompose`), the pipelined
allreduce (:mod:`.pipeline`), routed all-to-all and traffic (:mod:`.routed`), a Z3 template
copied by a Cayley group (:mod:`.cayley_template`, on a Cayley spanning subgraph:
:mod:`.cayley_subgraph`), and the allreduce search family (:mod:`.allreduce`).

May import the schedule package's model, topology, bounds, cayley, best and verify modules and
:mod:`accelkb.solver.z3fast`; never :mod:`accelkb.solver.schedule.api` (a construction that needs
the search gets it as an argument).
"""
