"""Horovod elastic with WAGMA (engine on Gloo): a host's ranks killed mid-run, and a
host added through the discovery script. The user's script (workers/elastic_train.py)
is Horovod's elastic recipe with ``WagmaState`` in place of ``TorchState``.

One machine stands in for two hosts: horovodrun runs "localhost" and "127.0.0.1" as
different hosts, both local. Horovod removes a host whose process failed, so killing
the ranks of "127.0.0.1" loses that host.
"""
import glob
import os
import re
import signal
import time

import numpy as np
import pytest

from conftest import CURRENT
from elastic_job import ElasticJob, check_steps_never_go_back, check_survivors_went_on, \
    host_kills_itself_before, kill_host_at_step, steps_of
from horovod_wagma.timeline import load_traces

pytestmark = pytest.mark.slow

# It hung 2 times in 5 (2026-11-26): the survivors' engines failed on the lost rank
# while their apps computed, and the next step's request, enqueued after the engine's
# loop had ended, waited forever (stack dumps). Handles are now failed at once once the
# engine has failed (HandleTable::Close); then 5 of 5 passed, 42-48 s.
def test_host_killed_survivors_go_on_without_rollback(tmp_path):
    trace = tmp_path / "trace.json"
    job = ElasticJob(tmp_path, "localhost:2\n127.0.0.1:2\n", np_=4, min_np=2, max_np=4,
                     steps=200, step_s=0.05, env_extra={"WAGMA_TIMELINE": str(trace)})
    # 2 of 4 remain: half, with rank 0, so the majority rule lets them go on. The host's
    # ranks kill themselves before step 40, so that no survivor fails inside commit()
    # (a rollback to the commit would go unseen there: host_kills_itself_before).
    victims, victim_ranks, killed_at = host_kills_itself_before(job, 4, 30, 40)
    assert len(victims) == 2
    out = job.finish(240)
    survivors = [who for who in job.logs() if who not in victims]
    assert len(survivors) == 2
    check_survivors_went_on(job, survivors, victim_ranks, killed_at, 10, 200)
    for who in survivors:
        records = job.logs()[who]
        sync = [r for r in records if r["kind"] == "sync" and r["t"] > killed_at]
        assert len(sync) == 1, (who, sync)  # one reset, one sync
        change = records[-1]["changes"][-1]
        assert change["size"] == 2 and change["lost"] == victim_ranks, change
        # The new engine's rounds count from 0 (the optimizer rebased): every global
        # round served from the first on ran its duty, the momentum's average.
        stats = records[-1]["stats"]
        model = next(v for k, v in stats.items() if k.endswith(".model0"))
        state = next(v for k, v in stats.items() if k.endswith(".sync0"))
        assert state["rounds"] >= model["global_rounds"] > 0, (who, model, state)
    assert "was lost" in out, out[-4000:]
    # The timeline records the change: each survivor's engine of the new member set
    # writes its own file (trace.gen<N>.<rank>.json) with the change, P' and the lost.
    # N is the change's generation, not always 2: Horovod sometimes resets all four
    # ranks once at start-up, before the kill, which makes a generation with no change
    # (1 of 5 runs, 2026-12-06: every rank restored and re-synced at size 4 at t+7 s).
    generation = job.logs()[survivors[0]][-1]["changes"][-1]["generation"]
    for rank in (0, 1):
        events = load_traces([str(tmp_path / f"trace.gen{generation}.{rank}.json")])
        (change,) = [e for e in events if e.get("name") == "membership_change"]
        assert change["args"]["size"] == 2 and change["args"]["lost"] == victim_ranks, change
        assert change["args"]["rank"] == rank and killed_at < change["ts"] / 1e6, change
        # One loss, one change on the timeline, whatever generations came before.
        every = load_traces([str(tmp_path / f"trace.gen*.{rank}.json")])
        assert sum(e.get("name") == "membership_change" for e in every) == 1
    assert len(glob.glob(str(tmp_path / "trace.[0-3].json"))) == 4  # generation 1 kept


