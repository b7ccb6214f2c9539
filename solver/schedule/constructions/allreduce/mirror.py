"""Allreduce as mirrored per-chunk trees, found by min-conflicts local search (no Z3).

Near the bandwidth bound an allreduce has no slack: GroqDF8x8 at 12 steps moves 2*63*64 = 8,064
transfers over 672 unit links in 12 steps, every link busy in every step, and GroqDF4x8 at 6
steps fills 96 % of its link-steps. Z3 (and CP-SAT outside the project) did not find either
within minutes; this search does in seconds. It is a heuristic: it proves nothing when it fails.

*Mirror.* Reverse a schedule in time (step ``t`` becomes ``T-1-t``) and direction (``u -> v``
becomes ``v -> u``). Where every link has a twin the other way, a reduction in-tree becomes a
broadcast out-tree and the reverse, so a chunk whose root holds the total from step ``a`` becomes
one that holds it from ``T - a``. The search keeps the schedule equal to its own mirror: chunks
come in *pairs* (one done at ``a < T/2``, its mirror at ``T - a``) or are *self-mirrored* (done
at ``T/2``, broadcast tree = reduction tree reversed). The load on a link in step ``t`` then
equals the load on its reverse in step ``T-1-t``, so only the first half of the steps is searched
(with an odd ``T`` the middle step is shared by a link and its reverse) and a move changes a chunk
and its mirror together.

*Trees.* Each chunk is reduced along an in-tree into its root and broadcast along an out-tree:
every other chip sends its partial sum once and receives the total once, ``2(n-1)`` transfers,
the fewest possible. A chip sends after its children and before its parent; it receives before
its children.

*Chains.* An over-full slot is relieved by a chain of moves found breadth-first over slots:
an arc in it moves to another (parent, step) its tree allows, an arc there moves on, and so on
until a slot with room; every slot on the way keeps its load (an augmenting path, as in
matching). From shortest-path trees this alone removes 95-97 % of the conflicts (GroqDF8x8 at
12 steps: 1,665-1,804 to 57-84 in 0.1 s).

*Moves* (weighted min-conflicts, the "breakout" method) change the windows the chains work in:
take an arc in an over-full slot (or, now and then, any arc), or one of its tree neighbours, and
move it to the (parent, step) its tree allows with the least slot weight; every :data:`BUMP`
moves the weight of every over-full slot grows by one, so that the search leaves local minima.
Rounds of :data:`CYCLE` moves alternate with chain searches.

*Symmetry.* On a one-level dragonfly whose lanes turn by an automorphism
(:func:`~accelkb.solver.schedule.cayley.lane_rotation`, acting freely on the chips), a template chunk
stands for its images under the rotations: the slots are link orbits, the search is that many
times smaller, and the schedule is invariant under the group. GroqDF8x8 at 12 steps is found
this way (4 lanes), GroqDF4x8 at 6 without (its 2-lane search stalls at 3 conflicts); the two
searches share the time.

*Mix.* How many chunks should be pairs is not known beforehand (GroqDF4x8 at 6 steps: 10 pairs
and 12 self-mirrored chunks, every other mix stalls at 4 or more conflicts; GroqDF8x8 at 12:
most mixes from 24 to 32 pairs), so the mixes race: each runs a few moves, the better half (by
conflicts left) goes on with twice the moves, down to two, each restarted from fresh trees when
long stuck (the time to a solution is heavy-tailed). Pair roots go first on the chips in node
order (:func:`_spread`), and pairs' done steps are spread from the middle outwards.

A schedule is returned only after the independent checker accepts it.

>>> from accelkb.solver.schedule.topology import parse_topology
>>> from accelkb.solver.schedule.model import Instance
>>> import time
>>> inst = Instance(parse_topology("torus:4x4"), "allreduce", 16)
>>> trs = mirror_search(inst, 8, time.monotonic() + 10)
>>> trs is not None and len(trs) == 2 * 15 * 16
True
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

from accelkb.solver.schedule.best import Best
from accelkb.solver.schedule.bounds import all_distances
from accelkb.solver.schedule.cayley import lane_rotation
from accelkb.solver.schedule.model import Instance, TransferT
from accelkb.solver.schedule.topology import Topology
from accelkb.solver.schedule.verify import verify

MAX_ARCS = 12_000  # searched arcs (half the transfers); GroqDF8x8 with 64 chunks has 4,032
BUMP = 100  # moves between weight increases (300 and 1,000 did worse on GroqDF8x8)
NEIGHBOUR = 0.3  # share of moves that go to a tree neighbour of the chosen arc
NOISE = 0.03  # share of moves to a random allowed (parent, step) (none: stalls at 11-16)
FOCUS = 0.8  # share of moves that start from an over-full slot
FIRST_MOVES = 2_000  # moves per mix in the first racing round
RESTART_PER_ARC = 40  # moves per searched arc after which the last mix starts afresh (solved
# runs took 10-60 per arc on GroqDF4x8 and GroqDF8x8, stuck ones hundreds)
FINALISTS = 2  # mixes that go on to the end
MAX_MIXES = 17  # mixes in the first round, evenly spaced; then those around the best
CHECK_EVERY = 256  # moves between clock readings
REACH = 400  # slots a chain search may reach before it gives up
CYCLE = 500  # moves between chain searches (tried 500-5,000 on GroqDF8x8: alike)


def _spread(topo: Topology) -> list[int]:
    """Chips in an order that visits the nodes in turn (first chip of each node, then the
    second ...), so that consecutive roots sit in different nodes."""
    if not topo.groups:
        return list(range(topo.n))
    pos = {}
    for g, members in enumerate(topo.groups[0]):
        for i, u in enumerate(members):
            pos[u] = (i, g)
    return sorted(range(topo.n), key=lambda u: pos.get(u, (topo.n, u)))


class _Mix:
    """The search state for one mix: ``pairs`` chunk pairs and the rest self-mirrored."""

    def __init__(self, topo: Topology, dist: list[list[int]], steps: int, chunks: int,
                 pairs: int, rng: random.Random, group: list[tuple[int, ...]] | None = None
                 ) -> None:
        n, T = topo.n, steps
        self.group = group or [tuple(range(n))]
        self.n, self.T, self.pairs = n, T, pairs
        self.rng = rng
        links = sorted(topo.links)
        L = len(links)
        lid = {lk: i for i, lk in enumerate(links)}
        rev = [lid[(v, u)] for (u, v) in links]
        H = T // 2
        # a link's orbit under the group: its images carry the template's images
        orb = [min(lid[(g[u], g[v])] for g in self.group) for (u, v) in links]
        # slot of (t, link): the first half as is, the second half mirrored
        sid = [[(t * L + orb[i]) if t < H else
                ((T - 1 - t) * L + orb[rev[i]]) if (t > H or T % 2 == 0) else
                (H * L + min(orb[i], orb[rev[i]])) for i in range(L)] for t in range(T)]
        # lslots[u][v][t]: the slot of link u -> v in step t
        self.lslots: list[dict[int, list[int]]] = [{} for _ in range(n)]
        for i, (u, v) in enumerate(links):
            self.lslots[u][v] = [sid[t][i] for t in range(T)]
        slots = (H + T % 2) * L
        self.cap = [topo.links[links[s % L]] for s in range(slots)]
        if T % 2:  # a middle-step arc on an orbit that holds its own reverse loads each of its
            # links twice: once through its images, once through its mirror's
            for i in range(L):
                if orb[i] == orb[rev[i]]:
                    self.cap[H * L + orb[i]] = topo.links[links[i]] // 2
        self.load = [0] * slots
        self.weight = [1] * slots
        self.occ: list[set[int]] = [set() for _ in range(slots)]
        self.bad: list[int] = []
        self.badpos: dict[int, int] = {}
        self.conflicts = 0
        self.best = 0
        self.moves = 0
        out, inn = topo.out_neighbors(), topo.in_neighbors()
        self.out, self.inn = out, inn
        order = _spread(topo)
        X = chunks // len(self.group) - pairs  # templates: pairs + self-mirrored
        reps = list(dict.fromkeys(min(g[u] for g in self.group) for u in order))
        self.roots = [reps[x % len(reps)] for x in range(X)]
        ecc = [max(max(dist[u][r] for u in range(n)), max(dist[r])) for r in range(n)]
        hi = H if T % 2 else H - 1
        # pairs' done steps spread evenly from the middle outwards, in random order: completions
        # then cover the steps between the ends (GroqDF8x8 at 12 steps with the lane group: done
        # steps of the 8 pairs summing to 32-37 end at 0-2 conflicts after a second, 26-30 at
        # 3-60; all at one step stalls at 36-216)
        low = min(ecc[r] for r in self.roots[:pairs]) if pairs else 0
        spread = [hi - k % (hi - low + 1) for k in range(pairs)] if hi >= low else []
        rng.shuffle(spread)
        self.done = [max(spread[x], ecc[r]) if x < pairs else H for x, r in enumerate(self.roots)]
        self.par = [[-1] * n for _ in range(X)]
        self.st = [[-1] * n for _ in range(X)]
        self.bpar = [[-1] * n for _ in range(X)]
        self.bst = [[-1] * n for _ in range(X)]
        self.kids: list[list[set[int]]] = [[set() for _ in range(n)] for _ in range(X)]
        self.bkids: list[list[set[int]]] = [[set() for _ in range(n)] for _ in range(X)]
        self.keys: list[int] = []
        for x, (r, a) in enumerate(zip(self.roots, self.done, strict=True)):
            # shortest-path trees, each chip as late (reduction) or early (broadcast) as its
            # distance from the root allows
            for u in sorted(range(n), key=lambda u: dist[u][r]):
                if u != r:
                    p = rng.choice([p for p in out[u] if dist[p][r] == dist[u][r] - 1])
                    self._set(x, u, 0, p, a - dist[u][r])
                    self.keys.append((x * n + u) * 2)
            if x < pairs:
                for u in sorted(range(n), key=lambda u: dist[r][u]):
                    if u != r:
                        p = rng.choice([p for p in inn[u] if dist[r][p] == dist[r][u] - 1])
                        self._set(x, u, 1, p, a + dist[r][u] - 1)
                        self.keys.append((x * n + u) * 2 + 1)
        self.best = self.conflicts

    # slot bookkeeping ------------------------------------------------------------------------
    def _add(self, s: int, key: int) -> None:
        self.load[s] += 1
        self.occ[s].add(key)
        if self.load[s] > self.cap[s]:
            self.conflicts += 1
            if self.load[s] == self.cap[s] + 1:
                self.badpos[s] = len(self.bad)
                self.bad.append(s)

    def _remove(self, s: int, key: int) -> None:
        if self.load[s] > self.cap[s]:
            self.conflicts -= 1
            if self.load[s] == self.cap[s] + 1:
                i = self.badpos.pop(s)
                last = self.bad.pop()
                if i < len(self.bad):
                    self.bad[i] = last
                    self.badpos[last] = i
        self.load[s] -= 1
        self.occ[s].discard(key)

    def _slot(self, x: int, u: int, ph: int) -> int:
        if ph == 0:
            return self.lslots[u][self.par[x][u]][self.st[x][u]]
        return self.lslots[self.bpar[x][u]][u][self.bst[x][u]]

    def _set(self, x: int, u: int, ph: int, p: int, t: int) -> None:
        key = (x * self.n + u) * 2 + ph
        if ph == 0:
            self.par[x][u], self.st[x][u] = p, t
            self.kids[x][p].add(u)
        else:
            self.bpar[x][u], self.bst[x][u] = p, t
            self.bkids[x][p].add(u)
        self._add(self._slot(x, u, ph), key)

    # search -------------------------------------------------------------------------------------
    def _move(self, x: int, u: int, ph: int) -> None:
        """Move arc ``(x, u, ph)`` to its least-weighted allowed (parent, step)."""
        load, cap, w = self.load, self.cap, self.weight
        opts = self._options(x, u, ph)
        if self.rng.random() < NOISE:
            p, t, _ = self.rng.choice(opts)
            self._place(x, u, ph, p, t)
            return
        here = self._slot(x, u, ph)
        least = -1
        best: list[tuple[int, int]] = []
        for p, t, s in opts:
            c = w[s] if load[s] - (s == here) >= cap[s] else 0  # as if the arc had left
            if c == least:
                best.append((p, t))
            elif c < least or least < 0:
                least, best = c, [(p, t)]
        self._place(x, u, ph, *(best[0] if len(best) == 1 else self.rng.choice(best)))

    def _options(self, x: int, u: int, ph: int) -> list[tuple[int, int, int]]:
        """Where arc ``(x, u, ph)`` may go with the rest of its tree as it is:
        ``(parent, step, slot)``."""
        r, a = self.roots[x], self.done[x]
        opts = []
        if ph == 0:
            st = self.st[x]
            lo = max((st[c] for c in self.kids[x][u]), default=-1) + 1
            for p in self.out[u]:
                ts = self.lslots[u][p]
                for t in range(lo, a if p == r else st[p]):
                    opts.append((p, t, ts[t]))
        else:
            bst = self.bst[x]
            hi = min((bst[c] for c in self.bkids[x][u]), default=self.T)
            for p in self.inn[u]:
                ts = self.lslots[p][u]
                for t in range(a if p == r else bst[p] + 1, hi):
                    opts.append((p, t, ts[t]))
        return opts

    def _place(self, x: int, u: int, ph: int, p: int, t: int) -> None:
        self._remove(self._slot(x, u, ph), (x * self.n + u) * 2 + ph)
        if ph == 0:
            self.kids[x][self.par[x][u]].discard(u)
        else:
            self.bkids[x][self.bpar[x][u]].discard(u)
        self._set(x, u, ph, p, t)

    def augment(self, s0: int) -> bool:
        """Relieve over-full slot ``s0`` by a chain of moves that ends in a slot with room
        (breadth-first over slots, each visited once): every slot on the way keeps its load.
        Each window is read with the other arcs in place, so no moved arc may be the old or new
        parent of another moved arc of the same tree (:meth:`_apply` refuses such chains)."""
        n, load, cap = self.n, self.load, self.cap
        prev: dict[int, tuple[int, int, int, int] | None] = {s0: None}
        frontier = [s0]
        for s in frontier:
            if len(prev) > REACH:
                return False
            for key in tuple(self.occ[s]):
                xu, ph = divmod(key, 2)
                x, u = divmod(xu, n)
                for p, t, s2 in self._options(x, u, ph):
                    if s2 in prev:
                        continue
                    prev[s2] = (s, key, p, t)
                    if load[s2] < cap[s2]:
                        if self._apply(prev, s2):
                            return True
                        continue
                    frontier.append(s2)
        return False

    def _apply(self, prev: dict[int, tuple[int, int, int, int] | None], end: int) -> bool:
        chain = []
        s = end
        while (step := prev[s]) is not None:
            s, key, p, t = step
            xu, ph = divmod(key, 2)
            chain.append((*divmod(xu, self.n), ph, p, t))
        # a window was read with the other arcs in place: no moved arc may be the old or new
        # parent of another moved arc of the same tree
        moved = {(x, ph, u) for x, u, ph, _, _ in chain}
        for x, u, ph, p, _ in chain:
            old = (self.par[x] if ph == 0 else self.bpar[x])[u]
            if (x, ph, p) in moved or (x, ph, old) in moved:
                return False
        for x, u, ph, p, t in chain:
            self._place(x, u, ph, p, t)
        return True

    def repair(self, deadline: float) -> None:
        """Augment over-full slots while chains exist (a slot whose search failed is not
        searched again in this call)."""
        failed: set[int] = set()
        progress = True
        while progress and self.conflicts and time.monotonic() < deadline:
            progress = False
            for s in list(self.bad):
                if time.monotonic() > deadline:
                    return
                if self.load[s] > self.cap[s] and s not in failed:
                    if self.augment(s):
                        progress = True
                    else:
                        failed.add(s)

    def run(self, moves: int, deadline: float) -> None:
        """Chains, then rounds of :data:`CYCLE` moves each followed by chains, ``moves`` moves
        in all, until no slot is over-full or ``deadline``."""
        self.repair(deadline)
        done = 0
        while done < moves and self.conflicts and time.monotonic() < deadline:
            k = min(CYCLE, moves - done)
            self._moves(k, deadline)
            done += k
            self.repair(deadline)

    def _moves(self, moves: int, deadline: float) -> None:
        rng, n = self.rng, self.n
        for i in range(moves):
            if not self.conflicts:
                return
            if i % CHECK_EVERY == 0 and time.monotonic() > deadline:
                return
            if rng.random() < FOCUS:
                key = rng.choice(tuple(self.occ[rng.choice(self.bad)]))
            else:
                key = rng.choice(self.keys)
            xu, ph = divmod(key, 2)
            x, u = divmod(xu, n)
            if rng.random() < NEIGHBOUR:
                tree_par = self.par[x] if ph == 0 else self.bpar[x]
                kids = self.kids[x][u] if ph == 0 else self.bkids[x][u]
                near = list(kids) + ([tree_par[u]] if tree_par[u] != self.roots[x] else [])
                if near:
                    u = rng.choice(near)
            self._move(x, u, ph)
            self.moves += 1
            if self.moves % BUMP == 0:
                for s in self.bad:
                    self.weight[s] += 1
            self.best = min(self.best, self.conflicts)

    def transfers(self) -> list[TransferT]:
        """The schedule: each template as a chunk, each pair's mirror as the next chunk."""
        T, trs = self.T, []
        j = 0
        for x, r in enumerate(self.roots):
            mine = []
            for u in range(self.n):
                if u == r:
                    continue
                mine.append((self.st[x][u], u, self.par[x][u]))
                if x < self.pairs:
                    mine.append((self.bst[x][u], self.bpar[x][u], u))
                else:
                    mine.append((T - 1 - self.st[x][u], self.par[x][u], u))
            for g in self.group:
                trs += [(t, g[u], g[v], (0, j)) for (t, u, v) in mine]
                j += 1
                if x < self.pairs:
                    trs += [(T - 1 - t, g[v], g[u], (0, j)) for (t, u, v) in mine]
                    j += 1
        return sorted(trs, key=lambda tr: tr[0])


