"""Emulated hosts on one machine: Linux network namespaces joined by a router
namespace, with per-host link latency and a bandwidth cap.

Topology (host H = 1..N, addresses in the benchmarking range 198.18.0.0/15 only):

    wagma-hH: eth0 198.18.H.2/24 --veth-- r-hH 198.18.H.1/24 :wagma-router
                                                     | every forwarded packet
                                                     v
                                         tun0 -> delayline (latency) -> tun0

- Each host namespace has loopback, one `eth0` (the same name on every host, as on
  real nodes, so `btl_tcp_if_include eth0` / `--network-interface eth0` work) and a
  single route, 198.18.0.0/15 via its router address: no route leads off the
  machine, and the root namespace is not reachable from a host.
- Latency: this kernel has no sch_netem (CONFIG_NET_SCH_NETEM unset, so `tc qdisc
  ... netem` fails), so the router sends every packet through a TUN device served by
  `delayline.c`, which holds it for the source's uplink plus the destination's
  downlink latency. Policy routing: packets from the hosts go to tun0 (table 200);
  packets coming back out of tun0 go to the hosts' veths (table 100).
- Bandwidth: `tc tbf` on both ends of each host's veth (uplink and downlink).
- Names: each host's hostname (its namespace name, set by agent.sh) resolves to its
  eth0 address on every host, as cluster DNS does on real nodes: `ip netns exec`
  mounts /etc/netns/wagma-hH/hosts over /etc/hosts. Gloo needs it (Horovod's Gloo
  context binds a process set's device by hostname, not by HOROVOD_GLOO_IFACE).
- Everything is removed on exit, on failure and on SIGINT/SIGTERM; `cleanup()`
  first removes what an earlier run left (namespaces named wagma-*, its delayline).
"""
import atexit
import glob
import ipaddress
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "wagma-"
ROUTER = PREFIX + "router"
NETWORK = ipaddress.ip_network("198.18.0.0/15")
TUN = "tun0"
NETNS_ETC = "/etc/netns"  # ip netns exec mounts NETNS_ETC/<ns>/<file> over /etc/<file>
DELAYLINE_SRC = os.path.join(HERE, "delayline.c")
AGENT = os.path.join(HERE, "agent.sh")
TCP_RETRIES2 = 5
# Each link direction's token bucket (tc tbf burst): a few full-size segments pass at
# line rate after an idle spell. lab/simulate.py models it from this constant.
LINK_BURST_BYTES = 128 * 1024


@dataclass
class Link:
    """One host's link to the switch: one-way latency and rate, each direction."""
    latency_ms: float = 1.0
    rate_mbit: float = 1000.0


@dataclass
class HostSpec:
    slots: int = 2
    link: Link = field(default_factory=Link)


def host_address(index):
    return f"198.18.{index}.2"


def namespace(index):
    return f"{PREFIX}h{index}"


