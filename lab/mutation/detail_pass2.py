"""Second detail pass over docs/faults.md, docs/api.md and docs/semantics.md (claims.md
rows F*, A*, S*, E*), 2026-12-03: each mutant breaks one value that a doc states inside a
report, an error text, a counter, a default or a knob's effect, which the rows' tests
ran but did not assert (a regex that matches the line without the number, or a bound the
bug still meets). `tests` names the test that should catch it once the assertion written
in `bug` is added; until then every mutant here is expected to SURVIVE. C++ mutants that
only a unit test can see name no pytest (`make engine-unit-test`, which check.py runs for
every mutant of cpp_ops/engine/). Run with `check.py --catalogue detail_pass2`."""

FAULTS = "tests/test_faults.py"
STUCK = FAULTS + "::test_stuck_rank_is_reported_and_times_out"
HELD = FAULTS + "::test_a_held_call_is_reported_with_what_it_waits_on"
LOST_ACTIVATION = FAULTS + "::test_a_joined_rank_serves_a_round_whose_activations_were_lost"
MIDRUN = FAULTS + "::test_midrun_mismatch_fails_every_rank"
AWAY = "tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"
BAD_INPUT = "tests/test_bad_input.py::test_mismatches_and_invalid_knobs"
PROCESS_SETS = "tests/test_api.py::test_op_on_disjoint_process_sets"
STALL_REPORTS = "tests/test_stall_reports.py::test_no_liveness_probes_in_a_healthy_run"
STOPPED_HOST = "tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes"
FENCED = "tests/test_elastic.py::test_a_minority_left_alone_is_fenced"
KERAS_FIT = "tests/test_keras.py::test_fit_graph_mode_with_callbacks"
SAMPLER = "tests/test_balanced_sampler.py"
FAULTS_CC = "cpp_ops/engine/core/engine_faults.cc"
HOLD_CC = "cpp_ops/engine/health/hold_report.cc"
MONITOR_CC = "cpp_ops/engine/health/stall_monitor.cc"
SPEC_CC = "cpp_ops/engine/core/stream_spec.cc"

