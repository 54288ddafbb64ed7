"""D-PSGD, for the comparison with the paper's decentralized baselines (not measured).

* ``dpsgd``     synchronous D-PSGD on a ring: each step a rank averages with its two
                ring neighbours and waits for both of them. The exchange is a group
                round of 3 over the network (one direct exchange) plus its CPU work
                (op_bench's ``wa`` time at g = 3).
"""


class DPSGDModel:
    """Synchronous D-PSGD on a ring (not measured here): each step a rank exchanges
    its model with ranks r - 1 and r + 1 and waits for both; the exchange is a group
    round of 3 over the network (direct exchange) plus its CPU work."""

    def __init__(self, run):
        self.run = run
        self.arrived = {}
        self.waiting = {}
        self._net = {}

    def neighbours(self, r):
        P = self.run.P
        return sorted({(r - 1) % P, r, (r + 1) % P})

    def call(self, r, i, t):
        self.arrived[(i, r)] = t
        self.waiting[(i, r)] = True
        for x in self.neighbours(r):
            self._try(i, x)

    def _try(self, i, r):
        if not self.waiting.get((i, r)):
            return
        nb = self.neighbours(r)
        if all((i, x) in self.arrived for x in nb):
            del self.waiting[(i, r)]
            net = self._net.get(r)
            if net is None:
                net = self._net[r] = self.run.net.exchange_time(nb, self.run.nbytes)
            work = (self.run.calib.round_work("pair", len(nb), self.run.nbytes, self.run.P)
                    if self.run.net.comm_cpu else 0.0)
            start = self.run.loop.now + net

            def go(r=r):
                self.run.cpu(r, work, lambda t: self.run.resume(r, t), "engine")
            self.run.loop.at(start, go)
            # Forget step i - 2 arrivals once both neighbours are past them.
            self.arrived.pop((i - 2, r), None)

    def stats(self):
        return {}
