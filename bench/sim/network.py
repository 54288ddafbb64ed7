"""Hosts, their links, and what a collective costs on them (``multihost``,
``datacenter``; ``this_machine`` is one host where every cost is CPU work).

Host h has one link to a switch with one-way latency l_h and rate b_h (both
directions). A message of m bytes from host a to host b takes l_a + l_b + s + m /
min(b_a, b_b), s being the per-message software latency (``multihost``: the measured
round trip minus the configured one, halved). Messages within a host: ``multihost``:
the same CPU work as this_machine; ``datacenter``: latency l_i, rate b_i (flags).
Per message sent each rank also pays an injection overhead o (``datacenter`` only).

* ring allreduce (Horovod, gloo) of n bytes over P ranks (rank order = host order):
  2 (P - 1) steps; in each every rank sends n / P bytes to the next. A step takes the
  slowest edge: latency + (n / P) * k_h / b_h, k_h the ring edges leaving host h (1
  when ranks are numbered by host). With one rank per host and uniform links the
  total is 2 (P - 1) * latency + 2 (P - 1) / P * n / b.
  Horovod adds its negotiation: half a cycle (1 ms) plus ceil(log2 P) message
  latencies (the coordination allreduce); on this_machine op_bench's hvd time holds it.
* WAGMA round over group G (the engine's algorithms, group_reduction.cc): n <= 64 KB,
  or |G| = 2 and n <= 8 MB: one direct exchange (every member sends n to every other);
  otherwise scatter-allgather, two exchanges of n / |G| chunks. An exchange takes the
  largest pair latency plus, per host link, the bytes crossing it / its rate, counting
  every group of the same phase (they run at about the same time, and a host's ranks
  are in different groups). A round activated by one member adds one activation
  message (activator -> members).

Where the constants come from: ``multihost``: bench/results/multihost_throughput.json,
scenarios.*.hosts (slots, latency_ms, rate_mbit) and rtt_ms (the software latency s).
``datacenter``: flags (``--latency-us`` 5 host to host, ``--bandwidth-gbit`` 100 per
GPU with one NIC per GPU, ``--overhead-us`` 0.5 per message sent, ``--ranks-per-host``
4; NVLink-class links within a host: 1 us, 400 Gbit/s); no CPU contention (cores per
GPU), w_app as calibrated, Horovod's 1 ms cycle.
"""
import dataclasses
import heapq
import math
import re
import statistics
from typing import List

from .common import CalibrationError

HOROVOD_CYCLE_S = 1e-3          # Horovod >= 0.21's default HOROVOD_CYCLE_TIME
SMALL_BYTES = 64 * 1024         # cpp_ops/engine/group_reduction.h ReductionThresholds
PAIR_SCATTER_BYTES = 8 << 20


@dataclasses.dataclass
class Network:
    """Hosts, their links, and how host CPU is shared.

    ``host_of[r]`` is rank r's host; ``latency_s[h]``/``rate_Bps[h]`` host h's link
    (one way, each direction). ``cpu``: "machine" (one pool of C_eff cores for every
    rank: this machine, and the emulated hosts that all run on it), "per_host" (a pool
    of C_eff cores per host) or "dedicated" (no contention). ``comm_cpu``: rounds cost
    op_bench-calibrated CPU work (this machine's memory copies); else only the
    network's time."""
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

    def exchange_time(self, members, chunk, loads=None):
        """One step in which every member sends ``chunk`` bytes to every other: the
        largest pair latency plus the busiest of the members' host links (``loads``:
        bytes per link including concurrent groups; default: these members only)."""
        count = {}
        for m in members:
            h = self.host_of[m]
            count[h] = count.get(h, 0) + 1
        g = len(members)
        t = 0.0
        if len(count) > 1:
            if loads is None:
                loads = {h: c * (g - c) * chunk for h, c in count.items()}
            wire = max(loads.get(h, 0.0) / self.rate_Bps[h] for h in count)
            t = self.max_latency(members) + wire
        if any(c > 1 for c in count.values()) and not self.comm_cpu:
            intra = max(c for c in count.values())
            t = max(t, self.intra_latency_s + (intra - 1) * chunk / self.intra_Bps)
        return t + (g - 1) * self.overhead_s

    def round_time(self, members, nbytes, activator=None, concurrent=None):
        """Network seconds of one WAGMA round over ``members`` (the engine's
        algorithm), activated by ``activator`` (None: every member entered), while
        the groups in ``concurrent`` (the round's phase) run theirs too."""
        g = len(members)
        if g < 2:
            return 0.0
        act = 0.0
        if activator is not None:
            a = self.host_of[activator]
            others = {self.host_of[m] for m in members if m != activator}
            act = max(self.msg_latency(a, h) for h in others)
        loads = None if concurrent is None else self.link_loads(concurrent, nbytes)
        if self.direct_exchange(g, nbytes):
            return act + self.exchange_time(members, nbytes, loads)
        return act + 2 * self.exchange_time(members, nbytes / g, loads)

    def ring_allreduce_time(self, nbytes, P=None):
        """2 (P - 1) steps of n / P bytes to the next rank (ranks 0..P-1 in order)."""
        P = P or self.P
        if P < 2:
            return 0.0
        chunk = nbytes / P
        leaving = {}
        worst_lat, intra = 0.0, False
        for r in range(P):
            a, b = self.host_of[r], self.host_of[(r + 1) % P]
            if a != b:
                leaving[a] = leaving.get(a, 0) + 1
                worst_lat = max(worst_lat, self.msg_latency(a, b))
            else:
                intra = True
        step = 0.0
        if leaving:
            step = worst_lat + max(k * chunk / self.rate_Bps[h] for h, k in leaving.items())
        if intra and not self.comm_cpu:
            step = max(step, self.intra_latency_s + chunk / self.intra_Bps)
        return 2 * (P - 1) * (step + self.overhead_s)

    def negotiation_time(self, P=None):
        """Horovod's coordination before each allreduce: half a cycle plus a small
        allreduce of ceil(log2 P) message latencies."""
        P = P or self.P
        depth = math.ceil(math.log2(P)) if P > 1 else 0
        return 0.5 * self.cycle_s + depth * self.max_latency(range(P))


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
    ``hosts`` (one-way latency_ms, rate_mbit), software latency from ``rtt_ms``."""
    try:
        hosts = scn["hosts"]
        lat = [float(h["latency_ms"]) / 1e3 for h in hosts]
        rate = [float(h["rate_mbit"]) * 1e6 / 8 for h in hosts]
        slots = [int(h["slots"]) for h in hosts]
        rtt = scn.get("rtt_ms", {})
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
    if P is None:
        host_of = [h for h, s in enumerate(slots) for _ in range(s)]
        return Network("multihost", host_of, lat, rate, software_s=software, cpu=cpu)
    # Scaled out: hosts like the first (fast) one.
    return hosts_network("multihost", P, slots[0], lat[0], rate[0], software_s=software,
                         cpu=cpu)


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
                         cycle_s=cycle_s)
