"""One Horovod elastic job of workers/elastic_train.py (or its Keras twin) under test, and what its ranks
logged: shared by test_elastic.py (two "hosts" on this machine) and
test_multihost_elastic.py (emulated hosts in network namespaces)."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import LAUNCHES, WORKERS
from horovodrun_launcher import command as horovodrun_command

GLOO_TIMEOUT_S = 5
STACKS_AFTER_S = 100  # each rank dumps its threads' stacks if still running then
# How an uncaught Gloo exception ends a process: Horovod's own init, never WAGMA's engine.
HOROVOD_START_ABORT = "terminate called after throwing an instance of 'gloo::IoException'"


def read_logs(results):
    """(host, pid) -> list of records, for every process that ran."""
    logs = {}
    for path in glob.glob(os.path.join(results, "*.jsonl")):
        host, pid = os.path.basename(path)[:-len(".jsonl")].rsplit("-", 1)
        with open(path) as f:
            logs[(host, int(pid))] = [json.loads(line) for line in f if line.strip()]
    return logs


class ElasticJob:
    """horovodrun --min-np/--max-np with a discovery script that prints `hosts` (the
    test rewrites hosts_file to add or remove hosts). On this machine's loopback, or,
    with `cluster` (multihost.cluster.EmulatedCluster), launched from its host 1 with
    the workers started through its agent as `ssh` and Gloo's traffic on eth0."""

    def __init__(self, tmp_path, hosts, np_, min_np, max_np, steps, step_s, env_extra=None,
                 gloo_timeout_s=GLOO_TIMEOUT_S, cluster=None, script="elastic_train.py",
                 argv=None):
        """`script`: a worker in tests/workers (or a path), run with `argv` (default:
        steps, step_s)."""
        self.results = str(tmp_path / "results")
        os.makedirs(self.results)
        self.hosts_file = tmp_path / "hosts"
        self.set_hosts(hosts)
        discover = tmp_path / "discover.sh"
        discover.write_text(f"#!/bin/sh\ncat {self.hosts_file}\n")
        discover.chmod(0o755)
        horovodrun, launcher_env = horovodrun_command()
        cmd = horovodrun + ["-np", str(np_), "--min-np", str(min_np), "--max-np",
               str(max_np), "--host-discovery-script", str(discover),
               # Without it horovodrun waits for two hosts to find common interfaces.
               "--network-interface", "lo" if cluster is None else "eth0",
               sys.executable, os.path.join(WORKERS, script)] + [
                   str(a) for a in (argv if argv is not None else (steps, step_s))]
        # Horovod's own shutdown waits for its background loop, which can sit in a Gloo
        # collective with a survivor that already left it until this timeout (30 s by
        # default: measured 30 s before the survivors' first step on the new set). None:
        # Horovod's default.
        env = dict(os.environ, **launcher_env, WAGMA_TEST_RESULTS=self.results,
                   PYTHONUNBUFFERED="1",
                   WAGMA_TEST_STACKS_AFTER=str(STACKS_AFTER_S))
        if gloo_timeout_s is not None:
            env["HOROVOD_GLOO_TIMEOUT_SECONDS"] = str(gloo_timeout_s)
        env.update(env_extra or {})
        if cluster is not None:
            cmd, env = cluster.head(cmd), cluster.env(env)
        self._cmd, self._env = cmd, env
        self.relaunched = None  # why the job was launched a second time, if it was
        self._launch()

    def _launch(self):
        LAUNCHES["jobs"] += 1
        self.proc = subprocess.Popen(self._cmd, env=self._env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)

    def _horovod_start_aborted(self):
        """The job ended before any rank's init() returned, with a Gloo exception that
        nothing caught: Horovod's own start-up rendezvous, whose wait is bounded by
        HOROVOD_GLOO_TIMEOUT_SECONDS, gave up on a rank that reached hvd.init() later
        than that (seen once in 5 launches of 8 ranks on 2 cores at 5 s). WAGMA's engine
        starts after it and reports its own errors; none escapes uncaught."""
        return (self.proc.poll() is not None and not self.logs()
                and HOROVOD_START_ABORT in self.output())

    def _relaunch(self):
        first = os.path.join(self.results, "horovodrun.first.out")
        os.replace(os.path.join(self.results, "horovodrun.out"), first)
        for path in glob.glob(os.path.join(self.results, "*.stacks")):
            os.remove(path)
        del self._out
        self.relaunched = f"Horovod's own start-up rendezvous aborted the job (see {first})"
        print(f"elastic job relaunched once: {self.relaunched}", flush=True)
        self._launch()

    def logs(self):
        return read_logs(self.results)

    def wait_for(self, predicate, timeout, what, poll_s=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.logs()):
                return
            if self.proc.poll() is not None:
                if self.relaunched is None and self._horovod_start_aborted():
                    self._relaunch()
                    deadline = time.monotonic() + timeout
                    continue
                break
            time.sleep(poll_s)
        self.kill()
        pytest.fail(f"timed out waiting for {what}\n{self.output()[-6000:]}\n"
                    f"{self.stacks()[-12000:]}")

    def set_hosts(self, hosts):
        """What the discovery script prints from now on. Replaced whole: a file
        rewritten in place can be read half-written (no hosts, then all of them), which
        Horovod takes for a removal followed by an addition."""
        tmp = self.hosts_file.with_suffix(".tmp")
        tmp.write_text(hosts)
        os.replace(tmp, self.hosts_file)

    def end(self, timeout):
        """Waits for the job to end; its output. Fails the test if it does not."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"elastic job did not end in {timeout}s\n{self.output()[-6000:]}\n"
                        f"{self.stacks()[-12000:]}")
        return self.output()

    def finish(self, timeout):
        """Waits for the job to end well; its output."""
        out = self.end(timeout)
        assert self.proc.returncode == 0, out[-6000:]
        return out

    def output(self):
        if self.proc.poll() is None:
            return ""
        if not hasattr(self, "_out"):
            self._out = self.proc.stdout.read()
            # Whole, beside the ranks' logs: a failure message shows only its tail.
            with open(os.path.join(self.results, "horovodrun.out"), "w") as f:
                f.write(self._out)
        return self._out

    def stacks(self):
        """The stack dumps of ranks that outlived STACKS_AFTER_S, per log file."""
        out = []
        for path in sorted(glob.glob(os.path.join(self.results, "*.stacks"))):
            with open(path) as f:
                text = f.read()
            if text:
                out.append(f"--- {os.path.basename(path)}\n{text}")
        return "\n".join(out)

    def arrange_fault(self, name, line):
        """Writes `line` to results/`name` (stop_before, kill_before: see
        workers/elastic_log.py) whole: a rank polling for it never reads half of it."""
        path = os.path.join(self.results, name)
        with open(path + ".tmp", "w") as f:
            f.write(line)
        os.replace(path + ".tmp", path)

    def latest_step(self):
        """The furthest step any rank has logged."""
        return max(steps_of(r)[-1]["step"] for r in self.logs().values() if steps_of(r))

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def steps_of(records):
    return [r for r in records if r["kind"] == "step"]


def check_steps_never_go_back(logs):
    for who, records in logs.items():
        steps = [r["step"] for r in steps_of(records)]
        assert steps == sorted(steps) and len(set(steps)) == len(steps), (who, steps)


def ranks_past(logs, step):
    """How many processes' last logged step is `step` or later."""
    return sum(bool(steps_of(r)) and steps_of(r)[-1]["step"] >= step for r in logs.values())


