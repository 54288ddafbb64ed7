"""Horovod elastic with WAGMA (engine on Gloo): a host's ranks killed mid-run, and a
host added through the discovery script. The user's script (workers/elastic_train.py)
is Horovod's elastic recipe with ``WagmaState`` in place of ``TorchState``.

One machine stands in for two hosts: horovodrun runs "localhost" and "127.0.0.1" as
different hosts, both local. Horovod removes a host whose process failed, so killing
the ranks of "127.0.0.1" loses that host.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import WORKERS

pytestmark = pytest.mark.slow

GLOO_TIMEOUT_S = 5
STACKS_AFTER_S = 100  # each rank dumps its threads' stacks if still running then
HOROVODRUN = os.path.join(os.path.dirname(sys.executable), "horovodrun")


def read_logs(results):
    """(host, pid) -> list of records, for every process that ran."""
    logs = {}
    for path in glob.glob(os.path.join(results, "*.jsonl")):
        host, pid = os.path.basename(path)[:-len(".jsonl")].rsplit("-", 1)
        with open(path) as f:
            logs[(host, int(pid))] = [json.loads(line) for line in f if line.strip()]
    return logs


class ElasticJob:
    def __init__(self, tmp_path, hosts, np_, min_np, max_np, steps, step_s):
        self.results = str(tmp_path / "results")
        os.makedirs(self.results)
        self.hosts_file = tmp_path / "hosts"
        self.hosts_file.write_text(hosts)
        script = tmp_path / "discover.sh"
        script.write_text(f"#!/bin/sh\ncat {self.hosts_file}\n")
        script.chmod(0o755)
        cmd = [HOROVODRUN, "-np", str(np_), "--min-np", str(min_np), "--max-np",
               str(max_np), "--host-discovery-script", str(script),
               # Without it horovodrun waits for two hosts to find common interfaces.
               "--network-interface", "lo",
               sys.executable, os.path.join(WORKERS, "elastic_train.py"), str(steps),
               str(step_s)]
        # Horovod's own shutdown waits for its background loop, which can sit in a Gloo
        # collective with a survivor that already left it until this timeout (30 s by
        # default: measured 30 s before the survivors' first step on the new set).
        env = dict(os.environ, WAGMA_TEST_RESULTS=self.results, PYTHONUNBUFFERED="1",
                   HOROVOD_GLOO_TIMEOUT_SECONDS=str(GLOO_TIMEOUT_S),
                   WAGMA_TEST_STACKS_AFTER=str(STACKS_AFTER_S))
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)

    def logs(self):
        return read_logs(self.results)

    def wait_for(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.logs()):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.kill()
        pytest.fail(f"timed out waiting for {what}\n{self.output()[-6000:]}\n"
                    f"{self.stacks()[-12000:]}")

    def finish(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"elastic job did not end in {timeout}s\n{self.output()[-6000:]}\n"
                        f"{self.stacks()[-12000:]}")
        out = self.output()
        assert self.proc.returncode == 0, out[-6000:]
        return out

    def output(self):
        if self.proc.poll() is None:
            return ""
        if not hasattr(self, "_out"):
            self._out = self.proc.stdout.read()
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


# It hung 2 times in 5 (2026-11-26): the survivors' engines failed on the lost rank
# while their apps computed, and the next step's request, enqueued after the engine's
# loop had ended, waited forever (stack dumps). Handles are now failed at once once the
# engine has failed (HandleTable::Close); then 5 of 5 passed, 42-48 s.
def test_host_killed_survivors_go_on_without_rollback(tmp_path):
    job = ElasticJob(tmp_path, "localhost:2\n127.0.0.1:2\n", np_=4, min_np=2, max_np=4,
                     steps=200, step_s=0.05)
    job.wait_for(lambda logs: len(logs) == 4 and all(
        steps_of(r) and steps_of(r)[-1]["step"] >= 30 for r in logs.values()),
        120, "4 ranks at step 30")
    victims = [who for who in job.logs() if who[0] == "127.0.0.1"]
    assert len(victims) == 2
    victim_ranks = sorted(steps_of(job.logs()[v])[-1]["rank"] for v in victims)
    killed_at = time.time()
    for _, pid in victims:
        os.kill(pid, signal.SIGKILL)
    out = job.finish(240)
    logs = job.logs()
    survivors = {who: r for who, r in logs.items() if who not in victims}
    assert len(survivors) == 2
    check_steps_never_go_back(survivors)
    before = {}
    for who, records in survivors.items():
        after_kill = [r for r in steps_of(records) if r["t"] > killed_at and r["size"] == 2]
        assert after_kill, who
        # Every survivor completes a step on the new member set within 10 s.
        assert after_kill[0]["t"] - killed_at < 10, (who, after_kill[0]["t"] - killed_at)
        sync = [r for r in records if r["kind"] == "sync" and r["t"] > killed_at]
        assert len(sync) == 1 and sync[0]["survivor"], (who, sync)
        before[who] = sync[0]
        done = records[-1]
        assert done["kind"] == "done" and done["size"] == 2 and done["step"] == 200, done
        change = done["changes"][-1]
        assert change["size"] == 2 and change["lost"] == victim_ranks, change
    average = np.mean([np.array(s["before"]) for s in before.values()], axis=0)
    for who, sync in before.items():
        after = np.array(sync["after"])
        assert (np.allclose(after, sync["before"]) or np.allclose(after, average)), who
    assert "was lost" in out, out[-4000:]


def test_host_added_starts_from_the_survivors_average(tmp_path):
    job = ElasticJob(tmp_path, "localhost:2\n", np_=2, min_np=2, max_np=4, steps=300,
                     step_s=0.05)
    job.wait_for(lambda logs: len(logs) == 2 and all(
        steps_of(r) and steps_of(r)[-1]["step"] >= 30 for r in logs.values()),
        120, "2 ranks at step 30")
    first = set(job.logs())
    added_at = time.time()
    job.hosts_file.write_text("localhost:2\n127.0.0.1:2\n")
    out = job.finish(240)
    logs = job.logs()
    joiners = {who: r for who, r in logs.items() if who not in first}
    assert len(joiners) == 2, sorted(logs)
    check_steps_never_go_back(logs)
    syncs = {who: [r for r in records if r["kind"] == "sync" and r["t"] > added_at]
             for who, records in logs.items()}
    survivors_before = [np.array(syncs[w][0]["before"]) for w in first]
    average = np.mean(survivors_before, axis=0)
    for who in joiners:
        sync = syncs[who][0]
        assert not sync["survivor"]
        # The new ranks hold the survivors' average (joiners weigh 0) within 15 s.
        assert np.allclose(sync["after"], average), who
        assert sync["t"] - added_at < 15, sync["t"] - added_at
        assert steps_of(logs[who]), who  # and then train
    for who, records in logs.items():
        done = records[-1]
        assert done["kind"] == "done" and done["size"] == 4, (who, done)
    for who in first:
        change = logs[who][-1]["changes"][-1]
        assert change["size"] == 4 and len(change["added"]) == 2, change
    assert out is not None
