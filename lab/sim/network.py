"""Hosts, their links, and what a collective costs on them (``multihost``,
``datacenter``; ``this_machine`` is one host where every cost is CPU work).

Host h has one link to a switch with one-way latency l_h and rate b_h (both
directions). A message of m bytes from host a to host b takes l_a + l_b + s + m /
min(b_a, b_b), s being the per-message software latency (``multihost``: the measured
round trip minus the configured one, halved). Messages within a host: ``multihost``:
the same CPU work as this_machine; ``datacenter``: latency l_i, rate b_i (flags).
Per message sent each rank also pays an injection overhead o (``datacenter`` only).

Token bucket (``multihost``: ``tc tbf rate b_h burst B``, multihost/cluster.py, on the
host's uplink and on its downlink): each direction of host h's link holds up to B bytes
of tokens, refilled at b_h; bytes covered by tokens pass at once (the veth's speed),
the rest at b_h. Fluid form, per link direction with level k: pushing L bytes takes
max(0, L - k) / b_h and leaves k' = max(0, k - L); while the link direction is idle
for t, k grows to min(B, k + b_h t). Every collective starts with full buckets: the
link idled at least B / b_h before it (10.5 ms at 100 Mbit/s for B = 128 KiB; in the
benchmarks a 10 ms training step plus the last message's latency separate a rank's
collectives). Within a collective the level is carried from step to step, refilled
during each step's latencies. ``datacenter`` and this_machine: no bucket (B = 0).

Rendezvous (``multihost``, Open MPI's TCP transport): an MPI message above the eager
limit E (64 KiB, btl_tcp_eager_limit's default, opal/mca/btl/tcp/btl_tcp_component.c)
sends its first E bytes, waits for the receiver's acknowledgement and then sends the
rest: a step of such messages takes 3 one-way latencies instead of 1, the bytes past
the first E leaving after the round trip (the bucket refills meanwhile). The WAGMA
engine cuts cross-host messages up to 4 MiB into fragments under E (MessageCut,
cpp_ops/engine/reduce/message_cut.h), so its rounds pay no rendezvous below that; gloo (local
SGD) has its own TCP transport, with its own handshake (ring allreduce below).

* Horovod's allreduce (HOROVOD_CPU_OPERATIONS=MPI: MPI_Allreduce, a commutative sum):
  the algorithm Open MPI 4.1.4's coll/tuned picks by communicator size and bytes
  (``ompi_allreduce_algorithm``, a port of the commutative branch of
  ompi_coll_tuned_allreduce_intra_dec_fixed). For the benchmark's 278 KB model at
  every P from 2 to 1,024 (and for 100 MB) that is Rabenseifner's
  (coll_base_allreduce.c, redscat_allgather): with p' = 2^floor(log2 P), r = P - p',
  - fold: ranks 2i, 2i+1 (i < r) swap halves (n/2 each way), then 2i+1 sends its
    reduced half to 2i (n/2), and drops out;
  - reduce-scatter by recursive halving: log2 p' steps, step k (k = 0..) pairs virtual
    ranks v, v xor 2^k exchanging n / 2^(k+1) bytes (virtual rank v is real rank 2v
    for v < r, else v + r);
  - allgather by recursive doubling: the same pairs in reverse order, same sizes;
  - unfold: 2i sends the whole n to 2i+1.
  Each step takes the largest (rendezvous-scaled) latency of its cross-host messages
  plus the slowest link direction's wire time for the bytes crossing it in that step.
  With one rank per host, P = p' and no bucket or rendezvous, that is
  2 log2 P latencies + 2 (P - 1) / P * n / b. Recursive doubling (small messages):
  the fold, log2 p' steps of n bytes, the unfold; ring: as below; nonoverlapping
  (reduce + bcast): 2 ceil(log2 P) steps of n bytes over the worst pair latency.
  Horovod adds its negotiation: half a cycle (1 ms) plus its coordination allreduce
  (a bit vector: one 8-byte word, by the same Open MPI choice). On this_machine
  op_bench's hvd time holds all of it.
* ring allreduce (gloo, local SGD) of n bytes over P ranks (rank order = host order):
  2 (P - 1) steps; in each every rank sends n / P bytes to the next, after the
  receiver's recv-ready notification reached it (gloo's TCP transport). A step takes
  the slowest edge: 2 latencies + (n / P) * k_h / b_h, k_h the ring edges leaving host
  h (1 when ranks are numbered by host), less what the bucket covers. With one rank
  per host, uniform links and no bucket the total is 4 (P - 1) * latency +
  2 (P - 1) / P * n / b.
* WAGMA round over group G (the engine's algorithms, group_reduction.cc): n <= 64 KB,
  or |G| = 2 and n <= 8 MB: one direct exchange (every member sends n to every other);
  otherwise scatter-allgather, two exchanges of n / |G| chunks. An exchange takes the
  largest pair latency plus, per host link, the bytes crossing it / its rate, counting
  every group of the same phase (they run at about the same time, and a host's ranks
  are in different groups), less what the link's bucket covers (an exchange sends
  and receives the same bytes per host, so both directions' buckets evolve alike).
  A round activated by one member adds one activation message (activator -> members).

Where the constants come from: ``multihost``: lab/calibration/multihost_throughput.json,
scenarios.*.hosts (slots, latency_ms, rate_mbit) and rtt_ms (the software latency s);
the bucket B from hosts[].burst_kb when the file records it, else from
multihost/cluster.py's LINK_BURST_BYTES, the constant its ``tc ... tbf burst`` is
built from (``tbf_burst_bytes``).
``datacenter``: flags (``--latency-us`` 5 host to host, ``--bandwidth-gbit`` 100 per
GPU with one NIC per GPU, ``--overhead-us`` 0.5 per message sent, ``--ranks-per-host``
4; NVLink-class links within a host: 1 us, 400 Gbit/s); no CPU contention (cores per
GPU), w_app as calibrated, Horovod's 1 ms cycle.
"""
import dataclasses
import heapq
import math
import os
import re
import statistics
import sys
from typing import List, Optional