def ranks_at_step(job, np_, step, timeout=120, poll_s=0.2):
    """Waits until np_ ranks passed `step`; (host, pid) -> rank, from their last step."""
    job.wait_for(lambda logs: ranks_past(logs, step) >= np_, timeout,
                 f"{np_} ranks at step {step}", poll_s)
    return {who: steps_of(r)[-1]["rank"] for who, r in job.logs().items() if steps_of(r)}


def host_without_rank_0(rank_of, launcher=None):
    """A host that holds neither rank 0 nor, if given, horovodrun itself (a launch
    node's loss ends any Horovod job: its driver is gone)."""
    return next(h for h in sorted({who[0] for who in rank_of})
                if h != launcher and all(rank_of[w] for w in rank_of if w[0] == h))


def ranks_of_host(rank_of, host=None):
    """(host, its ranks' (host, pid), their ranks); host None: the host without rank 0,
    whichever Horovod placed it on."""
    host = host or host_without_rank_0(rank_of)
    victims = [who for who in rank_of if who[0] == host]
    return host, victims, sorted(rank_of[v] for v in victims)


def kill_host_at_step(job, host, np_, step, sig=signal.SIGKILL):
    """Sends `sig` to every rank of `host` (None: the host without rank 0) once all np_
    ranks passed `step`; (victims' (host, pid), their ranks, the time of the kill)."""
    _, victims, ranks = ranks_of_host(ranks_at_step(job, np_, step), host)
    killed_at = time.time()
    for _, pid in victims:
        os.kill(pid, sig)
    return victims, ranks, killed_at


