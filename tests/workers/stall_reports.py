"""Stall reports, liveness probes and Ctrl-C (docs/faults.md), on 2 ranks under
mpirun with WAGMA_STALL_WARNING_S=3 (probes after a call has waited 1 s) and
workers/probe_counter.c preloaded, which counts the probes each rank's engine
receives. Scenarios (common.run_scenarios):

  healthy        rounds in lockstep, with idle pauses of 1.5 s between bursts (no call
                 waits near 1 s): no probe, no answer;
  registration   rank 1 calls a new stream's round 0 3.6 s after rank 0: the registrar
                 (rank 0) warns that it waits for rank 1's registration; rank 0's call
                 waited, so its engine probed rank 1 (the counter works);
  sigint         rank 1 waits in a global round that rank 0 enters 3 s late; SIGINT
                 0.5 s into the wait must raise KeyboardInterrupt at once (waits return
                 to Python every 100 ms), with the round still pending, which then
                 completes when rank 1 waits again.
"""
import ctypes
import os
import random
import signal
import sys
import threading
import time

import torch

from common import run_scenarios

import horovod_wagma.torch as hvd

hvd.init()
rank = hvd.rank()
_counts = ctypes.CDLL(None).wagma_test_received
_counts.restype = ctypes.c_long
PROBE, ANSWER = 11, 12  # control_messages.h: kProbe, kProbeAnswer


def probes():
    return {"probes": _counts(PROBE), "answers": _counts(ANSWER)}


def since(before):
    now = probes()
    return {k: now[k] - before[k] for k in now}


def healthy():
    before = probes()
    rng = random.Random(rank)
    x = torch.full((16,), float(rank))
    waits = []
    for burst in range(3):
        for _ in range(8):
            time.sleep(rng.uniform(0, 0.003))
            t0 = time.monotonic()
            x = hvd.group_allreduce(x, name="healthy", sync_period=4)
            waits.append(time.monotonic() - t0)
        time.sleep(1.5)  # idle: no call waits, and no peer is heard from meanwhile
    return dict(since(before), max_wait=max(waits), calls=len(waits))


def registration():
    before = probes()
    if rank == 1:
        time.sleep(3.6)
    t0 = time.monotonic()
    y = hvd.group_allreduce(torch.full((4,), float(rank)), name="late_registration")
    return dict(since(before), result=y.tolist(), waited=time.monotonic() - t0)


def sigint():
    name = "interrupted"
    x = hvd.group_allreduce(torch.full((4,), float(rank)), name=name, sync_period=1)
    if rank == 0:
        time.sleep(3.0)  # the stuck peer, in its application
        y = hvd.group_allreduce(x + 1, name=name, sync_period=1)
        return dict(result=y.tolist())
    # The input is held here: a KeyboardInterrupt out of synchronize() makes the handle
    # drop its own reference to it (torch/ops.py: _finish's finally) while the round is
    # still pending, and the engine would then read freed memory.
    sent_input = x + 1
    h = hvd.group_allreduce_async(sent_input, name=name, sync_period=1)  # waits for rank 0
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    timer.start()
    interrupted_at, pending = None, None
    try:
        hvd.synchronize(h)
    except KeyboardInterrupt:
        interrupted_at = time.monotonic()
        try:
            pending = not hvd.poll(h)
        except RuntimeError:  # the engine already handed the result out: not pending
            pending = False
    timer.join()
    try:
        result = hvd.synchronize(h).tolist()  # the round completes once rank 0 enters it
    except RuntimeError as e:
        result = str(e)
    return dict(latency=None if interrupted_at is None else interrupted_at - sent[0],
                pending_when_interrupted=pending, result=result)


run_scenarios({"healthy": healthy, "registration": registration, "sigint": sigint},
              sys.argv[1:])
