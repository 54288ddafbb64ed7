"""Third detail pass, fault-handling and elastic rows (claims.md F*, A102, E*, whose
tests are tests/test_faults.py, test_stall_reports.py, test_bad_input.py and the engine's
unit tests), 2026-12-04: each mutant breaks one value that a doc states inside a report,
an error text or a setting's effect, which the row's test ran without asserting (a
prefix matched without the words after it, both values found but not which side has
which, one of three settings varied, a verdict's rank checked but not its count). The
tests named in `tests` were strengthened to catch them; C++ mutants that only a unit
test sees name no pytest (`make engine-unit-test`, which check.py runs for every mutant
of cpp_ops/engine/). Run with `check.py --catalogue detail_pass3_faults`."""

FAULTS = "tests/test_faults.py"
STUCK = FAULTS + "::test_stuck_rank_is_reported_and_times_out"
HELD = FAULTS + "::test_a_held_call_is_reported_with_what_it_waits_on"
MIDRUN = FAULTS + "::test_midrun_mismatch_fails_every_rank"
LIVENESS_ZERO = "tests/test_stall_reports.py::test_liveness_zero_counts_only_closed_connections"
FRAGMENTS = "tests/test_bad_input.py::test_fragment_settings_must_match_on_every_rank"

MUTANTS = [
    # --- hold reports (F50) --------------------------------------------------------------
    dict(id="detail3-faults-hold-view-unstarted-round-reads-collected",
         file="cpp_ops/engine/health/hold_report.cc",
         edits=[("} else if (round < s.next_app_round) {",
                 "} else if (round <= s.next_app_round) {")],
         tests=[HELD],
         bug="faults.md:70-73 (F50): each other member prints its view of the held round, "
             "'here: <joined or not, the activation>'; a round this rank's app has not yet "
             "entered (its next round) and no activation started now reads 'completed and "
             "collected' instead of 'not started: no activation has arrived' (rank 1's view "
             "of round 2 in hold_report.py; the test matched 'here: ' and the app's part "
             "only)"),
    # --- mismatches (F23, S2) ------------------------------------------------------------
    dict(id="detail3-faults-midrun-mismatch-values-swapped", file="cpp_ops/engine/core/engine.cc",
         edits=[('s.spec.Mismatch("its round 0", req.spec, "this call")',
                 'req.spec.Mismatch("its round 0", s.spec, "this call")')],
         tests=[MIDRUN],
         bug="faults.md:100-102 (F23): a change after round 0 fails the stream naming the "
             "rank and the difference; the two values now swap sides ('its round 0 has "
             "shape [5], this call has shape [4]', 'its round 0 has sync_period 6, this "
             "call has sync_period 4'), which the test's '[5]' and '[4]' in the error, and "
             "'sync_period' alone, still matched"),
    # --- stall warnings (F11, F14) ---------------------------------------------------------
    dict(id="detail3-faults-stall-warning-drops-unresponsive-note",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("stalls_->UnresponsiveNote(LivePeerCandidates(), Clock::now()).c_str());",
                 '"");')],
         tests=[STUCK],
         bug="faults.md:56-59 (F14): peers silent a third again after a probe 'are named "
             "first in the warning and the error'; the inspector's repeated warning no "
             "longer says 'ranks not responding: [2] (no answer to a liveness probe ...)' "
             "(only the errors were checked for it; the warnings for their round, note and "
             "waiting ranks)"),
    dict(id="detail3-faults-stall-warning-window-starts-after-the-report",
         file="cpp_ops/engine/health/stall_inspector.cc",
         edits=[("Entry{{}, now - waited, {}}", "Entry{{}, now + waited, {}}")],
         tests=[],
         bug="faults.md:45-48 (F11, A98): the inspector warns after WAGMA_STALL_WARNING_S "
             "of waiting in a round; the round's wait is now taken to start report_after_s "
             "after the first rank's report, not before it, so the warning comes twice that "
             "(up to 2 s) late and every warning's 'has waited N s' is short by it (the "
             "stuck-rank test counts increasing warnings, 2 and 4 s printed still pass; "
             "peer_liveness_test's "
             "TestStallWarningAfterTheWindowOfWaitingThenEveryWindow wants the warning at "
             "2.1 s of a 2 s window reported 0.5 s in, waited_s 2.1)"),
    # --- elastic (F27, R35, F31) ---------------------------------------------------------
    dict(id="detail3-faults-elastic-heartbeat-at-a-third-of-liveness",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("std::max(0.5, std::min(s.stalls.report_after_s, s.liveness_s / 3))",
                 "std::max(0.5, std::max(s.stalls.report_after_s, s.liveness_s / 3))")],
         tests=[],
         bug="faults.md:112-113 (F27): under elastic the probes are 'a heartbeat to peers "
             "not heard from for a second'; the heartbeat now waits a third of "
             "HOROVOD_WAGMA_LIVENESS_S (3.3 s at the default 10), so one cut's verdicts "
             "spread past the settle window (no test derived the elastic settings; "
             "engine_settings_test's TestElasticHeartbeatEverySecondLostAfterTheLivenessWindow "
             "wants probe_after_s 1.0 and grace 10 by default, 5 at 5, the plain 20 at 0)"),
    dict(id="detail3-faults-verdict-counts-only-survivors",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[('" of " + std::to_string(size_) +', '" of " + std::to_string(size_ - n) +')],
         tests=[LIVENESS_ZERO],
         bug="faults.md:122-123 (F31, F26): the verdict ends 'membership changed: ranks 2, 3 "
             "were lost (...); 2 of 4 ranks remain'; the member set's size is now the "
             "survivors' ('1 of 1 ranks remain' for rank 1 lost of 2). The loopback test "
             "that kills a rank checked 'membership changed' and 'rank 1' only (the "
             "extended fenced test would see '1 of 1 ranks remain on this side' too)"),
    # --- HOROVOD_WAGMA_FRAGMENT_* must match (A102) ---------------------------------------
    dict(id="detail3-faults-fragment-mismatch-prints-fragment-bytes-twice",
         file="cpp_ops/engine/reduce/message_cut.cc",
         edits=[('std::to_string(settings.up_to_bytes) + ", " + settings.scope +',
                 'std::to_string(settings.fragment_bytes) + ", " + settings.scope +')],
         tests=[FRAGMENTS],
         bug="api.md:375 (A102): HOROVOD_WAGMA_FRAGMENT_* (64512, 4 MiB, remote) must "
             "match across ranks, and the error gives this rank's three values; the second "
             "is now the fragment size again ('this rank: 4096, 4096, remote'), which the "
             "test's '4096' in rank 0's error still matched"),
    dict(id="detail3-faults-fragment-check-compares-only-fragment-bytes",
         file="cpp_ops/engine/reduce/message_cut.cc",
         edits=[("if (std::memcmp(lo, hi, sizeof(lo)) != 0) {", "if (lo[0] != hi[0]) {")],
         tests=[FRAGMENTS],
         bug="api.md:375 (A102): all three HOROVOD_WAGMA_FRAGMENT_* settings must match "
             "across ranks; only the fragment size is compared now, so ranks that differ in "
             "HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES (or the scope) start and cut messages "
             "differently, fragments matching the wrong receives (the test varied the "
             "fragment size only; its [differ_up_to] case varies the largest message cut)"),
]
