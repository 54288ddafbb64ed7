"""Stall reports, liveness probes and signals (docs/faults.md, "What happens when").

Launches of their own: the stall windows and the liveness settings are engine
settings read from the environment. One 2-rank mpirun (workers/stall_reports.py)
runs the healthy run, the late registration and the Ctrl-C scenarios with
WAGMA_STALL_WARNING_S=3 (reports after 0.75 s of waiting, probes after 1 s) and
workers/probe_counter.c preloaded, which counts the liveness probes each engine
receives (MPI only: it wraps the MPI call the engine receives control messages with).
One 2-rank horovodrun --gloo (workers/liveness_zero.py) checks
HOROVOD_WAGMA_LIVENESS_S=0 with the engine's elastic settings, and a 3-rank one
(workers/join_lost_member.py) a member lost during join()."""
import os
import re
import subprocess

import pytest

from conftest import CURRENT, run_scenarios

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ["healthy", "registration", "sigint"]
PROBE_AFTER_S = 1.0  # a third of WAGMA_STALL_WARNING_S=3 (engine_settings.cc)


@pytest.fixture(scope="module")
def probe_counter(tmp_path_factory):
    """workers/probe_counter.c, built for LD_PRELOAD (against MPI's headers only)."""
    out = tmp_path_factory.mktemp("probe_counter") / "probe_counter.so"
    flags = subprocess.run(["mpicc", "--showme:compile"], capture_output=True, text=True,
                           check=True).stdout.split()
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", *flags, "-o", str(out),
                    os.path.join(HERE, "workers", "probe_counter.c"), "-ldl"], check=True)
    return str(out)


@pytest.fixture(scope="module")
def launch(probe_counter):
    env = {"WAGMA_STALL_WARNING_S": "3", "LD_PRELOAD": probe_counter}
    return run_scenarios("stall_reports.py", 2, SCENARIOS, timeout=180, env=env)


def test_no_liveness_probes_in_a_healthy_run(launch):
    """docs/faults.md: an engine probes its peers only once an application call has
    waited a third of the shortest stall window, "none in a healthy run": three bursts
    of rounds with idle pauses of 1.5 s between them (no peer heard from meanwhile)
    send none and answer none. The counter does count them: in the late registration
    rank 0's call waited 3.6 s, so its engine probed rank 1, which answered, at most
    once per third."""
    healthy = launch.results("healthy")
    for rank, res in healthy.items():
        assert res["calls"] == 24 and res["max_wait"] < PROBE_AFTER_S, res  # healthy
        assert res["probes"] == 0 and res["answers"] == 0, (rank, res)
    late = launch.results("registration")
    assert late[1]["probes"] >= 1 and late[0]["answers"] >= 1, late
    # At most one probe per peer per third of the window (1 s): a 3.6 s wait, probed
    # from 1 s on, sends about 3, not one per engine pass.
    assert late[1]["probes"] <= 4, late


def test_a_late_round0_registration_is_reported_by_the_registrar(launch):
    """docs/faults.md: "Round-0 registrations are inspected the same way": rank 1 calls
    the new stream 3.6 s after rank 0, and once the registration has waited
    WAGMA_STALL_WARNING_S (3 s) the registrar, rank 0, names the rank it waits for and
    the ranks registered, once (the next warning would come at 6 s). The round then
    completes."""
    res = launch.results("registration")
    for rank in (0, 1):
        assert res[rank]["result"] == [0.5] * 4, res[rank]
    assert res[0]["waited"] > 3.0, res[0]
    warnings = re.findall(r"\[horovod_wagma rank 0\] stall: round 0 of stream "
                          r"'late_registration' has waited for ranks \[1\] to call it "
                          r"\(registered: \[0\]\) for (\d+) s", launch.stderr)
    # Printed at 3 s (on a loaded machine the engine's pass may come a little later).
    assert len(warnings) == 1 and 3 <= int(warnings[0]) <= 4, launch.stderr[-3000:]
    assert "[horovod_wagma rank 1] stall" not in launch.stderr, launch.stderr[-3000:]


