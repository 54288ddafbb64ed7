"""A ninth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md),
docs/claims.md and the code, but not the tests. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the pytest node ids docs/claims.md
lists for the promise, plus a whole module where the row looks weak; C++ unit tests the
row names are mentioned in `bug`, since check.py runs them anyway for an engine mutant
and passes only pytest ids on). None repeats a behaviour planted in mutants.py,
fresh_batch.py .. fresh_batch8.py, fresh_survivors.py or the detail_*.py batches (each
edits a line no earlier mutant edits). The C++ edits leave no variable unused, so the
engine's unit tests (-Wall -Werror) still compile and the mutants are not caught by the
build alone. Aimed at what looks under-tested: second and later uses of a feature
(a second sync() layout, a second elastic reset, a join whose last rank is 0), boundaries
(P not a power of S, a dot in a directory name, messages past one Gloo frame, waits
past one 100 ms slice), non-default knobs (shuffle=False, per-group learning rates),
the Keras twins of PyTorch features, and the exact contents of messages.
Spread: faults.md 6, api.md 6, semantics.md 5, README.md 4, elastic.md 3."""

MUTANTS = [
    # --- faults.md ---------------------------------------------------------------------
    dict(id="fresh9-joins-continue-from-the-last-joiners-round",
         file="cpp_ops/engine/rounds/join_coordinator.cc",
         edits=[("    last = std::max(last, kv.second);",
                 "    last = kv.second;")],
         tests=["tests/test_uneven.py::test_repeated_joins_leave_blocking_rounds_exact",
                "tests/test_uneven.py::test_optimizer_join_with_uneven_batches",
                "tests/test_uneven.py::test_join_serves_final_model_exactly",
                "tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join",
                "tests/test_uneven.py"],
         bug="faults.md:15-18 (api.md:200-201): training may go on after join(): every rank "
             "continues from the furthest step (round) any rank reached; the registrar's "
             "tally now keeps, per stream, the round of the rank whose join notice it "
             "recorded last instead of the largest, so when the last rank to join is not the "
             "one that got furthest (a slower rank with more data), the ranks behind resume "
             "from the last joiner's round while the furthest keeps its own: their round "
             "numbers disagree and the next blocking global round stalls or mixes rounds "
             "(join_coordinator_test.cc, if it records a smaller round last)"),
    dict(id="fresh9-join-never-returns-rank-0-as-last", file="horovod_wagma/common/op/engine_lib.py",
         edits=[("    last = lib().wagma_join(slice_ms, err, _ERR_LEN)\n"
                 "    if last == -1:\n"
                 "        raise engine_error(err.value.decode(errors=\"replace\"))\n"
                 "    return last if last >= 0 else None",
                 "    last = lib().wagma_join(slice_ms, err, _ERR_LEN)\n"
                 "    if last == -1:\n"
                 "        raise engine_error(err.value.decode(errors=\"replace\"))\n"
                 "    return last if last > 0 else None")],
         tests=["tests/test_uneven.py::test_join_serves_final_model_exactly",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_keras.py::test_uneven_batches_with_join",
                "tests/test_join_both.py::test_blocking_horovod_join_when_every_rank_had_joined",
                "tests/test_uneven.py"],
         bug="faults.md:14-15 (api.md:119-122): join() returns the last rank to join, like "
             "hvd.join(); join_wait now takes rank 0 for 'not yet', so when rank 0 is the last "
             "to join every rank's join() polls on, and the next poll starts a second, "
             "spurious join: join() returns some other rank after a whole extra join round "
             "(or loops while rank 0 keeps coming last), in both frameworks"),
    dict(id="fresh9-wait-stats-count-only-the-last-slice", file="cpp_ops/engine/core/handle_table.cc",
         edits=[("  s.outcome.waited_us +=", "  s.outcome.waited_us =")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_timeline_format.py::test_writer_output_is_valid_chrome_trace",
                "tests/test_observability.py"],
         bug="faults.md:197 (api.md:381): stats()'s group_wait_s and global_wait_s are the "
             "time the application was blocked collecting results; PyTorch (and TF eager) "
             "wait in 100 ms slices, and each slice now overwrites the handle's waited time "
             "instead of adding to it, so a 0.5 s wait in a global round counts as at most "
             "the last slice (< 0.1 s), and the timeline's wait span is as short; waits under "
             "100 ms stay right"),
    dict(id="fresh9-join-error-replaced-by-shutdown-text", file="cpp_ops/engine/core/request_queue.cc",
         edits=[("    if (!requested_ || result_ != -2 || !error_.empty()) return;",
                 "    if (!requested_ || result_ != -2) return;")],
         tests=["tests/test_stall_reports.py::test_a_member_lost_during_join_raises_the_membership_verdict",
                "tests/test_join_both.py::test_blocking_horovod_join_that_fails_gives_way_to_the_engines_error",
                "tests/test_stall_reports.py"],
         bug="faults.md:137-139: engine errors (an MPI error, a membership change) fail any "
             "join() in progress with the error text; the join slot now lets a second outcome "
             "replace the first, so when the engine fails during a join (FailEngine finishes "
             "it with the verdict) its loop's exit, microseconds later, overwrites it: join() "
             "raises a plain WagmaError 'the WAGMA engine shut down before every rank joined' "
             "instead of 'membership changed: rank 2 was lost ...' (WagmaMembershipChanged), "
             "so under Horovod elastic the reset does not happen"),
    dict(id="fresh9-hold-view-app-call-inverted", file="cpp_ops/engine/health/hold_report.cc",
         edits=[("(app_in_call ? \"waits in round \" + std::to_string(app_round)",
                 "(!app_in_call ? \"waits in round \" + std::to_string(app_round)")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py::test_a_joined_rank_serves_a_round_whose_activations_were_lost",
                "tests/test_faults.py"],
         bug="faults.md:70-73: each other member's hold view says what its app is doing, "
             "'its app waits in round 40' or 'is not in a call (next round N)'; the branch is "
             "inverted, so a member whose app waits in a round says 'its app is not in a call "
             "(next round 41)' and one whose app is computing says 'its app waits in round "
             "-1': the view points at the wrong side"),
    dict(id="fresh9-registration-stall-warned-once", file="cpp_ops/engine/health/stall_monitor.cc",
         edits=[("  if (warned != registration_warned_.end() &&\n"
                 "      now - warned->second < std::chrono::duration<double>(warning_s)) {",
                 "  if (warned != registration_warned_.end()) {")],
         tests=["tests/test_stall_reports.py::test_a_late_round0_registration_is_reported_by_the_registrar",
                "tests/test_stall_reports.py"],
         bug="faults.md:45-48: a stalled round is reported and the warning repeats while the "
             "stall lasts, and round-0 registrations are inspected the same way; a "
             "registration stall is now warned about once only: a rank that never reaches a "
             "stream's round 0 is named once after WAGMA_STALL_WARNING_S and then never "
             "again, however long the others wait (without WAGMA_STALL_TIMEOUT_S: silence)"),
    # --- api.md ------------------------------------------------------------------------
    dict(id="fresh9-gloo-long-control-message-overflows-a-frame",
         file="cpp_ops/engine/transport/gloo_transport.cc",
         edits=[("    const size_t n = std::min(total - offset, kControlFrame - head);",
                 "    const size_t n = std::min(total - offset, kControlFrame);")],
         tests=["tests/test_fuzz.py::test_long_names_in_engine_errors",
                "tests/test_fuzz.py::test_stream_names",
                "tests/test_fuzz.py::test_fuzz_public_api",
                "tests/test_fuzz.py"],
         transports="gloo",
         bug="api.md:79 (README:30): a stream name is a str without NUL of any length, on "
             "either transport; the Gloo transport's control messages are cut into 16 KiB "
             "frames, and the first frame now forgets its 8-byte header, so any control "
             "message over 16376 bytes (a registration of a stream whose name is longer than "
             "about 16 KB) overruns the receiver's frame: the pair fails (or the message is "
             "read shifted by 8 bytes), and the stream's round 0 fails or the peer is "
             "declared lost. MPI is unaffected"),
    dict(id="fresh9-timeline-dot-in-directory-taken-for-extension",
         file="cpp_ops/engine/observe/timeline.cc",
         edits=[("  const size_t slash = path.find_last_of('/');",
                 "  const size_t slash = path.find_first_of('/');")],
         tests=["tests/test_timeline_format.py::test_rank_placeholder_and_backwards_clock",
                "tests/test_timeline_format.py::test_writer_output_is_valid_chrome_trace",
                "tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_timeline_format.py"],
         bug="api.md:374 (faults.md, Timeline): WAGMA_TIMELINE is the path of a per-rank "
             "trace, with '{rank}' in it or '.<rank>' added (before the file name's "
             "extension); the file name now starts after the FIRST slash, so a dot in a "
             "deeper directory counts as the extension: WAGMA_TIMELINE=/tmp/run.1/trace "
             "opens /tmp/run.0.1/trace, a directory that does not exist, and init() fails "
             "with 'WAGMA_TIMELINE: cannot open timeline file' (paths whose file name has a "
             "dot, or without dotted directories, are unaffected)"),
    dict(id="fresh9-torch-skip-synchronize-swallows-errors", file="horovod_wagma/torch/optimizer.py",
         edits=[("    def __exit__(self, *exc):\n        return False",
                 "    def __exit__(self, *exc):\n        return True")],
         tests=["tests/test_optimizer.py::test_horovod_hooks_and_state",
                "tests/test_optimizer.py"],
         bug="api.md:202-203: synchronize() and skip_synchronize() are no-ops kept so that "
             "Horovod's gradient-clipping recipe runs; skip_synchronize()'s context manager "
             "now returns True from __exit__, which swallows every exception raised in the "
             "with-block: `with opt.skip_synchronize(): opt.step()` hides a WagmaError (a "
             "stall timeout, a lost peer) or any bug in the step, and training goes on "
             "silently"),
    dict(id="fresh9-keras-sequence-shuffle-false-still-shuffles",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("            if self.shuffle else np.arange(self.n)",
                 "            if self.shuffle is not None else np.arange(self.n)")],
         tests=["tests/test_api_surface.py::test_balanced_sequence_drop_last_is_torchs",
                "tests/test_api_surface.py::test_balanced_sequence_over_lists_of_arrays_or_unlabelled",
                "tests/test_balanced_sampler.py::test_keras_balanced_sequence_permutation_is_numpys_seed_plus_epoch",
                "tests/test_api_surface.py"],
         bug="api.md:255, 261-270: BalancedSequence takes shuffle (default True) as torch's "
             "DistributedSampler does, the permutation numpy's RandomState(seed + epoch) "
             "only when shuffling; shuffle=False now shuffles too (False is not None), so a "
             "Keras run that asked for the data in order (a curriculum, a time series, a "
             "deterministic evaluation split) gets a permuted share; the PyTorch samplers "
             "stay right"),
    dict(id="fresh9-clean-exit-shutdown-gives-up-after-one-second",
         file="horovod_wagma/common/op/engine_lib.py",
         edits=[("    shutdown(1.0 if error is not None else None)",
                 "    shutdown(1.0 if error is None else None)")],
         tests=["tests/test_shutdown.py::test_a_shutdown_that_cannot_finish_gives_up_after_its_timeout",
                "tests/test_shutdown.py::test_exit_with_passive_rounds_pending",
                "tests/test_shutdown.py"],
         bug="api.md:375 (faults.md:140-141): at exit the engine's shutdown may take "
             "HOROVOD_WAGMA_SHUTDOWN_TIMEOUT seconds (default 30), giving up within a second "
             "only after an uncaught exception; the atexit handler's condition is inverted: "
             "a clean exit gives up after 1 s whatever the variable says (abandoning rounds "
             "its peers still need it for), and a crashed rank now keeps its peers waiting "
             "up to 30 s"),
    dict(id="fresh9-throughput-clock-never-reset-between-epochs",
         file="horovod_wagma/common/balance/throughput_exchange.py",
         edits=[("        self._clock.reset()\n        self._samples = 0\n",
                 "        self._samples = 0\n")],
         tests=["tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit",
                "tests/test_balanced_sampler.py"],
         bug="api.md:227-229, 240-241: each set_epoch gathers every rank's throughput over "
             "the PREVIOUS epoch, and a rank that turns slow is rebalanced at the next epoch; "
             "the step clock is no longer reset at the exchange, so the median cycle is over "
             "every epoch so far and the throughput divides this epoch's samples by all steps "
             "since the start: `throughputs` shrink epoch after epoch, and a rank that slows "
             "down in epoch 5 keeps its fast share for many epochs (both the PyTorch samplers "
             "and Keras's BalancedSequence)"),
    # --- semantics.md ------------------------------------------------------------------
    dict(id="fresh9-solo-rounds-never-passed", file="cpp_ops/engine/core/stream_state.h",
         edits=[("GroupOf(plan.phase, s_.my_index).size() == 1;",
                 "GroupOf(plan.phase, s_.my_index).empty();")],
         tests=["tests/test_global_rounds.py::test_a_k_times_slower_rank_enters_about_every_kth_round",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_no_deadlock.py::test_apps_held_back_skip_every_round_served_meanwhile",
                "tests/test_global_rounds.py"],
         bug="semantics.md:74-78: where P is not a power of S some phases leave a rank alone "
             "in its group, and a lagging app's skip passes over those rounds (with two or "
             "more served rounds beyond); the engine's view now never calls a round solo (a "
             "group always holds the rank itself), so at e.g. P=3, S=2 a slow rank's skip "
             "stops at its first solo round: it enters rounds one by one, falls behind, and "
             "its values are left out of the global rounds instead of it catching up "
             "(round_policy_test.cc's TestSoloRoundsPassedOnlyWithTwoServedBeyond uses a fake "
             "view and still passes)"),
    dict(id="fresh9-delta-skipped-left-out-rounds-move", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("      rs.error.empty() && rs.self_included && !joins_.self_joined()) {",
                 "      rs.error.empty() && !joins_.self_joined()) {")],
         tests=["tests/test_global_rounds.py::test_delta_moves_sum_to_zero_over_the_ranks",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_optimizer.py::test_drift_correction_removes_a_non_iid_bias",
                "tests/test_global_rounds.py"],
         bug="semantics.md:51: 'delta' returns x + (s/|G| - c), or x when c was left out, plus "
             "the same move for every round the application skipped, so the members' moves "
             "sum to zero; a skipped round in which this rank's value was LEFT OUT now adds "
             "its (m - c) move as well, although the round's mean never counted c: after a "
             "straggler skips left-out rounds the moves (and drift correction's variates) no "
             "longer sum to zero"),
    dict(id="fresh9-inclusion-exchanges-rounds-not-steps", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("  args.steps = s.app_calls;", "  args.steps = s.next_app_round;")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_a_rank_slower_than_max_staleness_allows_is_left_out_not_waited_for",
                "tests/test_global_rounds.py::test_equal_steps_with_a_slow_rank_then_sync_does_not_hang",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_global_rounds.py"],
         bug="semantics.md:79-90: a value old in rounds is left out only when its app is also "
             "more than max_staleness STEPS behind, every member sending its app's step count "
             "(why steps: an app waiting in a collective is old in rounds but not behind in "
             "training); members now send their next round number instead, so a lagging app "
             "that skipped rounds looks caught up (its stale values are never left out: "
             "rounds_left_out 0, rounds_kept_ahead grows) and an app waiting in a Horovod "
             "collective looks behind and is left out, the failure the doc describes"),
    dict(id="fresh9-torch-qgm-first-groups-lr",
         file="horovod_wagma/torch/quasi_global_momentum.py",
         edits=[("            lr, beta = float(group[\"lr\"]), float(group[\"momentum\"])",
                 "            lr, beta = float(self._optimizer.param_groups[0][\"lr\"]), "
                 "float(group[\"momentum\"])")],
         tests=["tests/test_quasi_global.py::test_torch_matches_exact_simulation_of_all_ranks",
                "tests/test_quasi_global.py::test_torch_fixed_point_is_heavy_balls",
                "tests/test_quasi_global.py"],
         bug="semantics.md:154-156: 'quasi_global' rebuilds the momentum as m = beta m_old + "
             "(1 - beta)(x_before - x_after)/lr, with each parameter's own learning rate; the "
             "PyTorch rebuild now divides every parameter group's move by the FIRST group's "
             "lr, so with per-group learning rates (a smaller lr for a backbone, lr 0 for a "
             "frozen group) the other groups' buffers come out scaled by lr_g/lr_0, or a "
             "group with lr 0 is rebuilt (or a trained group skipped when group 0's lr is "
             "0); single-group runs are unaffected"),
    dict(id="fresh9-global-rounds-mismatch-own-value-twice", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("      << GlobalRoundsName(o.config.global_rounds);",
                 "      << GlobalRoundsName(config.global_rounds);")],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_bad_input.py"],
         bug="semantics.md:14-16 (faults.md, Mismatches): round 0 rejects a stream whose knobs "
             "differ between ranks on every rank, naming both values; a global_rounds "
             "mismatch now names the first rank's value twice, 'global_rounds mismatch for "
             "stream 'w': rank 0 has global_rounds blocking, rank 2 has global_rounds "
             "blocking', so the error no longer says what differs "
             "(registration_book_test.cc::TestEachKnobMismatchNamesBothValuesWithTheirRanks "
             "if it covers global_rounds)"),
    # --- README.md ---------------------------------------------------------------------
    dict(id="fresh9-torch-groups-ignores-group-size", file="horovod_wagma/torch/__init__.py",
         edits=[("    return _groups(size, group_size)", "    return _groups(size)")],
         tests=["tests/test_schedule.py::test_partitions_bounded_groups_and_full_mixing",
                "tests/test_schedule.py::test_default_group_size_is_smallest_power_of_two_above_sqrt",
                "tests/test_api.py::test_api_behaviour",
                "tests/test_schedule.py"],
         bug="README:113 (api.md:110, semantics.md:120): hvd.groups(P, S) prints the schedule "
             "for groups of at most S; horovod_wagma.torch's groups() now drops group_size "
             "and always returns the default S's schedule, so hvd.groups(8, 2) shows groups "
             "of 4 (hvd.groups(hvd.size(), 4) at P=8 happens to stay right); the TensorFlow "
             "and Keras modules, which export the schedule's own groups(), are unaffected"),
    dict(id="fresh9-op-global-rounds-default-wait-avoiding", file="horovod_wagma/common/op/basics.py",
         edits=[("             averaging=\"fresh\", wait_avoiding=True, global_rounds=\"blocking\",",
                 "             averaging=\"fresh\", wait_avoiding=True, global_rounds=\"wait_avoiding\",")],
         tests=["tests/test_staleness.py::test_no_rank_more_than_tau_rounds_ahead",
                "tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_api_surface.py::test_init_defaults",
                "tests/test_api_surface.py::test_init_passes_every_knob_to_the_defaults_and_checks_them",
                "tests/test_api_surface.py"],
         bug="README:183-184 (api.md:18-20, semantics.md:17-20): global rounds are blocking "
             "for the op (the paper's), init()'s default; horovod_wagma's init() now defaults "
             "to global_rounds='wait_avoiding', so an op stream without the knob no longer "
             "waits for every member's app at global rounds: results there are not the exact "
             "average, a fast rank gets more than tau rounds ahead, and handles report "
             "skipped rounds (a plain hvd.init() keeps WagmaConfig's 'blocking')"),
    dict(id="fresh9-torch-sync-layouts-share-one-stream", file="horovod_wagma/torch/optimizer.py",
         edits=[("        role = \"forced\" if number == 0 else f\"forced.layout{number}.\"",
                 "        role = \"forced\"")],
         tests=["tests/test_optimizer.py::test_state_averaged_after_a_sync_before_the_first_step_and_after_load_state_dict",
                "tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync",
                "tests/test_optimizer.py"],
         bug="README:62, 189-191 (api.md:198-199): opt.sync() gives one model everywhere, on "
             "every rank, whenever all call it; each tensor layout sync() meets (before the "
             "first step there is no optimizer state yet, after it there is) had a stream of "
             "its own, and every layout now uses the same 'forced' stream, so a sync() before "
             "the first step followed by one after it fails on every rank with 'rank r called "
             "round 1 of stream 'wagma.optimizer0.forced0', which cannot change after round "
             "0: shape mismatch' (state mode 'never', with no state, is unaffected)"),
    dict(id="fresh9-app-input-never-published", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("  Publish(s, rs.call->input, InputVersion(rs.round), /*copy=*/false);\n"
                 "  if (rs.completed) {",
                 "  if (rs.completed) {")],
         tests=["tests/test_stale_join.py::test_late_member_result_follows_rule",
                "tests/test_straggler.py::test_straggler_not_waited_for",
                "tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_stale_join.py"],
         bug="README:7-9 (semantics.md:30-35): the other members' engines join at once with "
             "the newest model they have published, the newest of the app's inputs and "
             "results; an app's input is no longer published when it enters a round, only "
             "results are, so an engine that joins round r+1 while the app's round r is "
             "still in flight contributes round r-1's result (a step older) instead of the "
             "app's newest input, and stats() report one more round of staleness for such "
             "joins (round_policy_test.cc's TestPublishedVersions tests the rule, not this "
             "call)"),
    # --- elastic.md --------------------------------------------------------------------
    dict(id="fresh9-torch-rebase-keeps-last-served-round", file="horovod_wagma/torch/optimizer.py",
         edits=[("        self._round_base = self._round\n        self._served = -1\n",
                 "        self._round_base = self._round\n")],
         tests=["tests/test_elastic.py::test_host_added_starts_from_the_survivors_average",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py"],
         bug="elastic.md:31-32, 63 (README:156-158): after a reset the survivors go on from "
             "their replicas and added hosts' ranks start from the survivors' average, then "
             "train at the new size; the PyTorch optimizer's rebase no longer forgets the "
             "round that served its last step, so with the new engine's rounds counted from "
             "0 again no global-round duties (named_buffers, 'on_sync' state, drift "
             "correction) run on a survivor until the new rounds pass its old served round: "
             "joiners (fresh optimizers) enter the state stream's blocking round 0 at once "
             "and wait there for the survivors for dozens of steps, and BatchNorm statistics "
             "and momenta stay unaveraged meanwhile (Keras's twin, state.rebase(), is right)"),
    dict(id="fresh9-keras-elastic-reset-rewinds-the-step-count",
         file="horovod_wagma/keras/optimizer.py",
         edits=[("        self._wagma[\"round_base\"].assign(self._wagma[\"round\"])",
                 "        self._wagma[\"round\"].assign(self._wagma[\"round_base\"])")],
         tests=["tests/test_elastic.py::test_keras_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic_state.py::test_keras_state_drops_traced_functions_and_averages_every_floating_variable",
                "tests/test_elastic.py"],
         bug="elastic.md:8-13 with README:135-137, 156-157: Keras's WagmaState replaces "
             "KerasState under horovod_wagma.keras's hvd.elastic.run, and after a membership "
             "change nothing is restored and no step counter goes back; the Keras "
             "optimizer's rebase now assigns the other way round (the step count := the "
             "old base, 0 at the first reset) instead of recording the count as the new "
             "base, so every reset rewinds the optimizer's step count to 0: "
             "wagma_status().steps goes back, and join()'s step agreement starts over"),
    dict(id="fresh9-elastic-sync-forgets-the-new-replica",
         file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("            self._set_attrs()\n        membership.MEMBERSHIP.mark_synced()\n",
                 "            self._set_attrs()\n")],
         tests=["tests/test_membership.py::test_a_reset_before_the_first_sync_completed_is_numbered_anew_and_keeps_its_joiner",
                "tests/test_elastic_state.py::test_joiners_take_the_lowest_ranked_survivors_counters_survivors_keep_theirs",
                "tests/test_membership.py",
                "tests/test_elastic_state.py"],
         bug="elastic.md:27-33 (faults.md:131-132): the majority rule is judged against the "
             "previous member set, joiners weigh 0 in the first average, and "
             "membership_changes() lists the ranks lost and added; a sync() after a reset "
             "(survivors present) no longer marks this rank as holding the new member set's "
             "replica, so at a SECOND reset everyone still holds the first set's replica: "
             "the losses are counted against the job's first member set (8 -> 5 -> 4 ranks "
             "is judged 4 of 8, fenced without rank 0, instead of 4 of 5), the first "
             "reset's joiners weigh 0 again, and the change lists the first fault's ranks "
             "as lost again (the cascade of elastic.md:64)"),
]