@pytest.mark.extended
def test_keras_host_killed_survivors_go_on_without_rollback(tmp_path):
    """The Keras twin (workers/elastic_train_keras.py): model.fit inside
    hvd.elastic.run, WagmaState for KerasState. The WAGMA op's membership change reaches
    Python as a tf.errors.AbortedError, which horovod_wagma.keras's run turns into a
    reset; the survivors go on from their replicas with freshly traced functions."""
    job = ElasticJob(tmp_path, "localhost:2\n127.0.0.1:2\n", np_=4, min_np=2, max_np=4,
                     steps=150, step_s=0.05, script="elastic_train_keras.py")
    victims, victim_ranks, killed_at = kill_host_at_step(job, None, 4, 30)
    out = job.finish(300)
    survivors = [who for who in job.logs() if who not in victims]
    assert len(survivors) == 2
    took = check_survivors_went_on(job, survivors, victim_ranks, killed_at, 20, 150)
    assert "was lost" in out, out[-4000:]
    print("keras host killed: first step on 2 ranks after (s):", sorted(took.values()))


@pytest.mark.extended
def test_a_stopped_host_is_found_by_liveness_probes(tmp_path):
    """Both ranks of a host stopped (SIGSTOP), not killed: no connection closes, so only
    the engines' liveness probes (a heartbeat under elastic) can tell. Every survivor's
    engine must name both stopped ranks lost by silence. A survivor whose app was in a
    WAGMA call leaves it for Horovod's reset within the liveness window, its settle and
    3 s (12.5 s here); one whose app sat in a
    Horovod collective (the metric allreduce every 10 steps, or commit()'s host-update
    broadcast every 5) is released by Horovod's own timeout alone (15 s here), which
    WAGMA cannot cut short. Horovod's driver re-forms the job only once the stopped
    processes end, so the test then kills them; the survivors finish at size 2.

    Rank 1 settles its verdict 3 s later than rank 0 (4.5 s, not 1.5), so rank 0's
    engine, stopped at its own verdict, is silent for over half the liveness window
    when rank 1 judges: rank 1 must still count it a member (its kVerdict), not lose
    it "behind the same cut" and fence itself (1 of 4 ranks; seen once in CI)."""
    gloo_timeout_s = 15
    # 5 s of silence, not the default 10, so the verdict comes soon. At 3 s, false
    # verdicts came at start-up (4.0-4.3 s silences between running ranks, 4 ranks
    # starting on 2 cores: in one CI run and one run of this module here, never in 22
    # launches of this job alone).
    liveness_s, slow_settle_s = 5, 4.5
    job = ElasticJob(tmp_path, "localhost:2\n127.0.0.1:2\n", np_=4, min_np=2, max_np=4,
                     steps=200, step_s=0.05, gloo_timeout_s=gloo_timeout_s,
                     env_extra={"HOROVOD_WAGMA_LIVENESS_S": str(liveness_s),
                                "WAGMA_TEST_SLOW_SETTLE": f"1:{int(slow_settle_s * 1000)}"})
    # After the metric allreduce of step 30, in the middle of WAGMA steps.
    victims, victim_ranks, stopped_at = kill_host_at_step(job, None, 4, 32, signal.SIGSTOP)
    survivors = [who for who in job.logs() if who not in victims]

    def restored(logs):
        return all(any(r["kind"] == "restore" and r["t"] > stopped_at for r in logs[w])
                   for w in survivors)
    try:
        job.wait_for(restored, gloo_timeout_s + 10, "the survivors' reset after the stop")
    finally:
        for _, pid in victims:
            os.kill(pid, signal.SIGKILL)
    out = job.finish(240)
    # Each survivor's engine named a stopped rank lost by its silence (the verdict
    # comes once the losses of a settle window are in: usually both, at times one).
    for rank in (0, 1):  # the survivors hold ranks 0 and 1 (kill_host_at_step)
        assert any(f"[horovod_wagma rank {rank}] rank {lost} was lost: no answer to liveness "
                   "probes" in out for lost in victim_ranks), out[-4000:]
    assert "fenced" not in out, out[-5000:]
    assert "[horovod_wagma rank 1] ranks [0] gave their own verdicts first" in out, \
        out[-5000:]
    # faults.md: the loss by silence says when the peer was last heard from, at least
    # the liveness window (5 s) ago.
    heard = [float(h) for h in re.findall(
        r"was lost: no answer to liveness probes \(stopped, dead or unreachable\) "
        r"\(last heard (\d+\.\d) s ago\)", out)]
    assert heard and min(heard) >= liveness_s - 1, out[-5000:]
    logs = job.logs()
    resets = {}
    for who in survivors:
        records = logs[who]
        restore = next(i for i, r in enumerate(records)
                       if r["kind"] == "restore" and r["t"] > stopped_at)
        after_s = records[restore]["t"] - stopped_at
        last_step = steps_of(records[:restore])[-1]["step"]
        in_horovod = last_step % 5 == 0  # it was in the allreduce or commit()
        limit = gloo_timeout_s + 3 if in_horovod else liveness_s + slow_settle_s + 3
        resets[who] = (round(after_s, 1), "horovod" if in_horovod else "wagma")
        if after_s >= limit:
            pytest.fail(f"{who} reset {after_s:.1f} s after the stop (last step {last_step})"
                        f"\n{out[-5000:]}")
    print("stopped host: each survivor's reset after the stop (s, where it sat):",
          sorted(resets.values()))
    for who in survivors:
        done = logs[who][-1]
        assert done["kind"] == "done" and done["size"] == 2 and done["step"] == 200, done
        assert done["changes"][-1]["lost"] == victim_ranks, done["changes"]


