"""A torchft job across emulated hosts, with the interface bench/elastic_time_to_accuracy.py
uses of tests/elastic_job.py's ElasticJob (``logs``, ``wait_for``, ``end``, ``kill``,
``proc.returncode``): torchft's lighthouse on host 1, and on every host ``slots``
replicas of bench/torchft_elastic_worker.py, each started through the cluster's agent
in its host's namespace (torchft has no launcher of its own: torchx or a scheduler
starts one process per replica group, as here)."""
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from elastic_job import read_logs  # noqa: E402
from multihost.cluster import AGENT, host_address  # noqa: E402

WORKER = os.path.join(HERE, "torchft_elastic_worker.py")
LIGHTHOUSE_PORT = 29510   # the lighthouse's own default port
# The lighthouse as its command line starts it by default (join timeout 60 s, quorum
# tick 100 ms, heartbeat timeout 5 s), and min_replicas 1: the survivors go on alone.
LIGHTHOUSE = ("import time; from torchft.coordination import LighthouseServer; "
              f"s = LighthouseServer(bind='[::]:{LIGHTHOUSE_PORT}', min_replicas=1, "
              "join_timeout_ms=60000); time.sleep(1e6)")


class _Returncode:
    """The job's exit status: 0 when every replica not killed with its host exited 0."""

    def __init__(self, job):
        self.job = job

    @property
    def returncode(self):
        codes = [p.poll() for p in self.job.workers]
        if any(c is None for c in codes):
            return None
        return 0 if all(c in (0, -9) for c in codes) and any(c == 0 for c in codes) \
            else max(abs(c) for c in codes)


class TorchftJob:
    def __init__(self, tmp_path, cluster, hosts, slots, seed, steps, step_s, eval_every,
                 sync_every, timeout_s):
        self.results = str(tmp_path / "results")
        os.makedirs(self.results)
        env = cluster.env(dict(os.environ, WAGMA_TEST_RESULTS=self.results,
                               PYTHONUNBUFFERED="1", RUST_LOG="warn"))
        out = open(os.path.join(self.results, "job.out"), "w")
        self.lighthouse = subprocess.Popen(
            [AGENT, host_address(1), shlex.join([sys.executable, "-c", LIGHTHOUSE])],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        address = f"http://{host_address(1)}:{LIGHTHOUSE_PORT}"
        self.workers = []
        for h in range(1, hosts + 1):
            for s in range(slots):
                argv = [seed, steps, step_s, eval_every, (h - 1) * slots + s, address,
                        host_address(h), sync_every, timeout_s]
                # The agent runs one shell command line, as ssh does; HOROVOD_HOSTNAME
                # names the log file after the host (elastic_log.py).
                self.workers.append(subprocess.Popen(
                    [AGENT, host_address(h), shlex.join(
                        ["env", f"HOROVOD_HOSTNAME={host_address(h)}", sys.executable,
                         WORKER] + [str(a) for a in argv])], env=env,
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        self.proc = _Returncode(self)

    def logs(self):
        return read_logs(self.results)

    def wait_for(self, predicate, timeout, what, poll_s=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.logs()):
                return
            time.sleep(poll_s)
        self.kill()
        raise TimeoutError(f"torchft job: timed out waiting for {what} "
                           f"(output: {self.results}/job.out)")

    def end(self, timeout):
        deadline = time.monotonic() + timeout
        for p in self.workers:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        self.kill()

    def kill(self):
        for p in self.workers + [self.lighthouse]:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
