"""What the elastic test scripts (elastic_train.py, elastic_train_keras.py) share: their
log, the stack dump of a hung rank, and the faults a test arranges from inside.

Each process appends JSON lines to $WAGMA_TEST_RESULTS/<host>-<pid>.jsonl (the
records are listed in elastic_train.py's docstring).
"""
import faulthandler
import json
import os
import signal
import time

LOG = os.path.join(os.environ["WAGMA_TEST_RESULTS"],
                   f"{os.environ.get('HOROVOD_HOSTNAME', 'localhost')}-{os.getpid()}.jsonl")


def log(**record):
    with open(LOG, "a") as f:
        f.write(json.dumps(dict(record, t=time.time())) + "\n")


# Every thread's stack to <log>.stacks if the process is still running after
# WAGMA_TEST_STACKS_AFTER seconds: what a hung job's ranks were doing (the test prints
# them; horovodrun's own output of a killed job is incomplete).
_stacks = None
if os.environ.get("WAGMA_TEST_STACKS_AFTER"):
    _stacks = open(LOG + ".stacks", "w")
    faulthandler.dump_traceback_later(float(os.environ["WAGMA_TEST_STACKS_AFTER"]),
                                      file=_stacks)


def logged_state(state_class, hvd, flat=None, survivor=None):
    """`state_class` (a WagmaState, or Horovod's own) that logs Horovod's resets and
    each sync's seconds; with `flat`, also the model (`flat(model)`, a list) at each
    restore and before and after each sync, and `survivor()`."""
    class LoggedState(state_class):
        def restore(self):
            # hvd.elastic.run caught an error (Horovod may be down). The model as the
            # failure left it: restore(), reset() and sync() must not roll it back.
            log(kind="restore", model=flat(self.model) if flat else None)
            super().restore()

        def sync(self):
            before = flat(self.model) if flat else None
            t0 = time.time()
            super().sync()
            record = dict(kind="sync", sync_s=time.time() - t0, rank=hvd.rank(),
                          size=hvd.size())
            if flat:
                record.update(before=before, after=flat(self.model), survivor=survivor())
            log(**record)
    return LoggedState


def timed(kind, fn):
    """fn, logging its seconds: where a reset's time goes (Horovod's reset is
    shutdown() then init(), looked up in Horovod's elastic module)."""
    def call():
        t0 = time.time()
        fn()
        log(kind=kind, took=time.time() - t0)
    return call


# WAGMA_TEST_SLOW_SETTLE="<local rank>:<ms>": that local rank's engines wait longer for
# a membership change's losses to come in (HOROVOD_WAGMA_LOSS_SETTLE_MS), so the other
# survivors give their verdicts first (read when each generation's engine starts).
if os.environ.get("WAGMA_TEST_SLOW_SETTLE"):
    _local, _ms = os.environ["WAGMA_TEST_SLOW_SETTLE"].split(":")
    if os.environ.get("HOROVOD_LOCAL_RANK") == _local:
        os.environ["HOROVOD_WAGMA_LOSS_SETTLE_MS"] = _ms

# A test that writes "<host> <step>" to $WAGMA_TEST_RESULTS/stop_before makes that
# host's ranks stop themselves (SIGSTOP, engine and all) just before that step's
# optimizer step, once, after logging {"kind": "stopped"}: the other ranks then wait for
# them in that step's round. The other ranks pause STOP_LEAD_S before that step first:
# a round completes with a member's engine alone (its current model stands in for the
# app that has not arrived), so a rank that entered the round in the milliseconds
# before the host's SIGSTOP took effect finished it without waiting (seen once, ranks
# in lockstep: every other rank logged the step).
STOP_FILE = os.path.join(os.environ["WAGMA_TEST_RESULTS"], "stop_before")
STOP_LEAD_S = 1.0
stopped_once = False


# A test that writes "<host> <local rank> <step>" to $WAGMA_TEST_RESULTS/kill_before
# makes that rank kill itself (SIGKILL) just before that step's optimizer step, after
# logging {"kind": "killed"}: a crash at a step the test chooses (between Horovod's
# collectives), where a kill from outside lands wherever the ranks happen to be.
# "*" for the local rank: every rank of that host, all at once: the pids listed after
# the step (the host's ranks) die with the first of them to reach it, as a host that
# goes down takes all its ranks. (Each killing itself at the step left a lagging
# host-mate to fail on the first one's loss and be removed by Horovod before reaching
# it: seen once in a fresh-clone make test, 2026-11-27.)
KILL_FILE = os.path.join(os.environ["WAGMA_TEST_RESULTS"], "kill_before")


def fault_here(step, rank):
    """The faults a test arranged (stop_before, kill_before), before `step`."""
    if os.path.exists(KILL_FILE):
        with open(KILL_FILE) as f:
            host, local_rank, at, *host_pids = f.read().split()
        if (host == os.environ.get("HOROVOD_HOSTNAME") and step == int(at)
                and local_rank in ("*", os.environ.get("HOROVOD_LOCAL_RANK"))):
            log(kind="killed", step=step, rank=rank)
            for pid in map(int, host_pids):
                if pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            os.kill(os.getpid(), signal.SIGKILL)
    stop_here(step, rank)


def stop_here(step, rank):
    global stopped_once
    if stopped_once or not os.path.exists(STOP_FILE):
        return
    with open(STOP_FILE) as f:
        host, at = f.read().split()
    if step != int(at):
        return
    stopped_once = True
    if host == os.environ.get("HOROVOD_HOSTNAME"):
        log(kind="stopped", step=step, rank=rank)
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        time.sleep(STOP_LEAD_S)


