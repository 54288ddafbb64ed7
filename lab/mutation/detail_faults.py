"""Detail pass over docs/claims.md's rows F1-F53 (docs/faults.md), 2026-12-02: each
mutant breaks one detail that the doc states and the row's tests ran but did not
assert, with the test written for it. Run with `check.py --catalogue detail_faults`.
C++ mutants name no pytest: `make engine-unit-test` catches them (check.py runs it
for every mutant of cpp_ops/engine/)."""

MUTANTS = [
    # F41: staleness_max is "how many rounds old the passive joins' values were at
    # most"; the stats scenario's joins grow staler one by one, so last == max there.
    dict(id="dfa-stream-staleness-max-is-last", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("st.staleness_max = std::max(st.staleness_max, staleness);",
                 "st.staleness_max = staleness;")],
         tests=[],
         bug="a stream's staleness_max is the last passive join's staleness, not the "
             "largest (caught by engine_metrics_test)"),
    dict(id="dfa-engine-staleness-max-is-last", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("engine_.staleness_max = std::max(engine_.staleness_max, staleness);",
                 "engine_.staleness_max = staleness;")],
         tests=[],
         bug="the engine-wide staleness_max is the last passive join's staleness "
             "(caught by engine_metrics_test)"),
    # F52: the hold_reports and loop_pauses counters count each its own report.
    dict(id="dfa-loop-pause-counted-as-hold-report", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("++engine_.loop_pauses;", "++engine_.hold_reports;")],
         tests=[],
         bug="an engine loop pause is counted in hold_reports, not loop_pauses "
             "(caught by engine_metrics_test)"),
    # F14: probes at a third of the shorter deadline; named after that third again, at
    # least 1 s. The row's tests bound the verdict from above only (before the deadline).
    dict(id="dfa-probe-grace-below-1s", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("s.probe_grace_s = std::max(1.0, s.probe_after_s);",
                 "s.probe_grace_s = std::max(0.5, s.probe_after_s);")],
         tests=[],
         bug="a probed peer is blamed after 0.5 s of silence, not at least 1 s (caught by "
             "engine_settings_test)"),
    dict(id="dfa-probes-at-a-quarter", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("s.probe_after_s = std::max(s.report_after_s, shortest / 3);",
                 "s.probe_after_s = std::max(s.report_after_s, shortest / 4);")],
         tests=[],
         bug="liveness probes go out after a quarter of the shorter deadline, not a third "
             "(caught by engine_settings_test)"),
    # F25: group_size >= 2, its smallest value accepted.
    dict(id="dfa-group-size-two-refused", file="horovod_wagma/common/op/config.py",
         edits=[("or not 2 <= group_size <= MAX_GROUP_SIZE):",
                 "or not 3 <= group_size <= MAX_GROUP_SIZE):")],
         tests=["tests/test_fuzz.py::test_sync_period_and_max_staleness_bounds_are_inclusive"],
         bug="group_size=2, the smallest group the docs allow, is refused"),
]
