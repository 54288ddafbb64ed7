"""WAGMA's timing rules: group rounds that do not wait, and global rounds that block
(``wagma``) or are wait-avoiding too (``wagma_wa``).

* ``wagma``     WAGMA, blocking global rounds (the paper): round r = tau + t (after the
                tau warm-up rounds) is global when (r + 1) % tau == 0, a blocking
                average over all ranks; the other rounds are group rounds in phase
                k mod L (k = r - 1 - floor(r / tau)) of the product's own group schedule
                (horovod_wagma.common.op.schedule.groups). A group round starts when the
                *first* member calls it (the activator); the others join at once from
                their engine thread (a stale value), so it completes T_group after
                the activator's call. A member that calls later gets the result at
                once; one that calls while it is in flight waits for its completion.
* ``wagma_wa``  WAGMA with wait-avoiding global rounds (docs/design.md): global
                rounds too are activated by the first caller and joined passively.
                A lagging app skips the rounds its engine served while it computed
                (the engine's TakeAppRound, cpp_ops/engine/core/engine_rounds.cc): it takes
                the newest of the contiguous run of passively served rounds from its
                next round on (waiting for it if still in flight), or enters the round
                after that run when a peer waits for it there. Staleness bound: when a
                round is activated, a member whose app last entered round L_j with
                r - L_j > max_staleness (default tau) is not joined passively; the
                round waits for that member's app to enter it.

A round's cost is network.py's ``round_time`` (with the other groups of its phase
sharing the host links) plus each member's op_bench-calibrated CPU work.
"""
from ..common import CalibrationError
from .blocking import Barrier