def _run(*cmd, check=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def _in_ns(ns, *cmd, check=True):
    return _run("ip", "netns", "exec", ns, *cmd, check=check)


def why_unavailable():
    """None where namespaces can be made here, else the reason (for a clear skip)."""
    if os.geteuid() != 0:
        return "emulated hosts need root (ip netns, veth, tc)"
    for tool in ("ip", "tc", "gcc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make multihost installs iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing (the latency emulation needs a TUN device)"
    probe = PREFIX + "probe"
    _run("ip", "netns", "del", probe, check=False)
    made = _run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    _run("ip", "netns", "del", probe, check=False)
    return None


def _kill_namespace_processes(ns, sig=signal.SIGKILL):
    for pid in _run("ip", "netns", "pids", ns, check=False).stdout.split():
        try:
            os.kill(int(pid), sig)
        except (ProcessLookupError, ValueError):
            pass


def cleanup():
    """Removes every namespace named wagma-* (ours, from this or an earlier run) and
    the processes inside them; the veths and the TUN device go with them."""
    listed = _run("ip", "netns", "list", check=False).stdout.split("\n")
    for line in listed:
        ns = line.split(" ")[0].strip()
        if ns.startswith(PREFIX):
            _kill_namespace_processes(ns)
            _run("ip", "netns", "del", ns, check=False)
    for path in glob.glob(os.path.join(NETNS_ETC, PREFIX + "*")):
        shutil.rmtree(path, ignore_errors=True)


def build_delayline(out_dir):
    binary = os.path.join(out_dir, "delayline")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(DELAYLINE_SRC):
        _run("gcc", "-O2", "-Wall", "-o", binary, DELAYLINE_SRC)
    return binary


class EmulatedCluster:
    """Context manager: creates the hosts on entry, removes them on exit (and on
    SIGINT/SIGTERM, and at interpreter exit if something skipped __exit__)."""

    def __init__(self, hosts, work_dir):
        if len(hosts) < 1 or len(hosts) > 200:
            raise ValueError(f"between 1 and 200 hosts, got {len(hosts)}")
        self.hosts = list(hosts)
        self.work_dir = work_dir
        self._delayline = None
        self._old_handlers = {}

    # -- addresses and launch -----------------------------------------------------
    @property
    def addresses(self):
        return [host_address(i + 1) for i in range(len(self.hosts))]

    def ranks_of_host(self, index):
        """World ranks placed on host `index` (1-based) by --map-by slot."""
        first = sum(h.slots for h in self.hosts[:index - 1])
        return list(range(first, first + self.hosts[index - 1].slots))

    @property
    def size(self):
        return sum(h.slots for h in self.hosts)

    def hostfile(self):
        path = os.path.join(self.work_dir, "hostfile")
        with open(path, "w") as f:
            for addr, h in zip(self.addresses, self.hosts):
                f.write(f"{addr} slots={h.slots}\n")
        return path

    MCA = {"plm_rsh_agent": AGENT,  # how daemons reach a host (ssh on real nodes)
           "oob_tcp_if_include": "eth0",  # runtime traffic: the cluster network
           "btl_tcp_if_include": "eth0",  # MPI traffic: the cluster network
           "btl": "self,vader,tcp",  # shared memory within a host, TCP between
           "mpi_yield_when_idle": "1",  # more ranks than cores (docs/launching.md)
           # mpirun notices a node that fell off the network in ~20 s, not the
           # default 480 s (300 s idle + 9 probes 20 s apart), and ends the job.
           "oob_tcp_keepalive_time": "10", "oob_tcp_keepalive_intvl": "2",
           "oob_tcp_keepalive_probes": "5"}

    def mca(self, keys=None):
        """The Open MPI settings of the README's multi-node recipe, as arguments."""
        return [a for k, v in self.MCA.items() if keys is None or k in keys
                for a in ("--mca", k, v)]

    def mpirun(self, argv, np_=None):
        """An mpirun command line run from host 1 (the head node)."""
        return self.head(["mpirun", "--allow-run-as-root", "-np", str(np_ or self.size),
                          "--hostfile", self.hostfile(), "--map-by", "slot",
                          "--bind-to", "none", *self.mca(), *argv])

    def horovodrun(self, argv, horovodrun=os.path.join(os.path.dirname(sys.executable),
                                                       "horovodrun")):
        """The same launch through `horovodrun --mpi -H`: its ssh reachability check
        and its remote commands go through the agent, put first on PATH as `ssh`."""
        hosts = ",".join(f"{a}:{h.slots}" for a, h in zip(self.addresses, self.hosts))
        # horovodrun sets btl itself (^openib) and btl_tcp_if_include from
        # --network-interface, and Open MPI refuses a parameter given twice; its
        # daemons start through `ssh`, which is the agent on PATH (env()).
        mpi_args = " ".join(self.mca(keys=[k for k in self.MCA
                                           if k.startswith("oob_") or k.startswith("mpi_")]))
        return self.head([horovodrun, "--mpi", "-np", str(self.size), "-H", hosts,
                          "--network-interface", "eth0", f"--mpi-args={mpi_args}", "--verbose",
                          *argv])

    def horovodrun_gloo(self, argv, np_=None,
                        horovodrun=os.path.join(os.path.dirname(sys.executable),
                                                "horovodrun")):
        """The same launch on Gloo, no MPI in the job: `horovodrun --gloo -H`, run
        from host 1 (its rendezvous server listens there), workers started through
        the agent as `ssh`, Gloo's traffic on eth0."""
        hosts = ",".join(f"{a}:{h.slots}" for a, h in zip(self.addresses, self.hosts))
        return self.head([horovodrun, "--gloo", "-np", str(np_ or self.size), "-H", hosts,
                          "--network-interface", "eth0", *argv])

    def head(self, argv):
        """argv on host 1, through the agent (its namespace and hostname)."""
        return [AGENT, host_address(1), shlex.join(argv)]

    def env(self, base=None):
        """Environment for a launch: the agent as `ssh` first on PATH (horovodrun)."""
        env = dict(base if base is not None else os.environ)
        env["PATH"] = os.path.join(HERE, "bin") + os.pathsep + env.get("PATH", "")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        return env

    # -- faults -------------------------------------------------------------------
    def cut_link(self, index):
        """Host `index` drops off the network: its router-side veth goes down."""
        _in_ns(ROUTER, "ip", "link", "set", f"r-h{index}", "down")

    def kill_host(self, index, sig=signal.SIGKILL):
        """Every process in host `index`'s namespace gets `sig` (a crashed node)."""
        _kill_namespace_processes(namespace(index), sig)

    def restore(self):
        """After a fault: no process left in any host, then every link up again."""
        # The processes cut off with a link are still running: they must be gone
        # before the link returns (seen: the next launch, right after a cut link came
        # back, failed to start its daemons while they were still dying).
        for i in range(1, len(self.hosts) + 1):
            _kill_namespace_processes(namespace(i))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
                _run("ip", "netns", "pids", namespace(i), check=False).stdout.split()
                for i in range(1, len(self.hosts) + 1)):
            time.sleep(0.1)
        for i in range(1, len(self.hosts) + 1):
            _in_ns(ROUTER, "ip", "link", "set", f"r-h{i}", "up")
            # Routes through a veth vanish while it is down: put the host's back.
            _in_ns(ROUTER, "ip", "route", "replace", f"198.18.{i}.0/24", "dev", f"r-h{i}",
                   "table", "100")
        # Wait until both ends of every link report carrier again.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(
                _in_ns(ns, "cat", f"/sys/class/net/{dev}/operstate").stdout.strip() == "up"
                for i in range(1, len(self.hosts) + 1)
                for ns, dev in ((namespace(i), "eth0"), (ROUTER, f"r-h{i}"))):
            time.sleep(0.1)

    def link_bytes(self, index):
        """Bytes sent plus received on host `index`'s eth0 (what crossed its link)."""
        out = _in_ns(namespace(index), "cat", "/sys/class/net/eth0/statistics/rx_bytes",
                     "/sys/class/net/eth0/statistics/tx_bytes").stdout.split()
        return sum(int(x) for x in out)

    # -- setup and teardown -------------------------------------------------------
    def __enter__(self):
        cleanup()  # leftovers of an earlier run first
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        atexit.register(self.close)
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _on_signal(self, sig, frame):
        self.close()
        signal.signal(sig, self._old_handlers.get(sig) or signal.SIG_DFL)
        raise KeyboardInterrupt if sig == signal.SIGINT else SystemExit(128 + sig)

    def close(self):
        if self._delayline is not None:
            self._delayline.terminate()
            try:
                self._delayline.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._delayline.kill()
            self._delayline = None
        cleanup()
        for sig, handler in self._old_handlers.items():
            if signal.getsignal(sig) == self._on_signal:
                signal.signal(sig, handler or signal.SIG_DFL)
        self._old_handlers = {}

    def _create(self):
        os.makedirs(self.work_dir, exist_ok=True)
        _run("ip", "netns", "add", ROUTER)
        _in_ns(ROUTER, "ip", "link", "set", "lo", "up")
        for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                    "net.ipv4.conf.default.rp_filter=0"):
            _in_ns(ROUTER, "sysctl", "-qw", key)
        for i, h in enumerate(self.hosts, start=1):
            ns, veth = namespace(i), f"r-h{i}"
            _run("ip", "netns", "add", ns)
            _run("ip", "link", "add", veth, "netns", ROUTER, "type", "veth",
                 "peer", "name", "eth0", "netns", ns)
            _in_ns(ns, "ip", "link", "set", "lo", "up")
            # A node that drops off the network while mpirun has data queued for its
            # daemon (e.g. the order to end the job) is noticed only when TCP gives up
            # retransmitting: ~15 min at the kernel's default of 15 retries, ~13 s at
            # 5. Keepalive (cluster.MCA) covers idle connections only. README: the
            # same setting on real launch nodes.
            _in_ns(ns, "sysctl", "-qw", f"net.ipv4.tcp_retries2={TCP_RETRIES2}")
            _in_ns(ns, "ip", "addr", "add", f"{host_address(i)}/24", "dev", "eth0")
            _in_ns(ns, "ip", "link", "set", "eth0", "up")
            _in_ns(ns, "ip", "route", "add", str(NETWORK), "via", f"198.18.{i}.1")
            _in_ns(ROUTER, "ip", "addr", "add", f"198.18.{i}.1/24", "dev", veth)
            _in_ns(ROUTER, "ip", "link", "set", veth, "up")
            _in_ns(ROUTER, "sysctl", "-qw", f"net.ipv4.conf.{veth}.rp_filter=0")
            _in_ns(ROUTER, "ip", "route", "add", f"198.18.{i}.0/24", "dev", veth,
                   "table", "100")
            # The cap on both directions; the burst allows a few full-size segments.
            for where, dev in ((ns, "eth0"), (ROUTER, veth)):
                _in_ns(where, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
                       "rate", f"{h.link.rate_mbit}mbit", "burst", f"{LINK_BURST_BYTES // 1024}kb",
                       "latency", "100ms")
        hosts_file = "127.0.0.1 localhost\n" + "".join(
            f"{host_address(i)} {namespace(i)}\n" for i in range(1, len(self.hosts) + 1))
        for i in range(1, len(self.hosts) + 1):
            os.makedirs(os.path.join(NETNS_ETC, namespace(i)), exist_ok=True)
            with open(os.path.join(NETNS_ETC, namespace(i), "hosts"), "w") as f:
                f.write(hosts_file)
        binary = build_delayline(self.work_dir)
        delays = [f"{i}:{int(h.link.latency_ms * 1000)}"
                  for i, h in enumerate(self.hosts, start=1)]
        # The delay line is the network, not a host: real-time priority, so that ranks
        # busy on the same cores do not delay its packets (measured: at normal priority
        # and 2 loaded cores, the example's steps ran at ~2.6/s, TCP retransmitting).
        self._delayline = subprocess.Popen(
            ["ip", "netns", "exec", ROUTER, "chrt", "-f", "10", binary, TUN, *delays],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = self._delayline.stdout.readline()
        if not ready.startswith("ready"):
            raise RuntimeError(f"delayline did not start: {self._delayline.stderr.read()}")
        # A deep device queue: a burst must wait in the delay line, not be dropped.
        _in_ns(ROUTER, "ip", "link", "set", TUN, "txqueuelen", "10000", "up")
        _in_ns(ROUTER, "sysctl", "-qw", f"net.ipv4.conf.{TUN}.rp_filter=0")
        _in_ns(ROUTER, "ip", "route", "add", str(NETWORK), "dev", TUN, "table", "200")
        _in_ns(ROUTER, "ip", "rule", "add", "iif", TUN, "lookup", "100", "pref", "100")
        _in_ns(ROUTER, "ip", "rule", "add", "lookup", "200", "pref", "200")

    def rtt_ms(self, src, dst, count=20, port=17999):
        """Median TCP round trip (1 byte each way) from host src to host dst; no ping
        here, and TCP is what MPI uses."""
        server = subprocess.Popen(
            ["ip", "netns", "exec", namespace(dst), sys.executable, "-c", _ECHO_SERVER,
             host_address(dst), str(port)], stdout=subprocess.PIPE, text=True)
        try:
            server.stdout.readline()  # listening
            out = _in_ns(namespace(src), sys.executable, "-c", _ECHO_CLIENT,
                         host_address(dst), str(port), str(count)).stdout
        finally:
            server.kill()
            server.wait()
        return float(out)


_ECHO_SERVER = """
import socket, sys
s = socket.create_server((sys.argv[1], int(sys.argv[2])))
print("listening", flush=True)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while (b := c.recv(1)):
    c.sendall(b)
"""

_ECHO_CLIENT = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); c.sendall(b"x"); c.recv(1)
    times.append((time.perf_counter() - t0) * 1e3)
print(sorted(times)[len(times) // 2])
"""

if __name__ == "__main__":
    # python multihost/cluster.py: make three hosts, print their round trips, remove.
    with EmulatedCluster([HostSpec(), HostSpec(), HostSpec(link=Link(4.0, 100.0))],
                         "/tmp/wagma-multihost") as c:
        for dst in (2, 3):
            print(f"rtt h1 -> h{dst}: {c.rtt_ms(1, dst):.2f} ms")
    sys.exit(0)