def host_kills_itself_before(job, np_, after_step, step):
    """Once all np_ ranks passed `after_step`, the ranks of the host without rank 0 die
    together when the first of them reaches `step` (elastic_log.fault_here); returns (victims' (host,
    pid), their ranks, the time of the first kill). Where a kill from outside may land
    in commit(), after it saved the state, the survivors then fail with a model no
    different from the commit, and a rollback would go unseen: before step 40 (an
    allreduce precedes commit() there) they fail at most one step past it, four past
    the last commit."""
    host, victims, ranks = ranks_of_host(ranks_at_step(job, np_, after_step))
    # The first of the host's ranks to reach `step` kills them all (elastic_log.py).
    pids = " ".join(str(pid) for _, pid in victims)
    job.arrange_fault("kill_before", f"{host} * {step} {pids}")
    job.wait_for(lambda logs: any(r["kind"] == "killed" for v in victims for r in logs[v]),
                 60, f"{host}'s ranks killed")
    logs = job.logs()
    killed_at = min(r["t"] for v in victims for r in logs[v] if r["kind"] == "killed")
    return victims, ranks, killed_at


def check_survivors_went_on(job, survivors, lost_ranks, fault_at, within_s, steps):
    """The acceptance checks after a loss: every survivor completes a step on the new
    member set within `within_s`, no step counter goes back, no model rolls back (each
    survivor's model entering the sync is the one the failure left, as logged when
    Horovod's run caught it, before restore() and reset()), each one's model after the
    sync is that replica or the survivors' average of them, the lost ranks are named,
    and each finishes all `steps`. Returns who -> seconds to that step."""
    logs = job.logs()
    size = len(survivors)
    check_steps_never_go_back({w: logs[w] for w in survivors})
    before, took = {}, {}
    for who in survivors:
        records = logs[who]
        after = [r for r in steps_of(records) if r["t"] > fault_at and r["size"] == size]
        assert after, (who, records[-5:])
        took[who] = after[0]["t"] - fault_at
        assert took[who] < within_s, (who, took[who])
        sync = [r for r in records if r["kind"] == "sync" and r["t"] > fault_at]
        assert sync and sync[0]["survivor"], (who, sync)
        restore = next((r for r in records if r["kind"] == "restore" and r["t"] > fault_at),
                       None)
        assert restore, (who, "no reset after the fault", records[-5:])
        assert np.array_equal(sync[0]["before"], restore["model"]), (
            who, "rolled back", restore["model"][:4], sync[0]["before"][:4])
        before[who] = sync[0]
        done = records[-1]
        assert done["kind"] == "done" and done["size"] == size and done["step"] == steps, done
        lost = sorted(r for c in done["changes"] for r in c.get("lost", []))
        assert set(lost_ranks) <= set(lost), (who, done["changes"])
    average = np.mean([np.array(s["before"]) for s in before.values()], axis=0)
    for who, sync in before.items():
        after = np.array(sync["after"])
        assert np.allclose(after, sync["before"]) or np.allclose(after, average), who
    return took
