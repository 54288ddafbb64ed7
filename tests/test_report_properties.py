"""The fault reports' contents with their parameters varied (docs/faults.md, "What
happens when"; claims F8-F14, F49-F52b): which rank stops, leaves or stays away (rank
0, a middle one, the last), in which round, how many ranks and rounds are missing. Each
report's numbers and names are matched whole (the rank, the stream, the round, the
count, the full list of missing ranks, the units), against the scenario's own
parameters and the engine's counters, and the per-window counts against the
cumulative ones. The texts' every branch is also matched in one process by
cpp_ops/engine/tests/report_text_test.cc.

Launches (MPI only: the texts are the engine's, whatever its transport):
  - one 4-rank mpirun of workers/report_properties.py with WAGMA_STALL_WARNING_S=1,
    WAGMA_STALL_TIMEOUT_S=4, WAGMA_HOLD_REPORT_S=1, WAGMA_TEST_LOSE_ACTIVATIONS=2 and a
    timeline, running every scenario in turn (late round-0 registrations, late apps in
    rounds that wait for every member, apps that stay away, a joined rank's lost
    activations, stopped ranks): about a minute;
  - 3-rank mpiruns of workers/report_exit.py (the middle rank leaves without join();
    rank 0 in make test-all) and workers/early_exit.py (a middle rank leaves while the
    others are in join(); rank 0 in make test-all).

Three of these found engine bugs, fixed the same day (2026-12-06): a failed round's stall
warnings went on repeating; join() after a leaver's goodbye, and join() when rank 0 (the
registrar) left, waited for Horovod's shutdown timeout and named no rank."""
import glob
import os
import re

import pytest

from conftest import run_mpi, run_scenarios

P = 4
STOP_S = 6.0  # workers/report_properties.py
AWAY_ROUNDS = 45
REG = {"reg:3=1.6:1=2.9": {3: 1.6, 1: 2.9}, "reg:0=1.6": {0: 1.6}}
HOLD = {"hold:2:1:0:3": {1: [2], 3: [0]}, "hold:1-3:2": {2: [1, 3]}}
AWAY = {"away:0:2": (0, 2), "away:2:0": (2, 0)}
STOPS = {"stop:1:global": (1, "global"), "stop:3:group": (3, "group"),
         "stop:2:group": (2, "group"), "stop:0:global": (0, "global")}
# Order matters: the stopped ranks' rounds last (stale inspector entries would warn into
# the later scenarios), rank 0 stopped the very last.
SCENARIOS = list(REG) + list(HOLD) + list(AWAY) + ["lost:3"] + list(STOPS)
TIMEOUT_S = 4


