"""stats() against a scripted scenario, and the WAGMA_TIMELINE trace of a real run."""
import glob
import json
import os
import subprocess
import sys

import pytest

from conftest import framework_env

pytestmark = pytest.mark.ranks


@pytest.mark.extended_when(framework="tensorflow")
def test_stats_count_a_known_straggler(mpi, framework, tmp_path):
    trace = str(tmp_path / "trace.json")
    run = mpi("stats_scenario.py", 2, timeout=120,
              env=dict(framework_env(framework), WAGMA_TIMELINE=trace))
    fast, slow = run.results[0]["s"], run.results[1]["s"]
    n_bytes = 1000 * 4
    for st in (fast, slow):
        assert st["rounds"] == 6 and st["global_rounds"] == 1
        assert st["bytes_sent"] == 6 * n_bytes  # a pair: each sends its whole tensor
        assert st["errors"] == 0
    # The fast rank activated every group round; the slow rank's engine joined them
    # all with its round-0 output, 0..4 rounds stale.
    assert fast["activations_sent"] == 5 and fast["passive_joins"] == 0
    assert slow["activations_sent"] == 0 and slow["passive_joins"] == 5
    assert slow["staleness_max"] == 4 and abs(slow["staleness_mean"] - 2.0) < 1e-9
    # Its results were ready when it asked: it never waited in a group round.
    assert slow["group_wait_s"] < 0.05
    # Blocking global rounds: the app that waits for a late peer counts it in
    # global_wait_s (docs/faults.md), never in group_wait_s; the late one hardly waits.
    g_fast, g_slow = run.results[0]["g"], run.results[1]["g"]
    for st in (g_fast, g_slow):
        assert st["rounds"] == 2 and st["global_rounds"] == 2, st
        assert st["group_wait_s"] == 0, st
    assert g_fast["global_wait_s"] >= 0.45, g_fast  # rank 1 came 0.6 s late
    assert g_slow["global_wait_s"] < g_fast["global_wait_s"] - 0.3, (g_slow, g_fast)
    # Waiting is the time the app was blocked, not the time its round took: rank 0's
    # async round 1 completed about 0.3 s after its call while it computed for 1 s.
    # (TensorFlow's op completes through a callback the framework waits on from the
    # call: there the whole call counts.)
    if framework == "torch":
        a_fast = run.results[0]["a"]
        assert a_fast["rounds"] == 2 and a_fast["global_wait_s"] < 0.15, a_fast
    assert run.results[0]["all"] == ["a", "g", "other", "s"]
    assert "no-such-stream" in run.results[0]["unknown"]

    from horovod_wagma.timeline import load_traces
    files = sorted(glob.glob(str(tmp_path / "trace.*.json")))
    assert [os.path.basename(f) for f in files] == ["trace.0.json", "trace.1.json"]
    for f in files:
        with open(f) as fh:
            json.load(fh)  # closed at exit: valid JSON
    events = load_traces(files)
    by = {}
    for e in events:
        by.setdefault((e["pid"], e.get("cat"), e["name"]), []).append(e)
    app0 = [e for e in by[(0, "app", "s")]]
    assert len(app0) == 6 and sum(e["args"]["kind"] == "global" for e in app0) == 1
    assert len(by[(1, "join", "passive_join")]) == 5
    assert len(by[(0, "activation", "activation_sent")]) == 5
    assert len(by[(1, "activation", "activation_received")]) == 5
    # Each activation names its round and its peers: rank 0 told rank 1 of rounds 1..5,
    # and rank 1 heard them from rank 0.
    sent = by[(0, "activation", "activation_sent")]
    received = by[(1, "activation", "activation_received")]
    assert sorted(e["args"]["round"] for e in sent) == [1, 2, 3, 4, 5], sent
    assert all(e["args"]["stream"] == "s" and e["args"]["to"] == [1] for e in sent), sent
    assert sorted(e["args"]["round"] for e in received) == [1, 2, 3, 4, 5], received
    assert all(e["args"]["stream"] == "s" and e["args"]["from"] == 0 for e in received), \
        received
    passive = [e for e in by[(1, "reduction", "s")] if e["args"]["passive"]]
    assert len(passive) == 5 and all(e["dur"] >= 0 for e in passive)
    assert all(e["ph"] == "X" and "round" in e["args"] for e in by[(0, "wait", "s")])
    # The waits drawn are the waits counted: rank 0's wait spans on "g" add up to its
    # global_wait_s (PyTorch: the same microseconds; TensorFlow's call spans and
    # counter take the clock apart), the long one in round 1, where rank 1 came late.
    waits_g = by[(0, "wait", "g")]
    drawn_us = sum(e["dur"] for e in waits_g)
    slack_us = 2 if framework == "torch" else 2000 + 0.02 * drawn_us
    assert abs(drawn_us - g_fast["global_wait_s"] * 1e6) <= slack_us, (waits_g, g_fast)
    longest = max(waits_g, key=lambda e: e["dur"])
    assert longest["args"]["round"] == 1 and longest["dur"] >= 0.3e6, waits_g
    assert [e["args"]["staleness"] for e in by[(1, "join", "passive_join")]] == [0, 1, 2, 3, 4]

    png = tmp_path / "timeline.png"
    out = subprocess.run([sys.executable, "-m", "horovod_wagma.timeline", *files,
                          "-o", str(png)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert png.stat().st_size > 10000
