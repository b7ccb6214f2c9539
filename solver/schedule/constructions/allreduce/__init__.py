"""accelkb.solver.schedule.constructions.allreduce: the allreduce strategies and their Z3 proofs.

:mod:`.search` runs the strategies (the sibling constructions first, then Z3); :mod:`.trees`
solves per-chunk reduction and broadcast trees with Z3 on small instances; :mod:`.mirror` finds
mirrored per-chunk trees by local search near the bandwidth bound; :mod:`.encoding` is the exact
allreduce encoding whose gossip relaxation and exact form prove optimality (UNSAT).

May import the other constructions and the schedule package's shared modules; never
:mod:`accelkb.solver.schedule.api`.
"""
