"""The host's CPU busy share over a run, from /proc/stat, printed beside each result.

A verdict on how much a method learns per step is only as good as its timing: 8 ranks
at 10 ms steps keep 2 cores busy, every step's timing jitters with the host's own
work, and a method that waits less can look better or worse for that reason alone.
Benchmarks say which regime each number comes from: below about 60% busy the host is
not the limit (docs/benchmarks.md, "Regimes").

    busy share = 1 - (idle + iowait) / (all jiffies), summed over every CPU,

between ``HostLoad()`` (or ``restart()``) and ``busy_share()``.
"""

STAT = "/proc/stat"
QUIET_BELOW = 0.60   # busy share under which a result counts as "host not the limit"


def parse_cpu_line(text):
    """(busy, total) jiffies of the aggregate ``cpu`` line of /proc/stat's text."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            # user nice system idle iowait irq softirq steal [guest guest_nice]:
            # guest time is already counted in user, so only the first 8 add up.
            values = [int(v) for v in fields[1:9]]
            if len(values) < 5:
                break
            idle = values[3] + values[4]
            total = sum(values)
            return total - idle, total
    raise ValueError(f"no aggregate 'cpu' line with at least 5 counters in {STAT}")


class HostLoad:
    """The host's busy share between construction (or ``restart()``) and now."""

    def __init__(self, path=STAT):
        self.path = path
        self.restart()

    def _read(self):
        with open(self.path) as f:
            return parse_cpu_line(f.read())

    def restart(self):
        self._start = self._read()

    def busy_share(self):
        busy, total = self._read()
        d_total = total - self._start[1]
        return (busy - self._start[0]) / d_total if d_total > 0 else 0.0


def regime(share):
    """'quiet' (the host is not the limit) or 'loaded'."""
    return "quiet" if share < QUIET_BELOW else "loaded"


def fmt_busy(share):
    return f"{100 * share:.0f}% ({regime(share)})"