def test_ctrl_c_interrupts_a_wait_for_a_stuck_peer_at_once(launch):
    """docs/faults.md: "Waits return to Python every 100 ms, so Ctrl-C interrupts a rank
    even while it waits for a stuck peer." SIGINT 0.5 s into rank 1's wait for rank 0
    (3 s late) raises KeyboardInterrupt well under a second later, while the round is
    still pending (not when it completes); waiting again then gets its result."""
    res = launch.results("sigint")[1]
    assert res["latency"] is not None and res["latency"] < 1.0, res
    assert res["pending_when_interrupted"] is True, res
    assert res["result"] == [1.5] * 4, res  # round 0 gave both 0.5; each sent 0.5 + 1


def test_liveness_zero_counts_only_closed_connections(mpi, monkeypatch):
    """docs/faults.md: HOROVOD_WAGMA_LIVENESS_S=0, "only closed connections" make a peer
    lost under elastic. A stopped rank 1 (no connection closes) is not declared lost by
    its silence: rank 0's round ends in the stall timeout (3 s), naming it as not
    responding, and no membership change comes. A rank that dies without a goodbye
    (its connections close) still is lost: rank 0's next round fails at once with the
    membership change."""
    monkeypatch.setitem(CURRENT, "transport", "gloo")
    env = {"HOROVOD_ELASTIC": "1", "HOROVOD_WAGMA_LIVENESS_S": "0",
           "WAGMA_STALL_TIMEOUT_S": "3", "HOROVOD_WAGMA_LOSS_SETTLE_MS": "300"}
    run = mpi("liveness_zero.py", 2, timeout=120, env=env, check=False)
    assert sorted(run.results) == [0, 1], (run.stdout[-3000:], run.stderr[-3000:])
    stopped, killed = run.results[0]["stopped"], run.results[0]["killed"]
    assert stopped["type"] == "WagmaError", stopped  # not WagmaMembershipChanged
    assert run.results[0]["again"]["error"] is None, run.results[0]["again"]
    assert stopped["error"].startswith("stalled: waited") and \
        "global round 1 of stream 'w'" in stopped["error"], stopped
    assert "ranks not responding: [1]" in stopped["error"], stopped
    assert stopped["seconds"] > 2.9, stopped
    assert "no answer to liveness probes" not in run.stderr, run.stderr[-3000:]
    assert "WagmaMembershipChanged" in killed["mro"], killed
    assert "membership changed" in killed["error"] and "rank 1" in killed["error"], killed
    # faults.md's verdict text: the lost rank, then how many of the member set remain
    # (1 of 2: half, with rank 0, so it goes on).
    assert re.search(r"membership changed: rank 1 was lost \([^()]*\); 1 of 2 ranks remain",
                     killed["error"]), killed
    assert killed["seconds"] < 10, killed
    assert "[horovod_wagma rank 0] rank 1 was lost: its connection closed" in run.stderr, \
        run.stderr[-3000:]


def test_a_member_lost_during_join_raises_the_membership_verdict(mpi, monkeypatch):
    """docs/faults.md, elastic.md: under elastic a lost member raises
    WagmaMembershipChanged (a HorovodInternalError: elastic.run resets), also when the
    survivors wait in join() (the engine's join reports the verdict; its text must map
    to the same exception as a round's). Rank 2 dies without a goodbye while ranks 0
    and 1 are in join(): 2 of 3 remain, a majority, so the verdict is a membership
    change naming rank 2, within seconds."""
    monkeypatch.setitem(CURRENT, "transport", "gloo")
    env = {"HOROVOD_ELASTIC": "1", "HOROVOD_WAGMA_LOSS_SETTLE_MS": "300"}
    run = mpi("join_lost_member.py", 3, timeout=120, env=env, check=False)
    assert sorted(run.results) == [0, 1], (run.stdout[-3000:], run.stderr[-3000:])
    for rank in (0, 1):
        joined = run.results[rank]["joined"]
        assert joined["error"] is not None, joined
        assert joined["type"] == "WagmaMembershipChanged", joined
        assert "HorovodInternalError" in joined["mro"], joined
        assert re.search(r"membership changed: rank 2 was lost \([^()]*\); 2 of 3 ranks "
                         r"remain", joined["error"]), joined
        assert joined["seconds"] < 15, joined