from .common import CalibrationError, interp_bytes

HOROVOD_CYCLE_S = 1e-3          # Horovod >= 0.21's default HOROVOD_CYCLE_TIME
SMALL_BYTES = 64 * 1024         # cpp_ops/engine/reduce/group_reduction.h ReductionThresholds
PAIR_SCATTER_BYTES = 8 << 20
OMPI_TCP_EAGER_BYTES = 64 * 1024  # btl_tcp_eager_limit default (btl_tcp_component.c)
FRAGMENT_UP_TO_BYTES = 4 << 20  # cpp_ops/engine/reduce/message_cut.h: larger messages not cut
COORDINATION_BYTES = 8          # Horovod's cache bit vector: one long long
def tbf_burst_bytes():
    """The token bucket of the emulated links, bytes per link direction: the constant
    multihost/cluster.py builds its ``tc ... tbf burst`` with; None where that package
    is not importable (links are then pure rate)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.append(root)
    try:
        from multihost.cluster import LINK_BURST_BYTES
    except ImportError:
        return None
    return float(LINK_BURST_BYTES)


def ompi_allreduce_algorithm(P, nbytes):
    """Open MPI 4.1.4 coll/tuned's fixed choice for a commutative MPI_Allreduce
    (ompi_coll_tuned_allreduce_intra_dec_fixed): 'recursive_doubling', 'ring',
    'segmented_ring', 'rabenseifner' or 'nonoverlapping'."""
    for below_P, table in _OMPI_ALLREDUCE_DECISION:
        if P < below_P:
            break
    for below_bytes, alg in table:
        if nbytes < below_bytes:
            return alg
    return "rabenseifner"


_RD, _RING, _SEG, _NO = "recursive_doubling", "ring", "segmented_ring", "nonoverlapping"
# ompi_coll_tuned_allreduce_intra_dec_fixed, commutative: (communicator size below
# which a row applies, [(message bytes below which, algorithm)]); Rabenseifner past
# the last threshold of the row; the last row is for every larger size.
_OMPI_ALLREDUCE_DECISION = [
    (4, [(8, _RING), (4096, _RD), (8192, _RING), (16384, _RD), (65536, _RING),
         (262144, _SEG)]),
    (8, [(16, _RING), (8192, _RD)]),
    (16, [(8192, _RD)]),
    (32, [(64, _SEG), (4096, _RD)]),
    (64, [(128, _SEG)]),
    (128, [(262144, _RD)]),
    (256, [(131072, _NO), (262144, _RD)]),
    (512, [(4096, _NO)]),
    (2048, [(2048, _NO), (16384, _RD)]),
    (4096, [(2048, _NO), (4096, _SEG), (16384, _RD)]),
    (math.inf, [(2048, _NO), (16384, _RD), (65536, _RING)]),
]


class Buckets:
    """Token-bucket levels of the link directions touched by one collective (fluid
    model, module docstring): ``push(key, L)`` returns the seconds beyond the bucket,
    max(0, L - k) / rate, and drains it; ``idle(key, t)`` refills min(B, k + rate t).
    Keys are (host, "up"|"down"); every level starts full (B)."""

    def __init__(self, net):
        self.net = net
        self.level = {}

    def _burst(self, h):
        b = self.net.burst_B
        return 0.0 if b is None else float(b[h])

    def push(self, key, nbytes):
        h = key[0]
        k = self.level.get(key, self._burst(h))
        self.level[key] = max(0.0, k - nbytes)
        return max(0.0, nbytes - k) / self.net.rate_Bps[h]

    def idle(self, key, seconds):
        h = key[0]
        B = self._burst(h)
        if seconds > 0 and B > 0:
            self.level[key] = min(B, self.level.get(key, B) + self.net.rate_Bps[h] * seconds)


@dataclasses.dataclass
class Network:
    """Hosts, their links, and how host CPU is shared.

    ``host_of[r]`` is rank r's host; ``latency_s[h]``/``rate_Bps[h]`` host h's link
    (one way, each direction). ``cpu``: "machine" (one pool of C_eff cores for every
    rank: this machine, and the emulated hosts that all run on it), "per_host" (a pool
    of C_eff cores per host) or "dedicated" (no contention). ``comm_cpu``: rounds cost
    op_bench-calibrated CPU work (this machine's memory copies); else only the
    network's time. ``burst_B[h]``: host h's token bucket in bytes, each direction
    (None: pure rate). ``eager_B``: MPI messages above it go by rendezvous (None:
    never; module docstring)."""
    name: str
    host_of: List[int]
    latency_s: List[float]
    rate_Bps: List[float]
    software_s: float = 0.0          # per cross-host message
    intra_latency_s: float = 0.0     # within a host (when comm_cpu is False)
    intra_Bps: float = math.inf
    overhead_s: float = 0.0          # per message sent (injection)
    cpu: str = "machine"
    comm_cpu: bool = True
    app_cpu: bool = True             # charge w_app per step
    cycle_s: float = 0.0             # Horovod's negotiation cycle (0: inside op_bench)
    burst_B: Optional[List[float]] = None   # tc tbf burst per host link direction
    eager_B: Optional[int] = None           # MPI eager limit (rendezvous above)
    # Which allreduce implementations run: "ompi_gloo" (what this project's runs use:
    # Horovod's MPI_Allreduce by Open MPI's choice, local SGD's gloo ring with its
    # recv-ready handshake) or "ring" (a GPU cluster: NCCL-style rings, one latency
    # per step, for both; the ring cost the issue specifies for Horovod at scale).
    allreduce_impl: str = "ompi_gloo"
    # Horovod's whole collective (negotiation + MPI_Allreduce) measured alone on this
    # very network at its P: [(bytes, seconds)] and the file it came from
    # (op_bench_multihost_<scenario>.json; None: not measured).
    horovod_measured: Optional[List[tuple]] = None
    horovod_measured_from: str = ""

    @property
    def P(self):
        return len(self.host_of)

    def hosts(self):
        return sorted(set(self.host_of))

    def msg_latency(self, a, b):
        """One-way latency of a message from host a to host b (no payload)."""
        if a == b:
            return self.intra_latency_s
        return self.latency_s[a] + self.latency_s[b] + self.software_s

    def max_latency(self, ranks):
        """The largest one-way latency between two of the ranks' hosts: the sum of the
        two largest link latencies (plus the software latency)."""
        hs = {self.host_of[r] for r in ranks}
        if len(hs) == 1:
            return self.intra_latency_s
        top = heapq.nlargest(2, (self.latency_s[h] for h in hs))
        return top[0] + top[1] + self.software_s

    @staticmethod
    def direct_exchange(g, nbytes):
        """The engine's choice (group_reduction.cc): one direct exchange for small
        tensors and pairs up to 8 MB, else scatter-allgather."""
        return nbytes <= SMALL_BYTES or (g == 2 and nbytes <= PAIR_SCATTER_BYTES)

    def link_loads(self, groups, nbytes):
        """{host: bytes through its link (each direction) in one exchange step} when
        every group in ``groups`` runs its round at the same time (the groups of one
        phase: a host's ranks are in different groups and share its link)."""
        load = {}
        for G in groups:
            g = len(G)
            if g < 2:
                continue
            chunk = nbytes if self.direct_exchange(g, nbytes) else nbytes / g
            count = {}
            for m in G:
                h = self.host_of[m]
                count[h] = count.get(h, 0) + 1
            if len(count) < 2:
                continue
            for h, c in count.items():
                load[h] = load.get(h, 0.0) + c * (g - c) * chunk
        return load

    def _cross_bytes_limit(self, nbytes, whole):
        """Bytes of a cross-host message that leave before the receiver's
        acknowledgement: all of them, or the first eager_B under rendezvous (an MPI
        message above the eager limit; the engine's messages only above
        FRAGMENT_UP_TO_BYTES, which it does not cut)."""
        if self.eager_B is None or nbytes <= self.eager_B:
            return nbytes
        if not whole and nbytes <= FRAGMENT_UP_TO_BYTES:
            return nbytes
        return self.eager_B

    def step_time(self, msgs, buckets=None, whole=True, handshake=False):
        """One step in which the messages ``msgs`` [(src rank, dst rank, bytes)] are
        in flight together: the largest cross-host latency (times 3 when one of them
        goes by rendezvous) plus the slowest link direction's wire time, pushing through
        ``buckets`` (None: pure rate); the bytes past the eager limit are pushed after
        the acknowledgement's round trip. ``whole``: MPI messages as posted (the engine
        cuts its own, module docstring). ``handshake`` (gloo): a message leaves only
        once the receiver's ready notification arrived: one more latency first, during
        which the buckets refill. Within a host (comm_cpu False): latency + bytes /
        intra rate. Plus one injection overhead (each rank sends at most one message
        per step here)."""
        first, rest, lat, intra = {}, {}, 0.0, 0.0
        for a, b, m in msgs:
            ha, hb = self.host_of[a], self.host_of[b]
            if ha == hb:
                intra = max(intra, m)
                continue
            lat = max(lat, self.msg_latency(ha, hb))
            f = self._cross_bytes_limit(m, whole)
            for key in ((ha, "up"), (hb, "down")):
                first[key] = first.get(key, 0.0) + f
                if m > f:
                    rest[key] = rest.get(key, 0.0) + m - f
        t = 0.0
        if first:
            wait = lat if handshake else 0.0
            if buckets is not None and wait:
                for k in list(buckets.level):
                    buckets.idle(k, wait)

            def push(loads):
                if buckets is None:
                    own = {k: v / self.rate_Bps[k[0]] for k, v in loads.items()}
                else:
                    own = {k: buckets.push(k, v) for k, v in loads.items()}
                return own, max(own.values(), default=0.0)
            own_a, wire_a = push(first)
            if rest:
                if buckets is not None:
                    for k in first:
                        buckets.idle(k, wire_a - own_a[k] + 2 * lat)
                own_b, wire_b = push(rest)
                t = 3 * lat + wire_a + wire_b
                if buckets is not None:
                    for k in first:
                        buckets.idle(k, wire_b - own_b.get(k, 0.0) + lat)
            else:
                t = lat + wire_a
                if buckets is not None:
                    for k in first:
                        buckets.idle(k, t - own_a[k])
            if buckets is not None:
                for k in list(buckets.level):
                    if k not in first:
                        buckets.idle(k, t)
            t += wait
        if intra and not self.comm_cpu:
            t = max(t, self.intra_latency_s + intra / self.intra_Bps)
        return t + self.overhead_s

    def _steps_time(self, steps, whole=True, handshake=False):
        """A collective's steps in order, buckets full at its start and carried from
        step to step; ``steps`` yields (msgs, repeat). Repeated steps stop being
        evaluated once the levels no longer change (then every further one costs
        the same)."""
        buckets = Buckets(self) if self.burst_B is not None else None
        total = 0.0
        for msgs, repeat in steps:
            prev = None
            for i in range(repeat):
                t = self.step_time(msgs, buckets, whole, handshake)
                total += t
                state = None if buckets is None else dict(buckets.level)
                if state == prev:
                    total += t * (repeat - i - 1)
                    break
                prev = state
        return total

    def exchange_time(self, members, chunk, loads=None, buckets=None):
        """One step in which every member sends ``chunk`` bytes to every other: the
        largest pair latency plus the busiest of the members' host links (``loads``:
        bytes per link including concurrent groups; default: these members only), less
        what the link's token bucket covers (``buckets``: carried over from an earlier
        step; default: full, when the network has buckets). Both directions of a
        host's link carry the same bytes here, so the "up" level stands for both."""
        count = {}
        for m in members:
            h = self.host_of[m]
            count[h] = count.get(h, 0) + 1
        g = len(members)
        if buckets is None and self.burst_B is not None:
            buckets = Buckets(self)
        t = 0.0
        if len(count) > 1:
            if loads is None:
                loads = {h: c * (g - c) * chunk for h, c in count.items()}
            if buckets is None:
                own = {h: loads.get(h, 0.0) / self.rate_Bps[h] for h in count}
            else:
                own = {h: buckets.push((h, "up"), loads.get(h, 0.0)) for h in count}
            lat = self.max_latency(members)
            if self.eager_B is not None and chunk > FRAGMENT_UP_TO_BYTES:
                lat *= 3     # the engine does not cut these: rendezvous
            t = lat + max(own.values())
            if buckets is not None:
                for h in count:
                    buckets.idle((h, "up"), t - own[h])
        if any(c > 1 for c in count.values()) and not self.comm_cpu:
            intra = max(c for c in count.values())
            t = max(t, self.intra_latency_s + (intra - 1) * chunk / self.intra_Bps)
        return t + (g - 1) * self.overhead_s

    def round_time(self, members, nbytes, activator=None, concurrent=None):
        """Network seconds of one WAGMA round over ``members`` (the engine's
        algorithm), activated by ``activator`` (None: every member entered), while
        the groups in ``concurrent`` (the round's phase) run theirs too. The buckets
        start full and carry from the first exchange to the second."""
        g = len(members)
        if g < 2:
            return 0.0
        act = 0.0
        if activator is not None:
            a = self.host_of[activator]
            others = {self.host_of[m] for m in members if m != activator}
            act = max(self.msg_latency(a, h) for h in others)
        loads = None if concurrent is None else self.link_loads(concurrent, nbytes)
        buckets = Buckets(self) if self.burst_B is not None else None
        if self.direct_exchange(g, nbytes):
            return act + self.exchange_time(members, nbytes, loads, buckets)
        return act + sum(self.exchange_time(members, nbytes / g, loads, buckets)
                         for _ in range(2))

    def ring_allreduce_time(self, nbytes, P=None, handshake=None):
        """gloo's ring allreduce (local SGD): 2 (P - 1) steps of n / P bytes to the next
        rank (ranks 0..P-1 in order). gloo's TCP transport sends a buffer only after the
        receiver's recv-ready notification (gloo/transport/tcp/pair.cc: "sends cannot
        execute until the remote side is ready to receive"), and its ring
        (gloo/allreduce.cc) posts segment i's receive when segment i - 2's has
        completed: each step costs the notification's latency, then the data's
        latency and wire time. Uniform links, one rank per host, no bucket:
        4 (P - 1) * latency + 2 (P - 1) / P * n / b. Without the handshake
        (``allreduce_impl`` "ring": an NCCL-style ring) one latency per step:
        2 (P - 1) * latency + 2 (P - 1) / P * n / b."""
        P = P or self.P
        if P < 2:
            return 0.0
        if handshake is None:
            handshake = self.allreduce_impl != "ring"
        msgs = [(r, (r + 1) % P, nbytes / P) for r in range(P)]
        return self._steps_time([(msgs, 2 * (P - 1))], whole=False, handshake=handshake)

    def mpi_allreduce_steps(self, nbytes, P=None, elem=4):
        """(algorithm, steps) of an MPI_Allreduce of ``nbytes`` (Open MPI 4.1.4's
        choice, module docstring); steps as [(msgs, repeat)]."""
        P = P or self.P
        alg = ompi_allreduce_algorithm(P, nbytes)
        if alg in ("ring", "segmented_ring") and nbytes // elem < P:
            alg = "recursive_doubling"   # coll_base_allreduce.c: count < size
        if P < 2:
            return alg, []
        pof2 = 1 << (P.bit_length() - 1)
        rem = P - pof2
        if alg in ("ring", "segmented_ring"):
            return alg, [([(r, (r + 1) % P, nbytes / P) for r in range(P)], 2 * (P - 1))]
        if alg == "nonoverlapping":      # binomial reduce to 0, then binomial bcast
            tree = []
            d = 1
            while d < P:
                tree.append([(r, r - d, nbytes) for r in range(d, P, 2 * d)])
                d *= 2
            return alg, [(m, 1) for m in tree] + \
                [([(b, a, x) for a, b, x in m], 1) for m in reversed(tree)]
        steps = []
        if alg == "recursive_doubling":  # coll_base_allreduce_intra_recursivedoubling
            real = lambda v: 2 * v + 1 if v < rem else v + rem
            if rem:
                steps.append(([(2 * i, 2 * i + 1, nbytes) for i in range(rem)], 1))
            d = 1
            while d < pof2:
                steps.append(([(real(v), real(v ^ d), nbytes) for v in range(pof2)], 1))
                d *= 2
            if rem:
                steps.append(([(2 * i + 1, 2 * i, nbytes) for i in range(rem)], 1))
            return alg, steps
        # rabenseifner (coll_base_allreduce_intra_redscat_allgather)
        real = lambda v: 2 * v if v < rem else v + rem
        if rem:
            steps.append(([m for i in range(rem) for m in ((2 * i, 2 * i + 1, nbytes / 2),
                                                           (2 * i + 1, 2 * i, nbytes / 2))], 1))
            steps.append(([(2 * i + 1, 2 * i, nbytes / 2) for i in range(rem)], 1))
        rs, d, size = [], 1, nbytes
        while d < pof2:
            size /= 2
            rs.append(([(real(v), real(v ^ d), size) for v in range(pof2)], 1))
            d *= 2
        steps += rs + rs[::-1]
        if rem:
            steps.append(([(2 * i, 2 * i + 1, nbytes) for i in range(rem)], 1))
        return alg, steps

    def mpi_allreduce_time(self, nbytes, P=None, elem=4):
        """Network seconds of an MPI_Allreduce of ``nbytes`` over ranks 0..P-1 by the
        algorithm Open MPI picks (mpi_allreduce_steps), messages whole (rendezvous
        above the eager limit), buckets full at its start."""
        return self._steps_time(self.mpi_allreduce_steps(nbytes, P, elem)[1], whole=True)

    def measured_horovod_time(self, nbytes):
        """Horovod's collective over all P ranks as measured on this network (linear
        in bytes), or None when it was not measured."""
        if not self.horovod_measured:
            return None
        return interp_bytes(self.horovod_measured, nbytes)

    def horovod_allreduce_time(self, nbytes, P=None):
        """Horovod's gradient allreduce as modelled: its negotiation, then MPI_Allreduce
        by Open MPI's choice ("ompi_gloo") or a ring ("ring")."""
        if self.allreduce_impl == "ring":
            return self.negotiation_time(P) + self.ring_allreduce_time(nbytes, P)
        return self.negotiation_time(P) + self.mpi_allreduce_time(nbytes, P)

    def negotiation_time(self, P=None):
        """Horovod's coordination before each allreduce: half a cycle plus its
        coordination allreduce of the cache bit vector (one 8-byte word): by Open MPI's
        choice for that size (recursive doubling at 4 to 63 ranks), or, for "ring",
        ceil(log2 P) message latencies (a tree over the slowest pair)."""
        P = P or self.P
        if P < 2:
            return 0.5 * self.cycle_s
        if self.allreduce_impl == "ring":
            return 0.5 * self.cycle_s + math.ceil(math.log2(P)) * self.max_latency(range(P))
        return 0.5 * self.cycle_s + self.mpi_allreduce_time(COORDINATION_BYTES, P, elem=8)


def this_machine(P):
    """One host: every cost is CPU work on this machine's cores."""
    return Network("this_machine", [0] * P, [0.0], [math.inf])


def hosts_network(name, P, slots, latency_s, rate_Bps, **kw):
    """Hosts of ``slots`` ranks each (the last may hold fewer), ranks numbered by host;
    ``latency_s``/``rate_Bps`` per host (a list) or for all (a number)."""
    nh = -(-P // slots)
    host_of = [r // slots for r in range(P)]
    lat = latency_s if isinstance(latency_s, list) else [latency_s] * nh
    rate = rate_Bps if isinstance(rate_Bps, list) else [rate_Bps] * nh
    return Network(name, host_of, lat[:nh], rate[:nh], **kw)


def multihost_from_scenario(scn, P=None, cpu="machine"):
    """The emulated cluster of a multihost_throughput.json scenario: host specs from
    ``hosts`` (one-way latency_ms, rate_mbit, burst_kb if recorded), software latency
    from ``rtt_ms``; the token bucket from multihost/cluster.py's tc command when the
    file does not record it (None, pure rate, if neither has it); Open MPI's TCP eager
    limit for rendezvous."""
    try:
        hosts = scn["hosts"]
        lat = [float(h["latency_ms"]) / 1e3 for h in hosts]
        rate = [float(h["rate_mbit"]) * 1e6 / 8 for h in hosts]
        slots = [int(h["slots"]) for h in hosts]
        rtt = scn.get("rtt_ms", {})
        if all("burst_kb" in h for h in hosts):
            burst = [float(h["burst_kb"]) * 1024 for h in hosts]
        else:
            b = tbf_burst_bytes()
            burst = None if b is None else [float(b)] * len(hosts)
    except (KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"multihost scenario lacks hosts[].slots/latency_ms/"
                               f"rate_mbit: {e!r}") from None
    extra = []
    for key, ms in rtt.items():
        m = re.fullmatch(r"h(\d+)->h(\d+)", key)
        if m:
            a, b = int(m.group(1)) - 1, int(m.group(2)) - 1
            extra.append(max(0.0, float(ms) / 1e3 - 2 * (lat[a] + lat[b])) / 2)
    software = statistics.mean(extra) if extra else 0.0
    kw = dict(software_s=software, cpu=cpu, eager_B=OMPI_TCP_EAGER_BYTES)
    if P is None:
        host_of = [h for h, s in enumerate(slots) for _ in range(s)]
        return Network("multihost", host_of, lat, rate, burst_B=burst, **kw)
    # Scaled out: hosts like the first (fast) one.
    net = hosts_network("multihost", P, slots[0], lat[0], rate[0], **kw)
    net.burst_B = None if burst is None else [burst[0]] * len(net.rate_Bps)
    return net


def datacenter(P, latency_us=5.0, bandwidth_gbit=100.0, ranks_per_host=4,
               intra_latency_us=1.0, intra_bandwidth_gbit=400.0, overhead_us=0.5,
               cycle_s=HOROVOD_CYCLE_S):
    """GPU-cluster-like: the multihost model's cost functions with its constants
    replaced: ``latency_us`` host to host (split over the two links),
    ``bandwidth_gbit`` per GPU (one NIC per GPU: a host's link carries
    ``ranks_per_host`` times that), NVLink-class links within a host, no CPU
    contention."""
    return hosts_network("datacenter", P, ranks_per_host, latency_us * 1e-6 / 2,
                         ranks_per_host * bandwidth_gbit * 1e9 / 8,
                         intra_latency_s=intra_latency_us * 1e-6,
                         intra_Bps=intra_bandwidth_gbit * 1e9 / 8,
                         overhead_s=overhead_us * 1e-6, cpu="dedicated", comm_cpu=False,
                         cycle_s=cycle_s, allreduce_impl="ring")