MUTANTS = [
    # --- stats() ------------------------------------------------------------------------
    dict(id="detail2-errors-never-counted", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    ++streams_[stream].errors;", "    streams_[stream];")],
         tests=[STUCK],
         bug="faults.md:194 (F41): stats()' errors counts 'rounds that ended in an error'; it "
             "stays 0 (tests assert errors == 0 only; stuck_rank.py would emit "
             "hvd.stats('w')['errors'] == 1 after its stall timeout)"),
    dict(id="detail2-direct-exchange-bytes-one-peer",
         file="cpp_ops/engine/reduce/direct_exchange_reduction.h",
         edits=[("    return (group_size() - 1) * args_.count * elem_size();",
                 "    return args_.count * elem_size();")],
         tests=[],
         bug="faults.md:193 (F41): bytes_sent is the reduction payload sent; a direct exchange "
             "now counts one peer's copy, not |G| - 1 (equal only for the pairs the stats "
             "test uses; reduction_choice_test's Run() would CHECK BytesSent() against "
             "the bytes its fake transport saw)"),
    dict(id="detail2-scatter-allgather-bytes-drop-allgather",
         file="cpp_ops/engine/reduce/scatter_allgather_reduction.h",
         edits=[("    return (args_.count * elem_size() - mine) + (group_size() - 1) * mine;",
                 "    return args_.count * elem_size() - mine;")],
         tests=[],
         bug="faults.md:193 (F41): bytes_sent of a reduce-scatter + allgather round leaves "
             "out the allgather's (|G| - 1) chunks (reduction_choice_test's Run() would "
             "CHECK BytesSent() against the fake transport's trace)"),
    # --- the TensorFlow op's arguments ---------------------------------------------------
    dict(id="detail2-tf-op-max-staleness-is-sync-period", file="horovod_wagma/tensorflow/ops.py",
         edits=[("global_rounds=global_rounds, max_staleness=max_staleness, members=members)",
                 "global_rounds=global_rounds, max_staleness=sync_period, members=members)")],
         tests=["tests/test_api_surface.py::test_tf_op_hands_its_knobs_to_the_kernel"],
         bug="api.md:101 (A30): the TensorFlow op takes the PyTorch op's arguments; its "
             "max_staleness never reaches the kernel (sync_period is sent), so an explicit "
             "bound, and the Keras optimizer's state/drift streams' (sync_period=1), are "
             "lost; every TF test leaves max_staleness at its default = sync_period"),
    # --- the away-application report (F10) ---------------------------------------------
    dict(id="detail2-away-report-max-staleness-is-sync-period", file=FAULTS_CC,
         edits=[("                 s.spec.config.max_staleness, rank_);",
                 "                 s.spec.config.sync_period, rank_);")],
         tests=[AWAY],
         bug="faults.md:42-43 (F10): the away report says '(max_staleness=10)', the stream's "
             "bound; it now prints sync_period (5 in stopped_rank_wa.py, bound 3)"),
    dict(id="detail2-away-report-seconds-since-left-out", file=FAULTS_CC,
         edits=[("rank_, rank_, NameForMessage(s.spec.name).c_str(), away_s,",
                 "rank_, rank_, NameForMessage(s.spec.name).c_str(), since_left_out_s,")],
         tests=[AWAY],
         bug="faults.md:42 (F10): 'has not called stream ... for 61 s' is the time since the "
             "app's last call (>= WAGMA_STALL_WARNING_S when printed); it now prints the "
             "time since the last left-out round (0 s), which the test's '< 3' bound admits"),
    # --- the stall warning and error (F11, F13, F14) --------------------------------------
    dict(id="detail2-stall-warning-wait-is-the-window", file=FAULTS_CC,
         edits=[("NameForMessage(s.spec.name).c_str(), stall.waited_s, note.c_str(),",
                 "NameForMessage(s.spec.name).c_str(), cfg.warning_s, note.c_str(),")],
         tests=[STUCK],
         bug="faults.md:45-48 (F11): the warning says how long the round 'has waited' and "
             "repeats while the stall lasts; every repeat now prints WAGMA_STALL_WARNING_S "
             "(2 s, 2 s, 2 s, not about 2, 4, 6 s); the test counts the warnings only"),
    dict(id="detail2-stall-warning-waiting-lists-missing", file=FAULTS_CC,
         edits=[("                 RankList(waiting).c_str(),",
                 "                 RankList(missing).c_str(),")],
         tests=[STUCK],
         bug="faults.md:45-48 (F11): the inspector's warning names the ranks missing and the "
             "ranks waiting; its 'waiting: [0, 1]' now repeats the missing ranks ([2])"),
    dict(id="detail2-stall-inspector-is-second-member", file=FAULTS_CC,
         edits=[("        if (rs.members[0] == rank_) {",
                 "        if (rs.members[rs.members.size() > 1 ? 1 : 0] == rank_) {"),
                ("          SendControl(rs.members[0], ControlKind::kWaiting, s.id, r.first);",
                 "          SendControl(rs.members[rs.members.size() > 1 ? 1 : 0], "
                 "ControlKind::kWaiting, s.id, r.first);")],
         tests=[STUCK],
         bug="faults.md:46-47 (F11): the round's inspector is its first member, 'rank 0 for "
             "global rounds'; it is now the second (rank 1 prints the stall warning; the "
             "test matches the warning from any rank)"),
    dict(id="detail2-stall-timeout-waited-from-report", file=FAULTS_CC,
         edits=[("std::string text = StallTimeoutText(waited, cfg.timeout_s,",
                 "std::string text = StallTimeoutText(waited - cfg.report_after_s, cfg.timeout_s,")],
         tests=[STUCK],
         bug="faults.md:49-50 (F13): 'stalled: waited 5.0 s' is the call's wait, past "
             "WAGMA_STALL_TIMEOUT_S; it now counts from the stall report (6.5 s printed for "
             "a 7 s timeout); no test reads the number"),
    dict(id="detail2-unresponsive-note-prints-the-grace", file=MONITOR_CC,
         edits=[('unreachable)",\n                silent_s);',
                 'unreachable)",\n                settings().probe_grace_s);')],
         tests=[STUCK],
         bug="faults.md:57-59 (F14): 'no answer to a liveness probe for 4.0 s' is how long "
             "the peer has been silent since the probe; it now prints the grace (1.0 s in "
             "the stuck-rank test, where the silence is about 6 s at the timeout)"),
    dict(id="detail2-probes-four-times-per-third", file=MONITOR_CC,
         edits=[("return liveness_.ProbeDue(live_peers, now, std::max(0.5, cfg.probe_after_s));",
                 "return liveness_.ProbeDue(live_peers, now, std::max(0.05, cfg.probe_after_s / 4));")],
         tests=[STALL_REPORTS],
         bug="faults.md:54 (F16): at most one probe per peer per third of the shorter "
             "deadline; probes now repeat every twelfth (the test asserts >= 1 probe in the "
             "late registration, not at most about 3 in its 3.6 s wait)"),
    # --- hold reports (F49-F52b) ---------------------------------------------------------
    dict(id="detail2-hold-report-earlier-includes-held-round", file=HOLD_CC,
         edits=[("if (r.first < round && r.second.in_flight()) earlier.push_back",
                 "if (r.first <= round && r.second.in_flight()) earlier.push_back")],
         tests=[HELD],
         bug="faults.md:68-70 (F49): 'earlier rounds of the stream in flight here: none'; the "
             "held round itself is now listed ('[2]' in hold_report.py)"),
    dict(id="detail2-hold-view-last-called-negative", file=HOLD_CC,
         edits=[("std::chrono::duration<double>(now - s.app_called_at).count();",
                 "std::chrono::duration<double>(s.app_called_at - now).count();")],
         tests=[HELD],
         bug="faults.md:71-73 (F50): the member's view ends 'last called the stream 0.0 s "
             "ago'; it now prints minus that ('-1.2 s ago' on rank 1)"),
    dict(id="detail2-hold-join-names-the-joined-rank-as-waiter", file=HOLD_CC,
         edits=[('std::to_string(asker) + " waits in it: joining it now";',
                 'std::to_string(rank) + " waits in it: joining it now";')],
         tests=[LOST_ACTIVATION],
         bug="faults.md:84-85 (F52b): '...; rank 1 waits in it: joining it now' names the "
             "rank whose hold query arrived; it now names the joined rank itself (rank 0)"),
    dict(id="detail2-join-view-joins-ended-counts-known-joined", file="cpp_ops/engine/core/engine_join.cc",
         edits=[("  j.joins_ended = joins_.generation();",
                 "  j.joins_ended = static_cast<int64_t>(j.known_joined.size());")],
         tests=[LOST_ACTIVATION],
         bug="faults.md:76-78 (F52a): 'joins ended: 3' counts the joins this rank saw end; it "
             "now counts the ranks heard to have joined ('joins ended: 1' on ranks 1-3 in "
             "lost_activation.py, which is in the first join)"),
    # --- elastic verdicts (F27, F31) ------------------------------------------------------
    dict(id="detail2-last-heard-note-inverted", file=MONITOR_CC,
         edits=[('  if (since < 0) return " (never heard from)";',
                 '  if (since >= 0) return " (never heard from)";')],
         tests=[STOPPED_HOST],
         bug="faults.md:114-115 (F27): 'rank 2 was lost: no answer to liveness probes (...) "
             "(last heard 11.0 s ago)'; a peer heard from now reads '(never heard from)'"),
    dict(id="detail2-verdict-names-only-the-last-lost-rank", file=FAULTS_CC,
         edits=[('  for (int r : lost) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);',
                 "  for (int r : lost) ranks = std::to_string(r);")],
         tests=[FENCED],
         bug="faults.md:122-124 (F31): 'membership changed: ranks 2, 3 were lost' names every "
             "lost rank; only the last is named now ('fenced: ranks 3 were lost'), which "
             "'fenced: ranks' and '1 of 4 ranks remain' still match"),
    # --- mismatches (F22, F23, S1) --------------------------------------------------------
    dict(id="detail2-dtype-mismatch-values-swapped", file=SPEC_CC,
         edits=[('s << DataTypeName(dtype) << ", " << theirs << " has dtype " << DataTypeName(o.dtype);',
                 's << DataTypeName(o.dtype) << ", " << theirs << " has dtype " << DataTypeName(dtype);')],
         tests=[BAD_INPUT],
         bug="semantics.md:14-16/faults.md:98-100 (S1, F22): a round-0 mismatch names each "
             "rank with its own value; a dtype mismatch now gives each rank the other's "
             "dtype (the test checks both names appear; registration_book_test has no "
             "dtype case)"),
    dict(id="detail2-process-set-mismatch-values-swapped", file=SPEC_CC,
         edits=[('s << ShapeString(a) << ", " << theirs << " has process set " << ShapeString(b);',
                 's << ShapeString(b) << ", " << theirs << " has process set " << ShapeString(a);')],
         tests=[PROCESS_SETS],
         bug="semantics.md:9-16 (S1): a stream's member set is checked at round 0, naming "
             "both values; a process-set mismatch now names each rank with the other's set "
             "(the test matches 'process set mismatch' only)"),
    dict(id="detail2-midrun-mismatch-names-the-previous-round", file="cpp_ops/engine/core/engine.cc",
         edits=[('" called round " +\n                                std::to_string(s.next_app_round) + " of stream',
                 '" called round " +\n                                std::to_string(s.next_app_round - 1) + " of stream')],
         tests=[MIDRUN],
         bug="faults.md:100-102 (F23): a change after round 0 fails every member naming the "
             "rank and its round ('rank 2 called round 2 of stream ...'); the round is now "
             "the one before (the test asserts 'rank 2' and 'sync_period' only)"),
    # --- api.md's environment table and knob defaults ------------------------------------
    dict(id="detail2-fragment-bytes-default-64k", file="cpp_ops/engine/reduce/message_cut.h",
         edits=[("  size_t fragment_bytes = 63 * 1024;", "  size_t fragment_bytes = 64 * 1024;")],
         tests=[],
         bug="api.md:375 (A102): HOROVOD_WAGMA_FRAGMENT_BYTES defaults to 64512; now 65536 "
             "(over Open MPI's eager limit with its header); engine_settings_test's "
             "TestDefaults would CHECK s.fragments.fragment_bytes == 64512"),
    dict(id="detail2-fragment-up-to-default-8mib", file="cpp_ops/engine/reduce/message_cut.h",
         edits=[("  size_t up_to_bytes = 4 << 20;", "  size_t up_to_bytes = 8 << 20;")],
         tests=[],
         bug="api.md:375 (A102): HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES defaults to 4 MiB; now 8 "
             "MiB (engine_settings_test's TestDefaults would CHECK it)"),
    dict(id="detail2-lbbsp-min-share-default", file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("seed=0, drop_last=False, *, min_share=0.25,",
                 "seed=0, drop_last=False, *, min_share=0.1,")],
         tests=[SAMPLER + "::test_lbbsp_gives_a_rank_measured_very_slow_at_least_one_sample_a_step"],
         bug="api.md:279-286 (A77): BalancedBatchSampler's min_share defaults to 0.25; now "
             "0.1 (the floor test passes min_share explicitly)"),
    dict(id="detail2-sequence-min-share-default", file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("num_replicas=None, rank=None, min_share=0.25,",
                 "num_replicas=None, rank=None, min_share=0.0,")],
         tests=[SAMPLER + "::test_keras_balanced_sequence_keeps_the_floor_for_a_rank_measured_very_slow"],
         bug="api.md:253-255 (A109): BalancedSequence's min_share defaults to 0.25; now 0 "
             "(a rank measured very slow gets nothing; the floor test passes 0.25 "
             "explicitly)"),
    dict(id="detail2-metric-callback-default-name", file="horovod_wagma/keras/callbacks.py",
         edits=[('def __init__(self, name="wagma.keras_metrics"):',
                 'def __init__(self, name="wagma.keras_metric"):')],
         tests=["tests/test_api_surface.py::test_tf_op_hands_its_knobs_to_the_kernel"],
         bug="api.md:350 (A93): MetricAverageCallback(name=\"wagma.keras_metrics\"), the "
             "prefix of its streams; the default is now 'wagma.keras_metric' (no test "
             "reads the name or the stream)"),
]