@pytest.mark.extended
def test_a_minority_left_alone_is_fenced(tmp_path):
    """Three of four ranks killed: the lone survivor keeps 1 of 4, not a majority
    (whichever rank it is), so it must stop with the "fenced" error, never train on
    alone, although --min-np 1 lets Horovod re-form the job around it."""
    job = ElasticJob(tmp_path, "localhost:1\n127.0.0.1:3\n", np_=4, min_np=1, max_np=4,
                     steps=300, step_s=0.05)
    victims, ranks, killed_at = kill_host_at_step(job, "127.0.0.1", 4, 30)
    assert len(victims) == 3, victims
    out = job.end(120)
    ended_after = time.time() - killed_at
    assert job.proc.returncode != 0, out[-4000:]
    assert "WagmaFenced: " in out and "fenced: ranks" in out, out[-4000:]
    assert "1 of 4 ranks remain on this side, not a majority" in out, out[-4000:]
    # ... naming every lost rank, in order: the engine's verdict, or the check when
    # Horovod re-forms the job (whichever comes first: the app may sit in a Horovod
    # collective when the ranks die).
    named = ", ".join(map(str, sorted(ranks)))
    assert re.search(rf"fenced: ranks {named} (of the previous member set )?were lost", out), \
        (ranks, [line for line in out.splitlines() if "fenced" in line])
    (survivor,) = [who for who in job.logs() if who not in victims]
    records = job.logs()[survivor]
    assert not [r for r in steps_of(records) if r["size"] < 4], "trained alone"
    assert records[-1]["kind"] != "done"
    assert ended_after < 30, ended_after