def mixes(chunks: int, steps: int, ecc: int) -> list[int]:
    """The pair counts that fit ``steps`` where every chip reaches every other in ``ecc`` hops:
    a pair done at ``a < steps/2`` needs ``ecc <= a``, a self-mirrored chunk ``ecc <= steps/2``;
    with an odd ``steps`` every chunk is in a pair.

    >>> mixes(6, 5, 2), mixes(4, 6, 2), mixes(4, 6, 3), mixes(4, 6, 4)
    ([3], [0, 1, 2], [0], [])
    """
    half = steps // 2
    if steps % 2:
        return [chunks // 2] if chunks % 2 == 0 and ecc <= half else []
    if ecc > half:
        return []
    return list(range(chunks // 2 + 1)) if ecc < half else [0]


def mirror_search(inst: Instance, steps: int, deadline: float, seed: int = 0
                  ) -> list[TransferT] | None:
    """A checked ``steps``-step allreduce by mirrored trees, or ``None`` by ``deadline``."""
    topo = inst.topology
    if (inst.collective != "allreduce" or inst.n != topo.n or topo.n < 2
            or any(topo.links.get((v, u)) != m for (u, v), m in topo.links.items())
            or inst.chunks * (topo.n - 1) > MAX_ARCS):
        return None
    dist = all_distances(topo)
    if any(d < 0 for row in dist for d in row):
        return None
    rng = random.Random(seed)
    ecc = max(max(row) for row in dist)
    groups = [[tuple(range(topo.n))]]
    lanes = lane_rotation(topo)
    if lanes is not None and inst.chunks % lanes[0] == 0:  # the smaller search first
        groups.insert(0, [lanes[1](k) for k in range(lanes[0])])
    # the races share the time evenly, one mix's run at a time (GroqDF8x8 at 12 steps: found
    # under the lane group; GroqDF4x8 at 6: without)
    races = {i: _race(inst, steps, deadline, dist, ecc, group, rng) for i, group in enumerate(groups)}
    spent = dict.fromkeys(races, 0.0)
    while races and time.monotonic() < deadline:
        i = min(races, key=spent.__getitem__)
        start = time.monotonic()
        try:
            trs = next(races[i])
        except StopIteration:
            del races[i]
            continue
        spent[i] += time.monotonic() - start
        if trs is not None:
            return trs
    return None


def _race(inst: Instance, steps: int, deadline: float, dist: list[list[int]], ecc: int,
          group: list[tuple[int, ...]], rng: random.Random
          ) -> Iterator[list[TransferT] | None]:
    """Race the mixes under ``group``, yielding ``None`` after each mix's run and the
    schedule once found: a grid of at most :data:`MAX_MIXES` (then those around
    the best, up to half-way to its grid neighbours) run :data:`FIRST_MOVES` moves each; the
    better half (by conflicts left) goes on with twice the moves, down to :data:`FINALISTS`,
    each of which starts afresh whenever it has made :data:`RESTART_PER_ARC` moves per arc."""
    fits = mixes(inst.chunks // len(group), steps, ecc)

    def make(p: int) -> _Mix:
        return _Mix(inst.topology, dist, steps, inst.chunks, p, rng, group)

    def solved(m: _Mix) -> list[TransferT] | None:
        trs = m.transfers()
        # the checker is the judge; a refused schedule would be a fault of this model, which
        # would recur, so it ends this race (a test keeps the count of refusals at zero)
        return trs if verify(inst, trs, steps).ok else None

    def rank(m: _Mix) -> tuple[int, int]:
        return m.conflicts, m.best

    if not fits:
        return
    grid = [fits[round(i * (len(fits) - 1) / (MAX_MIXES - 1))] for i in range(MAX_MIXES)] \
        if len(fits) > MAX_MIXES else fits
    gap = max(1, (len(fits) - 1) // (2 * (MAX_MIXES - 1)))
    race = []
    for p in dict.fromkeys(grid):
        if time.monotonic() > deadline:
            return
        race.append(make(p))
    moves = FIRST_MOVES
    refined = False
    while race and time.monotonic() < deadline:
        for m in race:
            m.run(min(moves, RESTART_PER_ARC * len(m.keys) - m.moves), deadline)
            if not m.conflicts:
                yield solved(m)
                return
            yield None
        race.sort(key=rank)
        if not refined:
            refined = True
            extra = [make(p) for p in fits if abs(p - race[0].pairs) <= gap
                     and all(m.pairs != p for m in race)]
            for m in extra:
                m.run(moves, deadline)
                if not m.conflicts:
                    yield solved(m)
                    return
                yield None
            race = sorted(race + extra, key=rank)
        if len(race) > FINALISTS:
            race = race[:max(FINALISTS, len(race) // 2)]
        else:  # the finalists, each afresh once long stuck (the time to a solution is
            # heavy-tailed: most runs end within RESTART_PER_ARC moves per arc, or stall)
            race = [make(m.pairs) if m.moves >= RESTART_PER_ARC * len(m.keys) else m
                    for m in race]
        moves *= 2


def mirror_allreduce(inst: Instance, deadline: float, best: Best) -> None:
    """Below the best schedule, one step at a time down to ``best.target``, while the search
    finds mirrored trees before ``deadline``."""
    while best.steps is not None and best.steps - 1 >= max(best.target, 2):
        steps = best.steps - 1
        trs = mirror_search(inst, steps, deadline)
        if trs is None:
            return
        best.offer(steps, trs, "mirrored per-chunk trees by min-conflicts search: chunks in "
                   "time-reversed pairs, reduced into a root and broadcast back")
