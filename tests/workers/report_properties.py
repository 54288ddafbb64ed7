"""The engine's fault reports with their parameters varied (docs/faults.md): which rank
stops or stays away (rank 0, a middle one, the last), in which round, how many rounds
and ranks are missing. Scenarios (common.run_scenarios; each name carries its
parameters, fields separated by ':'):

  away:R:M          rank R's app calls stream 'away.R' (wait-avoiding global rounds,
                    max_staleness=M) 5 times, stays away ~2.5 s while the others go on,
                    calls once more and stays away again until the others are done
                    (each rank's calls 0.1 s apart, until served round ROUNDS-1). Its
                    engine reports the app away, once per warning window, naming its
                    last round and the rounds left out since then;
  hold:LATE:ROUND   stream 'hold.<name>' (every rank a member of one group, rounds that
                    wait for every member): the ranks LATE ('-'-separated) call round
                    ROUND 2.5 s late, so the others wait in it (hold reports, the
                    inspector's stall warnings) and ask the late ranks for their view;
                    several LATE:ROUND pairs may follow ('hold:2:1:0:3': rank 2 late
                    in round 1, rank 0 in round 3);
  reg:R=S:...       stream 'reg.<name>': rank R calls its round 0 S seconds late (the
                    registrar names the ranks it waits for and those registered);
  stop:R:KIND       (with WAGMA_STALL_TIMEOUT_S) rank R stops its process (SIGSTOP) before
                    round 4 of stream 'stop.R.KIND' (sync_period 5: round 4 global; KIND
                    'group': groups of 2, rounds that wait for every member, stopped
                    before round 1) and a child resumes it after STOP_S; the others'
                    calls raise at the stall timeout;
  lost:J            (with WAGMA_TEST_LOSE_ACTIVATIONS=2) rank J joins after round 1 of
                    stream 'lost.J'; the others' activations of round 3 to it are lost,
                    and their hold queries make its engine join it.

Every scenario returns, per rank, what the test needs: served rounds, errors with their
seconds, the stream's stats() and the engine counters' differences."""
import os
import signal
import subprocess
import sys
import time

import torch

from common import run_scenarios
from world import world

import horovod_wagma.torch as hvd
from horovod_wagma.common.op import engine_lib

hvd.init(group_size=2, sync_period=5)
rank, size = hvd.rank(), hvd.size()
comm = world()
AWAY_ROUNDS = 45  # the others run rounds up to 44: ~4.5 s at 0.1 s a round
STOP_S = 6.0  # a stopped rank is resumed this long after it stopped


def counters():
    s = engine_lib.stats()
    return {k: s[k] for k in ("hold_reports", "loop_pauses", "joins_on_hold_query",
                              "rounds_left_out")}


def since(before):
    now = counters()
    return {k: now[k] - before[k] for k in now}


def call(x, **kwargs):
    h = hvd.group_allreduce_async(x, **kwargs)
    return hvd.synchronize(h), h.round


def away(r, m):
    r, m = int(r), int(m)
    name = f"away.{r}"
    knobs = dict(name=name, global_rounds="wait_avoiding", max_staleness=m)
    before = counters()
    x = torch.full((8,), float(rank))
    served, returned = [], None
    if rank == r:
        for _ in range(5):
            x, k = call(x, **knobs)
            served.append(k)
        time.sleep(2.5)  # away while the others go on
        x, returned = call(x, **knobs)
        served.append(returned)
        comm.Barrier()  # away again (in a collective) until the others are done
    else:
        while not served or served[-1] < AWAY_ROUNDS - 1:
            time.sleep(0.1)
            x, k = call(x, **knobs)
            served.append(k)
        comm.Barrier()
    time.sleep(0.3)  # the last passive rounds settle
    return dict(served=served, returned=returned, stream=hvd.stats(name),
                counters=since(before))


def hold(*spec):
    late = {}  # round -> ranks late in it
    for i in range(0, len(spec), 2):
        late[int(spec[i + 1])] = [int(x) for x in spec[i].split("-")]
    name = "hold." + "_".join(spec)
    knobs = dict(name=name, group_size=size, sync_period=100, wait_avoiding=False,
                 global_rounds="blocking")
    before = counters()
    x = torch.full((4,), float(rank))
    waits = []
    for k in range(max(late) + 2):
        if rank in late.get(k, ()):
            time.sleep(2.5)
        t0 = time.monotonic()
        x = hvd.group_allreduce(x, **knobs)
        waits.append(time.monotonic() - t0)
    return dict(waits=waits, result=x.tolist(), counters=since(before), stream=hvd.stats(name))


def reg(*spec):
    late = dict((int(a), float(b)) for a, b in (s.split("=") for s in spec))
    name = "reg." + "_".join(s.replace("=", "-").replace(".", "_") for s in spec)
    time.sleep(late.get(rank, 0.0))
    t0 = time.monotonic()
    y = hvd.group_allreduce(torch.full((4,), float(rank)), name=name)
    return dict(result=y.tolist(), waited=time.monotonic() - t0)


def stop(r, kind):
    r = int(r)
    name = f"stop.{r}.{kind}"
    if kind == "global":
        knobs = dict(name=name, global_rounds="blocking", wait_avoiding=False)
        before_stop = 4
    else:
        knobs = dict(name=name, group_size=2, sync_period=100, wait_avoiding=False)
        before_stop = 1
    x = torch.full((4,), float(rank))
    for _ in range(before_stop):
        x = hvd.group_allreduce(x, **knobs)
    before = counters()
    if rank == r:
        subprocess.Popen(["sh", "-c", f"sleep {STOP_S}; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(0.5)  # the engine's loop runs again and reports its pause
        return dict(stopped=True, counters=since(before))
    out = dict(stopped=False)
    time.sleep(0.2)  # the stopped rank is stopped by now
    h = hvd.group_allreduce_async(x, **knobs)
    t0 = time.monotonic()
    try:
        hvd.synchronize(h)
        out.update(error=None)
    except Exception as e:  # noqa: BLE001 - the test checks the type and text
        out.update(type=type(e).__name__, error=str(e))
    out.update(seconds=time.monotonic() - t0, round=before_stop,
               errors=hvd.stats(name)["errors"], counters=since(before))
    return out


def lost(j):
    """As workers/lost_activation.py, with the joined rank J: it runs rounds 0 and 1
    (global) and joins; the others run rounds 2 (group) and 3 (global), whose
    activations to it are lost (WAGMA_TEST_LOSE_ACTIVATIONS): their hold queries make
    its engine join round 3."""
    j = int(j)
    knobs = dict(name=f"lost.{j}", group_size=2, sync_period=2, global_rounds="blocking")
    before = counters()
    x = torch.tensor([float(rank), 1.0 + 10.0 * rank], dtype=torch.float64)
    inputs, outputs, waits = [], [], []
    for k in range(2 if rank == j else 4):
        if k == 2:
            time.sleep(0.5)  # rank J's join() is known before round 2
        x = x + (k + 1) * (rank + 1)
        inputs.append(x.tolist())
        t0 = time.monotonic()
        x = hvd.group_allreduce(x, **knobs)
        waits.append(time.monotonic() - t0)
        outputs.append(x.tolist())
    last = hvd.join()
    return dict(inputs=inputs, outputs=outputs, waits=waits, last=last,
                counters=since(before))


SCENARIOS = {"away": away, "hold": hold, "reg": reg, "stop": stop, "lost": lost}
names = sys.argv[1:]
run_scenarios({n: (lambda n=n: SCENARIOS[n.split(":")[0]](*n.split(":")[1:])) for n in names},
              names)