def test_host_added_starts_from_the_survivors_average(tmp_path):
    # Horovod's default Gloo timeout (30 s): the survivors wait in the new member set's
    # first collective for the joiners' own setup (imports; on this 2-core host the
    # first torch.optim optimizer alone imports torch._dynamo, 5-8 s), which a 5 s
    # timeout cut short (a second reset).
    job = ElasticJob(tmp_path, "localhost:2\n", np_=2, min_np=2, max_np=4, steps=300,
                     step_s=0.05, gloo_timeout_s=None)
    job.wait_for(lambda logs: len(logs) == 2 and all(
        steps_of(r) and steps_of(r)[-1]["step"] >= 30 for r in logs.values()),
        120, "2 ranks at step 30")
    first = set(job.logs())
    added_at = time.time()
    job.set_hosts("localhost:2\n127.0.0.1:2\n")
    out = job.finish(240)
    logs = job.logs()
    joiners = {who: r for who, r in logs.items() if who not in first}
    assert len(joiners) == 2, sorted(logs)
    check_steps_never_go_back(logs)
    syncs = {who: [r for r in records if r["kind"] == "sync" and r["t"] > added_at]
             for who, records in logs.items()}
    survivors_before = [np.array(syncs[w][0]["before"]) for w in first]
    last_ready = max(r["t"] for w in joiners for r in logs[w] if r["kind"] == "ready")
    average = np.mean(survivors_before, axis=0)
    # Where the seconds from the host's addition went: Horovod's discovery and launch
    # (to the joiner's process start), the joiner script's own setup (imports, model),
    # then WAGMA's part (agreement, rendezvous, the average).
    started = min(r["started"] for w in joiners for r in logs[w] if r["kind"] == "start")
    split = dict(launch=started - added_at, setup=last_ready - started,
                 wagma=max(syncs[w][0]["t"] for w in joiners) - last_ready)
    print("host added, seconds:", {k: round(v, 1) for k, v in split.items()})
    for who in joiners:
        sync = syncs[who][0]
        assert not sync["survivor"]
        # The new ranks hold the survivors' average (joiners weigh 0) within 10 s of
        # the last joiner's script setup: the average is collective, so it cannot come
        # before. The launch and the setup are Horovod's and the script's, and on these
        # 2 loaded cores they alone took 12.9-34 s (CI, 2026-11-27: 34.5 s in all); their
        # 15 s target is measured in test_multihost_elastic and reported in README, and
        # here they only bound the wait against a hang.
        assert np.allclose(sync["after"], average), who
        # and the survivors' counters: a joiner goes on from their step, not from 0.
        assert steps_of(logs[who])[0]["step"] > 30, steps_of(logs[who])[:3]
        assert sync["t"] - last_ready < 10, split
        assert sync["t"] - added_at < 90, split
        assert steps_of(logs[who]), who  # and then train
    for who, records in logs.items():
        done = records[-1]
        assert done["kind"] == "done" and done["size"] == 4, (who, done)
    for who in first:
        change = logs[who][-1]["changes"][-1]
        assert change["size"] == 4 and len(change["added"]) == 2, change
    assert out is not None


@pytest.mark.extended
def test_an_idle_engine_sleeps_through_the_heartbeat(mpi, monkeypatch):
    """Under Horovod elastic every engine sends a liveness heartbeat to peers it has
    not heard from for a second. Liveness traffic is not work: an engine left idle (the
    script's set-up, evaluation, data loading) must reach the pacer's idle regime (4 ms
    sleeps after two idle seconds) while probes and answers keep coming.

    When they counted as progress, each of 4 idle engines here ran its loop about 1000
    times a second instead of about 250; across 4 emulated hosts of 2 ranks on 2 cores
    that starved Horovod's own collectives past HOROVOD_GLOO_TIMEOUT_SECONDS while the
    ranks built their optimizers (spurious elastic resets at start-up in 3 of 5
    launches, 0 of 3 after the change)."""
    monkeypatch.setitem(CURRENT, "transport", "gloo")
    run = mpi("idle_heartbeat.py", 4, 3.0, env={"HOROVOD_ELASTIC": "1"}, timeout=120)
    for rank, res in sorted(run.results.items()):
        assert res["passes_per_s"] < 500, (rank, res)
        assert res["sleeps_per_s"] > 50, (rank, res)  # the loop ran, asleep between passes