def group_schedule(P, S):
    """The product's schedule (horovod_wagma.common.op.schedule.groups, the engine's own);
    without the built engine, the base-S butterfly, which is that schedule only for
    P = S**L (other P: an error saying to build the engine, never a different
    schedule)."""
    try:
        from horovod_wagma.common.op.schedule import groups
        return groups(P, S)
    except ImportError as e:   # engine library not built
        L, span = 0, 1
        while span < P:
            span, L = span * S, L + 1
        if span != P:
            raise CalibrationError(
                f"the group schedule for P={P}, S={S} comes from the engine library, "
                f"which did not load: {e}") from None
        phases, span = [], 1
        for _ in range(L):
            phase = {}
            for r in range(P):
                phase.setdefault((r // (span * S), r % span), []).append(r)
            phases.append([sorted(v) for _, v in sorted(phase.items())])
            span *= S
        return phases or [[list(range(P))]]


class _RoundState:
    __slots__ = ("members", "waiting", "done", "waiters", "calls")

    def __init__(self, members):
        self.members = members
        self.waiting = set()
        self.done = None
        self.waiters = []
        self.calls = 0


class WagmaModel:
    """WAGMA with blocking global rounds (the paper). Group rounds are activated by the
    first member to call them and complete without waiting for the others."""

    def __init__(self, run):
        self.run = run
        P, tau = run.P, run.tau
        self.phases = group_schedule(P, run.S)
        self.gid = [[0] * P for _ in self.phases]
        for p, phase in enumerate(self.phases):
            for j, members in enumerate(phase):
                for m in members:
                    self.gid[p][m] = j
        self.everyone = list(range(P))
        self.offset = tau   # rounds 0..tau-1 ran in the warm-up
        self.rounds = {}
        self._net_cache = {}
        self._phase_of = {id(members): p for p, phase in enumerate(self.phases)
                          for members in phase}
        self.barrier = Barrier(run, "global_blocking",
                               run.net.round_time(self.everyone, run.nbytes))
        self.n_activated = 0

    def is_global(self, rnd):
        from horovod_wagma.common.optimizer.rounds import is_global_round
        return is_global_round(rnd, self.run.tau)

    def key(self, rnd, r):
        """(round, group id) of rank r's round rnd, and its members."""
        if self.is_global(rnd):
            return (rnd, -1), self.everyone
        k = rnd - 1 - rnd // self.run.tau
        p = k % len(self.phases)
        j = self.gid[p][r]
        return (rnd, j), self.phases[p][j]

    def net_time(self, members, activator):
        """Network seconds of a round over ``members`` (a list of the schedule, fixed
        for the run) activated by ``activator`` (None: all entered), with the other
        groups of its phase sharing the host links; cached."""
        host = None if activator is None else self.run.net.host_of[activator]
        k = (id(members), host)
        t = self._net_cache.get(k)
        if t is None:
            phase = self._phase_of.get(id(members))
            t = self._net_cache[k] = self.run.net.round_time(
                members, self.run.nbytes, activator,
                None if phase is None else self.phases[phase])
        return t

    def start_round(self, key, rs, kind, activator):
        net = self.net_time(rs.members, activator)

        def finished(t):
            rs.done = t
            for w in rs.waiters:
                self.run.resume(w, t)
            rs.waiters = []
            if rs.calls == len(rs.members):
                self.rounds.pop(key, None)
        self.run.collective(rs.members, kind, net, finished)

    def call(self, r, i, t):
        rnd = self.offset + i
        if self.is_global(rnd):
            self.barrier.arrive(rnd, r)
            return
        key, members = self.key(rnd, r)
        rs = self.rounds.get(key)
        if rs is None:
            rs = self.rounds[key] = _RoundState(members)
            self.n_activated += 1
            rs.waiters.append(r)
            self.start_round(key, rs, "group", r)
        elif rs.done is not None:
            self.run.resume(r, t)
        else:
            rs.waiters.append(r)
        rs.calls += 1
        if rs.calls == len(members) and rs.done is not None:
            del self.rounds[key]

    def stats(self):
        return {"group_rounds": self.n_activated}


class WagmaWaitAvoidingModel(WagmaModel):
    """WAGMA with wait-avoiding global rounds: every round is activated by its first
    caller; lagging apps skip served rounds; a too-stale member is waited for."""

    def __init__(self, run):
        super().__init__(run)
        P = run.P
        self.next_round = [self.offset] * P        # the app's next round
        self.last_round = [self.offset - 1] * P    # the round its app last entered
        self.served = [set() for _ in range(P)]    # joined passively, app not there yet
        self.pending = [set() for _ in range(P)]   # activated, waiting for this app
        self.done_at = {}
        self.skipped = 0
        self.stale_waits = 0
        self.steps_called = 0

    def call(self, r, i, t):
        self.steps_called += 1
        first = self.next_round[r]
        last_served = first - 1
        served = self.served[r]
        while last_served + 1 in served:
            last_served += 1
        enter = last_served < first or (last_served + 1) in self.pending[r]
        rnd = last_served + 1 if enter else last_served
        for x in range(first, rnd + 1):
            served.discard(x)
        self.skipped += rnd - first
        self.next_round[r], self.last_round[r] = rnd + 1, rnd
        key, members = self.key(rnd, r)
        if not enter:   # take the newest served round's result
            done = self.done_at.get(key)
            if done is not None:
                self.run.resume(r, t)
            else:
                self.rounds[key].waiters.append(r)
            return
        rs = self.rounds.get(key)
        if rs is None:   # activate it
            rs = self.rounds[key] = _RoundState(members)
            self.n_activated += 1
            for m in members:
                if m == r:
                    continue
                if rnd - self.last_round[m] > self.run.max_staleness:
                    rs.waiting.add(m)
                    self.pending[m].add(rnd)
                    self.stale_waits += 1
                else:
                    self.served[m].add(rnd)
            rs.waiters.append(r)
            if not rs.waiting:
                self._start(key, rs, r)
            return
        # A round that waited for this (too stale) member's app.
        self.pending[r].discard(rnd)
        rs.waiting.discard(r)
        rs.waiters.append(r)
        if not rs.waiting:
            self._start(key, rs, None)

    def _start(self, key, rs, activator):
        kind = "global_wa" if key[1] == -1 else "group"
        net = self.net_time(rs.members, activator)

        def finished(t):
            self.done_at[key] = t
            self.rounds.pop(key, None)
            for w in rs.waiters:
                self.run.resume(w, t)
        self.run.collective(rs.members, kind, net, finished)

    def stats(self):
        return {"rounds_skipped_per_step": self.skipped / max(1, self.steps_called),
                "stale_waits": self.stale_waits}


def group_size_for(P, S=None):
    if S:
        return S
    try:
        from horovod_wagma.common.op.schedule import default_group_size
        return default_group_size(P)
    except ImportError:   # the same rule as the engine's: smallest power of two >= sqrt(P)
        s = 2
        while s * s < P:
            s *= 2
        return s