def ranks(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def lines(stderr, pattern):
    """Every stderr line that fully matches `pattern`, as match objects."""
    return [m for m in (re.fullmatch(pattern, line) for line in stderr.splitlines()) if m]


def stream_lines(stderr, stream):
    return [line for line in stderr.splitlines() if f"stream '{stream}'" in line]


@pytest.fixture(scope="module")
def reports(transport, tmp_path_factory):
    trace = str(tmp_path_factory.mktemp("report_trace") / "trace.json")
    env = {"WAGMA_STALL_WARNING_S": "1", "WAGMA_STALL_TIMEOUT_S": str(TIMEOUT_S),
           "WAGMA_HOLD_REPORT_S": "1", "WAGMA_TEST_LOSE_ACTIVATIONS": "2",
           "WAGMA_TIMELINE": trace}
    launch = run_scenarios("report_properties.py", P, SCENARIOS, timeout=300, env=env)
    from horovod_wagma.timeline import load_traces
    launch.events = load_traces(sorted(glob.glob(trace.replace(".json", ".*.json"))))
    return launch


def faults(launch, name, stream=None, pid=None):
    """The timeline's fault events `name` (of `stream`, on rank `pid`)."""
    return [e for e in launch.events if e.get("cat") == "fault" and e["name"] == name
            and (stream is None or e["args"].get("stream") == stream)
            and (pid is None or e["pid"] == pid)]


# --- round-0 registrations (F12) -----------------------------------------------------------

@pytest.mark.parametrize("scenario", list(REG))
def test_a_late_registration_names_every_missing_and_registered_rank(reports, scenario):
    """The registrar (rank 0) warns once the registration has waited the warning time
    (1 s), then every warning time, each warning naming the ranks not yet registered
    (the whole list, sorted), the ranks registered (every other member) and the whole
    seconds waited; a rank registering meanwhile leaves the list. Rank 0 itself late:
    it names itself. Nothing else reports on a round 0 (no hold report: it is not a
    round yet)."""
    late = REG[scenario]
    name = "reg." + "_".join(s.replace("=", "-").replace(".", "_")
                             for s in scenario.split(":")[1:])
    res = reports.results(scenario)
    for r in range(P):
        assert res[r]["result"] == [1.5] * 4, res[r]
    found = lines(reports.stderr, r"\[horovod_wagma rank (\d+)\] stall: round 0 of stream "
                                  + re.escape(f"'{name}'") + r" has waited for ranks "
                                  r"\[([\d, ]*)\] to call it \(registered: \[([\d, ]*)\]\) "
                                  r"for (\d+) s")
    assert found, reports.stderr[-3000:]
    assert len(found) == len(stream_lines(reports.stderr, name)), stream_lines(reports.stderr,
                                                                                name)
    seconds = [int(m.group(4)) for m in found]
    assert seconds[0] == 1 and seconds == sorted(set(seconds)), seconds
    assert seconds[-1] <= max(late.values()) + 0.5, seconds
    previous = set(late)
    for m in found:
        assert m.group(1) == "0", m.group(0)  # the registrar
        missing = [int(x) for x in m.group(2).split(", ")]
        registered = [int(x) for x in m.group(3).split(", ")]
        assert missing == sorted(missing), m.group(0)
        # Every member once: the missing ones and those registered (in arrival order).
        assert sorted(missing + registered) == list(range(P)), m.group(0)
        # Only late ranks are missing, and a rank once registered stays so.
        assert set(missing) <= previous, (m.group(0), previous)
        previous = set(missing)
        # Missing now: the ranks still late at this warning (0.4 s or more either way).
        waited = int(m.group(4))
        assert set(missing) >= {r for r, s in late.items() if s > waited + 0.4}, m.group(0)
        assert set(missing) <= {r for r, s in late.items() if s > waited - 0.4}, m.group(0)
    # The first warning (1 s) names every late rank; the last only the latest.
    assert [int(x) for x in found[0].group(2).split(", ")] == sorted(late), found[0].group(0)
    assert [int(x) for x in found[-1].group(2).split(", ")] == [max(late, key=late.get)]


# --- hold reports and the stall warnings of late apps (F11, F18, F49, F50, F52) -------------

def _hold_rounds(scenario):
    late = HOLD[scenario]
    waiting = {k: [r for r in range(P) if r not in late[k]] for k in late}
    return "hold." + "_".join(scenario.split(":")[1:]), late, waiting


@pytest.mark.parametrize("scenario", list(HOLD))
def test_hold_reports_once_per_round_name_the_members_and_what_each_waits_on(reports,
                                                                             scenario):
    """Rounds that wait for every member (one group of 4), some members' apps 2.5 s late
    in a round (rank 2 in round 1 then rank 0 in round 3; ranks 1 and 3 together in
    round 2). Each waiting rank reports the round once (not again at 2 s), with its kind
    and number, the stream, every member, and a receive from each late rank, nothing
    else; every other member prints its view of it once per asker: a late rank has not
    started it (its app not in a call, next round that one), a waiting one waits on the
    same late ranks. hold_reports counts each waiting rank's held rounds, and the
    timeline holds one `hold` fault per report."""
    name, late, waiting = _hold_rounds(scenario)
    res = reports.results(scenario)
    stream = re.escape(f"'{name}'")
    join0 = r"join\(\) here: not called, ranks heard to have called it: none, joins ended: 0"
    for k, late_ranks in late.items():
        waits_on = ", ".join(f"receive from rank {r}" for r in late_ranks)
        for w in waiting[k]:
            assert res[w]["waits"][k] > 2.0, (w, res[w])
            report = lines(reports.stderr, rf"\[horovod_wagma rank {w}\] hold: the application "
                           rf"has waited (\d+\.\d) s in group round {k} of stream {stream} "
                           r"\(members \[0, 1, 2, 3\]; joined by the app, activations sent: "
                           rf"no\); waits on: {waits_on}; earlier rounds of the stream in "
                           rf"flight here: none; {join0}\. Each other member prints its view "
                           r"of the round \(WAGMA_HOLD_REPORT_S sets when\)\.")
            assert len(report) == 1, (w, k, stream_lines(reports.stderr, name))
            assert 1.0 <= float(report[0].group(1)) < 2.0, report[0].group(0)
            for m in range(P):
                if m == w:
                    continue
                if m in late_ranks:
                    here = (rf"not started: no activation has arrived; its app is not in a "
                            rf"call \(next round {k}\)")
                else:
                    here = (rf"joined by the app, in flight, waits on: {waits_on}; its app "
                            rf"waits in round {k}")
                view = lines(reports.stderr, rf"\[horovod_wagma rank {m}\] hold: rank {w} "
                             rf"waits in round {k} of stream {stream}; here: {here}, last "
                             rf"called the stream (\d+\.\d) s ago; {join0}")
                assert len(view) == 1, (m, w, k, stream_lines(reports.stderr, name))
                assert 0.5 <= float(view[0].group(1)) < 2.5, view[0].group(0)
    # Nothing else was reported on the stream: each waiting rank once per round, each
    # other member once per report.
    held = sum(len(w) for w in waiting.values())
    assert sum("hold: the application has waited" in x
               for x in stream_lines(reports.stderr, name)) == held
    assert sum(" hold: rank " in x for x in stream_lines(reports.stderr, name)) == held * (P - 1)
    for r in range(P):
        assert res[r]["result"] == [1.5] * 4, res[r]
        assert res[r]["counters"]["hold_reports"] == sum(r in w for w in waiting.values()), \
            (r, res[r]["counters"])
        # The stream's waits are the app's own, by kind: round 0 is its one global round,
        # the others group rounds (2.5 s in each round this rank waited in, none where
        # it came late).
        st, waits = res[r]["stream"], res[r]["waits"]
        assert st["rounds"] == len(waits) and st["global_rounds"] == 1 and st["errors"] == 0, st
        assert abs(st["global_wait_s"] - waits[0]) < 0.05, (st, waits)
        assert abs(st["group_wait_s"] - sum(waits[1:])) < 0.05, (st, waits)
        assert abs(st["group_wait_s"] - 2.5 * sum(r in w for w in waiting.values())) < 0.5, \
            (r, st, waits)
        assert sorted(e["args"]["round"] for e in faults(reports, "hold", name, r)) == \
            sorted(k for k, w in waiting.items() if r in w), r


@pytest.mark.parametrize("scenario", list(HOLD))
def test_the_stall_warning_of_a_late_app_names_its_rank_and_blames_no_live_engine(reports,
                                                                                 scenario):
    """The same late apps: the round's inspector, its first member (rank 0, also when it
    is the late one), warns after 1 s and again at 2 s, naming exactly the late ranks as
    not waiting in the group round, and every other member as waiting, with the whole
    seconds waited. Their engines answer the liveness probes, so no rank is called not
    responding (faults.md: a slow application is never blamed). Only rank 0 warns, and
    the timeline's stall_warning events name the same missing ranks."""
    name, late, waiting = _hold_rounds(scenario)
    stream = re.escape(f"'{name}'")
    for k, late_ranks in late.items():
        warned = lines(reports.stderr, rf"\[horovod_wagma rank 0\] stall: group round {k} of "
                       rf"stream {stream} has waited (\d+) s; ranks not waiting in it: "
                       rf"{re.escape(ranks(late_ranks))} \(stall report of rank 0\); waiting: "
                       rf"{re.escape(ranks(waiting[k]))}\. A rank may be stuck, .* "
                       r"WAGMA_STALL_TIMEOUT_S makes the waiting ranks raise\.")
        seconds = [int(m.group(1)) for m in warned]
        assert seconds and seconds[0] == 1 and seconds == sorted(set(seconds)), \
            stream_lines(reports.stderr, name)
        assert seconds[-1] <= 3, seconds
        events = [e for e in faults(reports, "stall_warning", name) if e["args"]["round"] == k]
        assert {e["pid"] for e in events} == {0}, events
        assert [e["args"]["missing"] for e in events] == [late_ranks] * len(warned), events
    stalls = [x for x in stream_lines(reports.stderr, name) if "stall:" in x]
    assert len(stalls) == sum(
        len(lines(reports.stderr, rf"\[horovod_wagma rank 0\] stall: group round {k} of stream "
                                  rf"{stream} has waited .*")) for k in late), stalls
    assert not any("not responding" in x for x in stream_lines(reports.stderr, name)), stalls


# --- an application that stays away (F10, F43) ---------------------------------------------

@pytest.mark.parametrize("scenario", list(AWAY))
def test_an_away_app_is_named_with_its_last_round_and_the_rounds_left_out_since(reports,
                                                                                scenario):
    """Rank R's app (rank 0, then the middle rank 2 with max_staleness 0) calls a stream
    of wait-avoiding global rounds 5 times, stays away 2.5 s while the others go on (a
    round every 0.1 s), calls once more and stays away again. Its engine joins every
    round meanwhile, each value as old as the rounds since its app's last call (the
    timeline's passive joins). Each absence is reported by rank R alone, once per
    warning window: rank R named three times, the stream, the seconds away (1, then
    more), the last round its app called (the fifth call's, then the round its return
    was served by), the stream's max_staleness, and the rounds left out since that call:
    a count per absence (it restarts), growing within it and never above the absence's
    values older than max_staleness. rounds_left_out is cumulative: with
    rounds_kept_ahead it counts every passive value older than max_staleness, both
    absences; the timeline's app_away events carry the printed counts."""
    r, m = AWAY[scenario]
    name = f"away.{r}"
    res = reports.results(scenario)
    away = res[r]
    served = away["served"]
    first, back = served[4], away["returned"]
    assert back > first + m + 1, served
    last = max(res[o]["served"][-1] for o in range(P) if o != r)
    assert last == AWAY_ROUNDS - 1, [res[o]["served"][-1] for o in range(P)]
    st = away["stream"]
    assert st["rounds"] == 6, st
    # Rounds its app skipped: those between its calls' rounds, the absence included.
    assert st["rounds_skipped"] == sum(b - a - 1 for a, b in zip([-1] + served, served)), \
        (st, served)
    joins = {e["args"]["round"]: e["args"] for e in reports.events
             if e.get("cat") == "join" and e["name"] == "passive_join" and e["pid"] == r
             and e["args"]["stream"] == name}
    assert st["passive_joins"] == len(joins), (st, sorted(joins))
    absent = [k for k in range(first + 1, last + 1) if k != back]
    assert set(absent) <= set(joins) <= set(range(last + 1)), (sorted(joins), first, back)
    for k in absent:
        since = first if k < back else back
        assert joins[k]["age"] == k - since, (k, joins[k], first, back)
    for k, j in joins.items():
        assert j["stale_in_rounds"] == (j["age"] > m), (k, j)
    stale = [sum(j["stale_in_rounds"] for k, j in joins.items() if first < k <= back),
             sum(j["stale_in_rounds"] for k, j in joins.items() if k > back)]
    assert stale[0] >= back - 1 - first - m and stale[1] == last - back - m, (stale, first, back)
    assert st["rounds_left_out"] + st["rounds_kept_ahead"] == \
        sum(j["stale_in_rounds"] for j in joins.values()), (st, stale)
    assert st["rounds_left_out"] >= 1 and st["contribution_age_max"] <= m, st
    # Every passive value either was left out or entered the average with an age, at
    # most max_staleness; the mean is the histogram's.
    ages = {int(a): n for a, n in st["contribution_age_histogram"].items()}
    assert sum(ages.values()) == st["passive_joins"] - st["rounds_left_out"], st
    if ages:
        assert max(ages) <= m and st["contribution_age_max"] == max(ages), st
        assert st["contribution_age_mean"] == pytest.approx(
            sum(a * n for a, n in ages.items()) / sum(ages.values())), st
    assert away["counters"]["rounds_left_out"] == st["rounds_left_out"], away["counters"]
    for o in range(P):
        assert res[o]["stream"]["contribution_age_max"] <= m, (o, res[o]["stream"])
    found = lines(reports.stderr, r"\[horovod_wagma rank (\d+)\] stall: the application of rank "
                  r"(\d+) has not called stream " + re.escape(f"'{name}'") + r" for (\d+) s "
                  r"\(its last round: (\d+)\); its engine joined (\d+) later round\(s\) with a "
                  r"value too old \(max_staleness=(\d+)\), left out of the average\. Nobody "
                  r"waits for it: the other ranks go on\. If rank (\d+) is stuck, look there; "
                  r"if it waits in a Horovod collective, the others will reach it\.")
    assert len(found) == sum("the application of rank" in x
                             for x in stream_lines(reports.stderr, name)), \
        stream_lines(reports.stderr, name)
    for f in found:
        assert f.group(1) == f.group(2) == f.group(7) == str(r), f.group(0)
        assert int(f.group(6)) == m, f.group(0)
    windows = {}
    for f in found:
        windows.setdefault(int(f.group(4)), []).append((int(f.group(3)), int(f.group(5))))
    assert list(windows) == [first, back], (list(windows), first, back)
    for (round_, printed), most in zip(windows.items(), stale):
        seconds = [s for s, _ in printed]
        counts = [n for _, n in printed]
        # Once per warning window (1 s): the seconds printed grow by one or more.
        assert seconds[0] in (1, 2) and seconds == sorted(set(seconds)), (round_, printed)
        assert 1 <= counts[0] and counts == sorted(counts) and counts[-1] <= most, \
            (round_, printed, most)
    assert sum(w[-1][1] for w in windows.values()) <= st["rounds_left_out"], (windows, st)
    events = faults(reports, "app_away", name)
    assert {e["pid"] for e in events} == {r} and all(e["args"]["rank"] == r for e in events)
    assert [e["args"]["left_out"] for e in events] == \
        [n for w in windows.values() for _, n in w], (events, windows)


# --- a joined rank's lost activation (F52a, F52b) ----------------------------------------------

def test_the_last_rank_joined_serves_a_round_whose_activation_was_lost(reports):
    """As test_faults' case with the joined rank the last one (3), not the registrar:
    the waiting ranks' hold queries make its engine join blocking global round 3 with
    its final model, once, saying so and naming the asker; the waiting ranks' reports
    say they heard rank 3 call join(), rank 3's views that it called it;
    joins_on_hold_query counts 1 there and 0 elsewhere; round 3 is exact."""
    res = reports.results("lost:3")
    final3 = res[3]["outputs"][-1]
    expected = [(final3[i] + sum(res[r]["inputs"][3][i] for r in (0, 1, 2))) / 4
                for i in range(2)]
    for r in (0, 1, 2):
        assert res[r]["outputs"][3] == expected, (r, res[r], final3)
    assert max(res[r]["waits"][3] for r in (0, 1, 2)) >= 1.0, res
    assert [res[r]["counters"]["joins_on_hold_query"] for r in range(P)] == [0, 0, 0, 1], res
    assert {res[r]["last"] for r in range(P)} == {res[0]["last"]}, res
    joining = lines(reports.stderr, r"\[horovod_wagma rank 3\] hold: this rank called join\(\) "
                    r"and serves every round, but round 3 of stream 'lost\.3' had not started "
                    r"here and no activation for it had arrived; rank ([012]) waits in it: "
                    r"joining it now")
    assert len(joining) == 1, stream_lines(reports.stderr, "lost.3")
    assert [e["args"]["round"] for e in faults(reports, "join_on_hold_query", "lost.3")] == [3]
    assert [e["pid"] for e in faults(reports, "join_on_hold_query", "lost.3")] == [3]
    held = lines(reports.stderr, r"\[horovod_wagma rank ([012])\] hold: the application has "
                 r"waited \d+\.\d s in global round 3 of stream 'lost\.3' \(members \[0, 1, 2, "
                 r"3\]; .*; join\(\) here: not called, ranks heard to have called it: \[3\], "
                 r"joins ended: (\d+)\. Each other member .*")
    assert held, stream_lines(reports.stderr, "lost.3")
    views = lines(reports.stderr, r"\[horovod_wagma rank 3\] hold: rank ([012]) waits in round 3 "
                  r"of stream 'lost\.3'; here: .*; join\(\) here: called, ranks heard to have "
                  r"called it: none, joins ended: (\d+)")
    assert views and joining[0].group(1) in {v.group(1) for v in views}, views
    assert {m.group(2) for m in held + views} == {"0"}, (held, views)


# --- stopped ranks: the stall warning, the timeout error, the loop pause (F11, F13, F14, F51) --

def _stop(scenario):
    r, kind = STOPS[scenario]
    name = f"stop.{r}.{kind}"
    if kind == "global":
        return r, name, "global", 4, [m for m in range(P) if m != r], list(range(P))
    from horovod_wagma.common.op.schedule import groups
    group = next(g for g in groups(P, 2)[0] if r in g)  # round 1: phase 0
    return r, name, "group", 1, [m for m in group if m != r], sorted(group)


@pytest.mark.parametrize("scenario", list(STOPS))
def test_a_stopped_rank_is_named_in_the_timeout_error_of_each_rank_waiting_for_it(reports,
                                                                                 scenario):
    """Rank R (1, 3, 2, then 0) stops its process before a round: global round 4, or
    group round 1 of groups of 2. Each rank waiting in the round raises at the timeout
    (4 s) naming the round's kind and number, the stream, the stopped rank as not
    responding (its silence since the probe, between the grace and the wait) and then
    the inspector's note: the missing rank and the inspector (rank 0 for the global
    round, the group's first member for the group round). Where the inspector is the
    stopped rank itself, there is no note. The ranks not in the round complete;
    `errors` counts the one failed round."""
    r, name, kind, round_, waiting, members = _stop(scenario)
    res = reports.results(scenario)
    inspector = members[0]
    if inspector == r:
        note = ""
    elif kind == "global":
        note = f"; ranks that have not entered it: [{r}] (stall report of rank {inspector})"
    else:
        note = f"; ranks not waiting in it: [{r}] (stall report of rank {inspector})"
    for w in range(P):
        if w == r:
            assert res[w]["stopped"], res[w]
            continue
        if w not in waiting:
            assert res[w]["error"] is None and res[w]["errors"] == 0, (w, res[w])
            continue
        error = re.fullmatch(rf"stalled: waited (\d+\.\d) s \(WAGMA_STALL_TIMEOUT_S={TIMEOUT_S}\) "
                             rf"in {kind} round {round_} of stream '{re.escape(name)}'; ranks not "
                             rf"responding: \[{r}\] \(no answer to a liveness probe for "
                             r"(\d+\.\d) s: stopped, dead or unreachable\)" + re.escape(note),
                             res[w]["error"] or "")
        assert error and res[w]["type"] == "WagmaError", (w, res[w])
        waited, silent = float(error.group(1)), float(error.group(2))
        assert TIMEOUT_S <= waited < TIMEOUT_S + 3 and 1.0 <= silent <= waited, res[w]
        assert TIMEOUT_S - 0.1 < res[w]["seconds"] < TIMEOUT_S + 6, res[w]
        assert res[w]["errors"] == 1, res[w]


@pytest.mark.parametrize("scenario", list(STOPS))
def test_a_stopped_rank_is_named_in_the_warnings_hold_reports_and_its_own_pause(reports,
                                                                               scenario):
    """The same stopped ranks, before the timeout: the inspector (when it is not the
    stopped rank) warns naming it as missing and as not responding, with the ranks
    waiting; each waiting rank's hold report (1 s) names the round, every member and a
    receive from the stopped rank, once although it waits 4 s (hold_reports: 1); the
    stopped rank, resumed after 6 s, answers each report with its view (not started,
    its app not in a call) and reports its own loop's pause, asleep, about 6 s long
    (loop_pauses: 1)."""
    r, name, kind, round_, waiting, members = _stop(scenario)
    res = reports.results(scenario)
    inspector = members[0]
    stream = re.escape(f"'{name}'")
    what = "ranks that have not entered it" if kind == "global" else "ranks not waiting in it"
    if inspector != r:
        warned = lines(reports.stderr, rf"\[horovod_wagma rank {inspector}\] stall: {kind} round "
                       rf"{round_} of stream {stream} has waited (\d+) s; {what}: \[{r}\] \(stall "
                       rf"report of rank {inspector}\); waiting: {re.escape(ranks(waiting))}; "
                       rf"ranks not responding: \[{r}\] \(no answer to a liveness probe for "
                       r"(\d+\.\d) s: stopped, dead or unreachable\)\. A rank may be stuck, .*")
        assert [m for m in warned if int(m.group(1)) <= TIMEOUT_S], \
            stream_lines(reports.stderr, name)
    for w in waiting:
        report = lines(reports.stderr, rf"\[horovod_wagma rank {w}\] hold: the application has "
                       rf"waited (\d+\.\d) s in {kind} round {round_} of stream {stream} "
                       rf"\(members {re.escape(ranks(members))}; joined by the app, activations "
                       rf"sent: no\); waits on: receive from rank {r}; earlier rounds of the "
                       r"stream in flight here: none; join\(\) here: .*")
        assert len(report) == 1, stream_lines(reports.stderr, name)
        assert 1.0 <= float(report[0].group(1)) < 2.5, report[0].group(0)
        assert res[w]["counters"]["hold_reports"] == 1, (w, res[w]["counters"])
        view = lines(reports.stderr, rf"\[horovod_wagma rank {r}\] hold: rank {w} waits in round "
                     rf"{round_} of stream {stream}; here: not started: no activation has "
                     rf"arrived; its app is not in a call \(next round {round_}\), last called "
                     r"the stream (\d+\.\d) s ago; .*")
        assert len(view) == 1, stream_lines(reports.stderr, name)
    paused = lines(reports.stderr, rf"\[horovod_wagma rank {r}\] hold: this engine's loop did not "
                   r"run for (\d+\.\d) s \(the thread was blocked or not scheduled\): every round "
                   r"it serves waited that long; of those (\d+\.\d) s the thread ran (\d+\.\d) s "
                   r"on a CPU, waited (\d+\.\d) s runnable and slept (\d+\.\d) s: asleep \(blocked "
                   r"on a lock or a wait, or stopped\)")
    near = [m for m in paused if STOP_S - 1 <= float(m.group(1)) < STOP_S + 3]
    assert len(near) == 1 and float(near[0].group(5)) >= STOP_S - 1.5, \
        [m.group(0) for m in paused]
    assert res[r]["counters"]["loop_pauses"] == 1, res[r]
    assert res[r]["counters"]["hold_reports"] == 0, res[r]


def test_stall_warnings_stop_once_the_round_failed_at_the_timeout(reports):
    """faults.md: the inspector's warning "repeats while the stall lasts". A round that
    failed at WAGMA_STALL_TIMEOUT_S on every waiting rank, the inspector included, no
    longer stalls: no warning about it comes later than the timeout."""
    late = {}
    for scenario in STOPS:
        r, name, kind, round_, waiting, members = _stop(scenario)
        for m in lines(reports.stderr, r"\[horovod_wagma rank \d+\] stall: \w+ round \d+ of "
                       + re.escape(f"stream '{name}'") + r" has waited (\d+) s; .*"):
            if int(m.group(1)) > TIMEOUT_S:
                late.setdefault(name, []).append(m.group(0)[:160])
    assert not late, late


# --- early exit (F8, F9, F34, F36) ----------------------------------------------------------

EXIT_SHUTDOWN_S = 3


@pytest.fixture(scope="module", params=[1, pytest.param(0, marks=pytest.mark.extended)],
                ids=["leaver1", "leaver0"])
def exited(request, transport):
    leaver = request.param
    # The stall timeout turns a round left waiting for the leaver into an error (a test
    # failure, not a hang until the launch's timeout).
    run = run_mpi("report_exit.py", 3, leaver, timeout=150,
                  env={"HOROVOD_WAGMA_SHUTDOWN_TIMEOUT": str(EXIT_SHUTDOWN_S),
                       "WAGMA_STALL_TIMEOUT_S": "20"})
    return leaver, run


def test_a_leaver_is_named_with_its_last_round_of_each_stream(exited):
    """P=3, the middle rank (or rank 0, the registrar) leaves without join() after
    rounds 0-2 of 'a' and 0-5 of 'b', while the others wait in round 0 of 'c'. Each
    other rank's call fails at once: 'c' and a new stream because the leaver can never
    register them (rank 0: because it validates every stream), 'a' round 3 and 'b'
    round 6 naming its last round of each, and 'a' again naming round 4, the next; the
    error texts whole, the same on every rank. `errors` counts each failed round of the
    stream (2 of 'a', 1 of 'b'). If the leaver's shutdown gave up waiting for its
    peers, it says so with its rank and HOROVOD_WAGMA_SHUTDOWN_TIMEOUT."""
    leaver, run = exited
    advice = " (a rank that runs out of data must call join())"

    def left(stream, last, round_):
        return (f"rank {leaver} left without join(): its engine shut down after round {last} "
                f"of stream '{stream}', and round {round_} needs it" + advice)

    def never(stream):
        if leaver == 0:
            return (f"rank 0 left without join() before round 0 of stream '{stream}' was "
                    f"validated (rank 0 validates every new stream)")
        return (f"rank {leaver} left without join() before round 0 of stream '{stream}', so it "
                f"can never run the stream")

    expected = {"c": never("c"), "a": left("a", 2, 3), "b": left("b", 5, 6),
                "late": never("late"), "a_again": left("a", 2, 4)}
    assert run.results[leaver] == {"rank": leaver, "left": True}
    for r in set(range(3)) - {leaver}:
        res = run.results[r]
        for key, text in expected.items():
            assert res[key]["error"] == text and res[key]["type"] == "WagmaError", (r, key, res)
            assert res[key]["seconds"] < 10, (r, key, res[key])
        assert res["stats"] == {"a": 2, "b": 1}, res["stats"]
        # api.md: poll() says a failed handle will not block; a second synchronize()
        # raises the same error again.
        assert res["c_polled"] is True, (r, res["c_polled"])
        assert res["c_again"]["error"] == expected["c"] and \
            res["c_again"]["type"] == "WagmaError", (r, res["c_again"])
    gave_up = [line for line in run.stderr.splitlines() if "shutdown: gave up" in line]
    for line in gave_up:
        assert line == (f"[horovod_wagma rank {leaver}] shutdown: gave up after "
                        f"{EXIT_SHUTDOWN_S} s with 0 round(s) in flight (peers gone or a round "
                        "was never entered)"), gave_up


def test_join_after_a_rank_left_does_not_hang(exited):
    """join() on the others after the leaver left raises rather than hangs."""
    leaver, run = exited
    for r in set(range(3)) - {leaver}:
        join = run.results[r]["join"]
        assert join["error"] is not None and join["seconds"] < EXIT_SHUTDOWN_S + 10, join


def test_join_after_a_rank_left_names_it(exited):
    """faults.md: every fault ends in an error that names the rank. join() called after
    the leaver's goodbye arrived fails naming the leaver, at once."""
    leaver, run = exited
    for r in set(range(3)) - {leaver}:
        join = run.results[r]["join"]
        assert f"rank {leaver}" in join["error"] and join["seconds"] < 2, join


@pytest.mark.parametrize("leaver", [1, pytest.param(0, marks=pytest.mark.extended)])
def test_a_leaver_while_the_others_join_is_named_in_their_join(mpi, leaver):
    """faults.md (F9): P=3, rank `leaver` leaves without join() while the others wait in
    join(): their join() fails within seconds naming it, the text whole."""
    run = mpi("early_exit.py", 3, leaver, "join", timeout=150,
              env={"HOROVOD_WAGMA_SHUTDOWN_TIMEOUT": "3"})
    assert run.results[leaver]["left_after"] == 6
    for r in set(range(3)) - {leaver}:
        join = run.results[r]["join"]
        assert join["error"] == f"rank {leaver} left without join() while other ranks were " \
            "joining" and join["type"] == "WagmaError", (r, join)
        assert join["seconds"] < 10, (r, join)
