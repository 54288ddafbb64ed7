"""The interface every benchmark method has, and its simplest implementation: Horovod.

A method object (bench/methods.py builds them, bench/peers.py builds the real peers)
has ``zero_grad()``, ``step()`` (after backward: the update and the method's
communication), ``lockstep``, ``synced(i)`` (True when after its i-th step, 0-based,
every rank has just passed the same synchronising step) and ``finish()``. Both
methods.py and peers.py subclass ``Horovod`` from here, so neither imports the other
for it.
"""


class Horovod:
    lockstep = True

    def __init__(self, opt, tau):
        self.opt, self.tau = opt, tau

    def step(self):
        self.opt.step()

    def zero_grad(self):
        self.opt.zero_grad()

    def synced(self, i):
        return i % self.tau == 0

    def finish(self):
        pass
