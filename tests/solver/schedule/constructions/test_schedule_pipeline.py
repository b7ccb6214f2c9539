"""Pipelined allreduce (forward reduce-scatter + allgather on the free links): replayed by the
independent checker on small topologies."""

from accelkb.solver.schedule.bounds import all_distances
from accelkb.solver.schedule.constructions.pipeline import chunk_orders, forward_reduce, pipelined_allreduce
from accelkb.solver.schedule.model import Instance
from accelkb.solver.schedule.topology import parse_topology
from accelkb.solver.schedule.verify import verify


def test_pipelined_allreduce_verifies():
    for spec in ("torus:3x3", "ring:6", "hypercube:3"):
        topo = parse_topology(spec)
        dist = all_distances(topo)
        for order in chunk_orders(topo.n, 3):
            steps, trs = pipelined_allreduce(topo, dist, order)
            assert verify(Instance(topo, "allreduce", topo.n), trs, steps).ok, spec


def test_forward_reduce_sends_each_partial_once():
    topo = parse_topology("torus:3x3")
    steps, trs = forward_reduce(topo, all_distances(topo))
    sent = [(u, c) for _, u, _, c in trs]
    assert len(sent) == len(set(sent)) == topo.n * (topo.n - 1)
    assert steps == max(t for t, *_ in trs) + 1
