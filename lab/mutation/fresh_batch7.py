"""A seventh fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md),
docs/claims.md and the code, but not the tests; written 2026-12-03. The format is
lab/mutation/mutants.py's: each mutant breaks a documented, user-visible behaviour with
a one-line (or few-line) change, and names the tests that should guard it (the pytest
node ids docs/claims.md lists for the promise, plus a whole module where the row looks
weak; C++ unit tests the row names are mentioned in `bug`, since check.py runs them
anyway for an engine mutant and passes only pytest ids on). None repeats a behaviour
planted in mutants.py, fresh_batch.py .. fresh_batch6.py, fresh_survivors.py or the
detail_*.py batches."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh7-dtype-mismatch-shows-own-dtype-twice", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("s << DataTypeName(dtype) << \", \" << theirs << \" has dtype \" << DataTypeName(o.dtype);",
                 "s << DataTypeName(dtype) << \", \" << theirs << \" has dtype \" << DataTypeName(dtype);")],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_bad_input.py"],
         bug="semantics.md/faults.md: a round-0 mismatch is an error on every rank 'naming "
             "both values'; a dtype mismatch now names this side's dtype for both ranks "
             "('rank 0 has dtype float32, rank 2 has dtype float32'), so the message no "
             "longer says what the other rank sent "
             "(registration_book_test.cc::TestEachKnobMismatchNamesBothValuesWithTheirRanks "
             "if it covers dtype)"),
    dict(id="fresh7-long-name-length-is-the-shown-prefix", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("\"...(\" + std::to_string(name.size()) + \" bytes)\"",
                 "\"...(\" + std::to_string(kShown) + \" bytes)\"")],
         tests=["tests/test_fuzz.py::test_long_names_in_engine_errors", "tests/test_fuzz.py"],
         bug="faults.md/api.md: names may be any length and long names are shortened in "
             "messages, the shortened name followed by the name's length ('...(5000 "
             "bytes)'); the length printed is now that of the shown prefix, always '(96 "
             "bytes)', so two long names in errors look the same length whatever they are"),
    dict(id="fresh7-liveness-window-doubled", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("std::max(1.0, s.liveness_s)", "std::max(1.0, 2 * s.liveness_s)")],
         tests=["tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes",
                "tests/test_elastic.py"],
         bug="README/faults.md: under Horovod elastic a peer that leaves a liveness probe "
             "unanswered for HOROVOD_WAGMA_LIVENESS_S (default 10 s) is lost; the silence "
             "allowed is now twice the variable (20 s by default, 10 s at 5), so a stopped "
             "host is found and the survivors reset twice as late "
             "(engine_settings_test.cc, if it derives the elastic grace)"),
    dict(id="fresh7-fragment-up-to-sets-the-fragment-size",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("EnvBytes(\"HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES\", &f.up_to_bytes)",
                 "EnvBytes(\"HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES\", &f.fragment_bytes)")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_bad_input.py::test_fragment_settings_must_match_on_every_rank"],
         bug="api.md/launching.md: HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES (4 MiB) is the largest "
             "message that is cut, HOROVOD_WAGMA_FRAGMENT_BYTES (64512) the fragment size; "
             "the UP_TO variable now overwrites the fragment size and the upper bound "
             "stays 4 MiB, so setting it cuts messages into fragments of that size (or, "
             "set to 0, not at all) instead of moving the bound"),
    dict(id="fresh7-contribution-age-one-round-older", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("rs.age_rounds = round - s.last_app_round;",
                 "rs.age_rounds = round - s.last_app_round + 1;")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_global_rounds.py"],
         bug="faults.md/semantics.md: contribution_age_* count the passive values that "
             "entered the average by age, the rounds since the application last called "
             "(or the steps behind, if fewer), never above max_staleness; the age in rounds "
             "is now one too many, so the histogram shifts by one and a value exactly "
             "max_staleness rounds old is counted at max_staleness + 1 (the bound the docs "
             "promise is broken; the timeline's passive_join 'age' too)"),
    dict(id="fresh7-away-report-counts-one-left-out-round",
         file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("++s.left_out_since_app_call;", "s.left_out_since_app_call = 1;")],
         tests=["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for",
                "tests/test_global_rounds.py"],
         bug="faults.md: the away-application report says how many rounds its engine was "
             "left out of since the app last called ('its engine joined 380 later round(s) "
             "with a value too old (max_staleness=10)'); it now always says '1 later "
             "round(s)', however many (the timeline's app_away 'left_out' too)"),
    dict(id="fresh7-leaver-fails-the-round-it-served", file="cpp_ops/engine/transport/peer_roster.cc",
         edits=[("if (round <= last_round) continue;  // it joined that round before leaving",
                 "if (round < last_round) continue;  // it joined that round before leaving")],
         tests=["tests/test_faults.py::test_early_exit_is_announced",
                "tests/test_faults.py::test_registrar_exit_fails_new_streams",
                "tests/test_faults.py"],
         bug="faults.md: a rank that shuts down without join() tells its peers which rounds "
             "it served, and only the NEXT round that needs it fails ('after round 6 ..., "
             "and round 9 needs it'); the last round it served now counts as needing it "
             "too, so a round it did join fails on the others ('after round 6 of stream "
             "'w', and round 6 needs it') instead of completing"),
    dict(id="fresh7-hold-report-lists-the-held-round-as-earlier",
         file="cpp_ops/engine/health/hold_report.cc",
         edits=[("if (r.first < round && r.second.in_flight())",
                 "if (r.first <= round && r.second.in_flight())")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py"],
         bug="faults.md: the hold report ends 'earlier rounds of the stream in flight here: "
             "none' (and the other members' views 'earlier rounds in flight: [55, 56]'); "
             "the held round itself is now listed among the EARLIER rounds in flight "
             "('earlier rounds ... in flight here: [57]' for round 57), so every report "
             "seems to wait on an earlier round that does not exist"),
    dict(id="fresh7-settle-window-needs-the-full-liveness-silence",
         file="cpp_ops/engine/health/majority_rule.h",
         edits=[("return silent_s >= liveness_s / 2;", "return silent_s >= liveness_s;")],
         tests=["tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes",
                "tests/test_elastic.py::test_a_minority_left_alone_is_fenced",
                "tests/test_elastic.py"],
         bug="faults.md: at the end of the settle window (HOROVOD_WAGMA_LOSS_SETTLE_MS) "
             "peers silent for HALF the liveness window are counted with the losses (the "
             "same cut), so a cut-off minority sees that it is one; now only peers silent "
             "the whole window are, so a side judging on part of its losses can count "
             "itself a majority ('3 lost, 5 remain' on a side of 2 of 8) and train alone"),
    dict(id="fresh7-stats-errors-capped-at-one", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("++streams_[stream].errors;", "streams_[stream].errors = 1;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_faults.py::test_midrun_mismatch_fails_every_rank",
                "tests/test_observability.py", "tests/test_faults.py"],
         bug="faults.md: stats()'s errors counts the rounds of a stream that ended in an "
             "error; it is now a flag, 1 however many rounds failed (a stream failed from "
             "round 4 with three rounds pending reports 1, not 3)"),
    # --- common/ and PyTorch ----------------------------------------------------------
    dict(id="fresh7-num-groups-ignored", file="horovod_wagma/common/optimizer/fusion_plan.py",
         edits=[("        if groups is None and num_groups:\n            groups = num_groups\n",
                 "        if groups is None and num_groups:\n            groups = None\n")],
         tests=["tests/test_optimizer_core.py::test_fusion_plan_buckets",
                "tests/test_optimizer_core.py"],
         bug="api.md: groups / num_groups split the fusion buffers (an int K: K contiguous "
             "buckets), num_groups being Horovod's older spelling used when groups is None; "
             "num_groups=K is now ignored, so the whole model stays one bucket (one stream "
             "per dtype) in both frameworks"),
    dict(id="fresh7-stats-kept-ahead-reports-left-out", file="horovod_wagma/common/op/stats.py",
         edits=[("\"rounds_kept_ahead\": raw[\"rounds_kept_ahead\"],",
                 "\"rounds_kept_ahead\": raw[\"rounds_left_out\"],")],
         tests=["tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_no_deadlock.py::test_a_lagging_rank_keeps_averaging_while_the_others_wait_in_a_collective",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_equal_steps_with_a_slow_rank_then_sync_does_not_hang"],
         bug="faults.md/semantics.md: rounds_kept_ahead counts values old in rounds that "
             "COUNTED because their app was not behind in steps, rounds_left_out those "
             "left out; stats() now reports rounds_left_out under both keys, so a rank "
             "kept in the average while it waited in a collective shows 0 kept ahead, and "
             "a left-out one shows as kept ahead"),
    dict(id="fresh7-stats-global-wait-in-ms", file="horovod_wagma/common/op/stats.py",
         edits=[("\"global_wait_s\": raw[\"global_wait_us\"] / 1e6,",
                 "\"global_wait_s\": raw[\"global_wait_us\"] / 1e3,")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_observability.py"],
         bug="faults.md: stats()'s global_wait_s is the seconds the application was blocked "
             "collecting global rounds; it is now milliseconds (1000x too large) in all "
             "three modules, while group_wait_s stays in seconds"),
    dict(id="fresh7-torch-status-steps-one-short", file="horovod_wagma/torch/optimizer.py",
         edits=[("return self._core.status(self._round, self._served)",
                 "return self._core.status(self._round - 1, self._served)")],
         tests=["tests/test_api_surface.py::test_set_backward_passes_per_step",
                "tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join",
                "tests/test_optimizer_core.py::test_status_is_a_read_only_snapshot_naming_the_streams"],
         bug="api.md: wagma_status().steps is this rank's own optimizer steps so far (and "
             "served_round equals steps - 1 with blocking global rounds); the PyTorch "
             "optimizer now reports one step fewer (-1 before the first step, 1 after two), "
             "so steps == served_round with blocking global rounds"),
    dict(id="fresh7-min-share-zero-refused", file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("if not 0.0 <= min_share <= 1.0:", "if not 0.0 < min_share <= 1.0:")],
         tests=["tests/test_balanced_sampler.py::test_lbbsp_gives_a_rank_measured_very_slow_at_least_one_sample_a_step",
                "tests/test_balanced_sampler.py"],
         bug="api.md: the samplers' min_share is the floor of a share as a fraction of an "
             "equal one (BalancedBatchSampler: and at least 1 sample a step), any value "
             "in [0, 1]; min_share=0 (no floor beyond the one sample) is now a ValueError "
             "in BalancedDistributedSampler, BalancedBatchSampler and BalancedSequence"),
    dict(id="fresh7-torch-op-errors-not-wagma-errors", file="horovod_wagma/torch/ops.py",
         edits=[("self._error = engine_error(str(e))", "self._error = RuntimeError(str(e))")],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_faults.py::test_early_exit_is_announced",
                "tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback"],
         bug="api.md: the PyTorch op's errors raise horovod_wagma.torch.WagmaError (a "
             "RuntimeError), every engine failure (mismatch, a peer that left, a stall "
             "timeout), and a lost member WagmaMembershipChanged; synchronize() now raises "
             "a plain RuntimeError, so 'except WagmaError' misses them and Horovod elastic "
             "no longer resets on a lost member in PyTorch"),
    dict(id="fresh7-torch-drift-default-alpha-half", file="horovod_wagma/common/optimizer/drift_policy.py",
         edits=[("DEFAULT_ALPHA = 0.25", "DEFAULT_ALPHA = 0.5")],
         tests=["tests/test_optimizer_core.py::test_drift_correction_default_follows_the_wrapped_optimizer",
                "tests/test_optimizer.py::test_drift_correction_removes_a_non_iid_bias"],
         bug="api.md/semantics.md: drift_correction=None is 0.25 in PyTorch where the "
             "wrapped optimizer keeps a first moment and the state is 'on_sync' (0.5 lost "
             "accuracy under random stragglers); the default is now 0.5"),
    dict(id="fresh7-backward-passes-zero-accepted-at-construction",
         file="horovod_wagma/common/optimizer/horovod_arguments.py",
         edits=[("    check_backward_passes(backward_passes_per_step)\n", "")],
         tests=["tests/test_optimizer.py::test_bad_arguments",
                "tests/test_optimizer.py::test_backward_passes_per_step"],
         bug="api.md: backward_passes_per_step is kept for compatibility and must be > 0; "
             "DistributedWagmaOptimizer(..., backward_passes_per_step=0) (or a negative "
             "value) is now built without an error in both frameworks (only "
             "set_backward_passes_per_step still checks)"),
    # --- Keras / TensorFlow -----------------------------------------------------------
    dict(id="fresh7-keras-stats-mean-staleness-cumulative-sum",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("logs[\"wagma_mean_staleness\"] = d[\"staleness_sum\"] / max(1, d[\"passive_joins\"])",
                 "logs[\"wagma_mean_staleness\"] = now[\"staleness_sum\"] / max(1, d[\"passive_joins\"])")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks", "tests/test_keras.py"],
         bug="api.md/faults.md: WagmaStatsCallback adds this rank's PER-EPOCH "
             "wagma_mean_staleness (this epoch's staleness over this epoch's passive "
             "joins); the sum is now every passive join's since the engine started, "
             "divided by this epoch's joins, so the mean grows epoch after epoch"),
    dict(id="fresh7-keras-lr-schedule-ignores-end-epoch",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("super().__init__(tf.keras.backend, initial_lr, multiplier, start_epoch, end_epoch,",
                 "super().__init__(tf.keras.backend, initial_lr, multiplier, start_epoch, None,")],
         tests=["tests/test_api_surface.py::test_keras_learning_rate_schedule_is_horovods"],
         bug="api.md: LearningRateScheduleCallback is Horovod's schedule with the same "
             "arguments, end_epoch among them; the end_epoch given is now dropped, so the "
             "multiplier keeps applying after it (a schedule for epochs 2-5 still changes "
             "the lr at epoch 8)"),
    dict(id="fresh7-keras-elastic-fenced-stays-a-tf-error",
         file="horovod_wagma/keras/elastic.py",
         edits=[("_ENGINE_VERDICTS = (\"membership changed:\", \"fenced:\")",
                 "_ENGINE_VERDICTS = (\"membership changed:\",)")],
         tests=["tests/test_elastic.py::test_keras_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py::test_a_minority_left_alone_is_fenced",
                "tests/test_membership.py"],
         bug="elastic.md/README: a fenced side stops with WagmaFenced ('fenced: ... not a "
             "majority'); horovod_wagma.keras's elastic.run now converts only 'membership "
             "changed', so a fenced Keras side ends with the op's tf.errors.AbortedError "
             "instead of WagmaFenced ('except WagmaFenced' in a Keras script misses it)"),
    dict(id="fresh7-tf-op-max-staleness-ignored", file="horovod_wagma/tensorflow/ops.py",
         edits=[("global_rounds=global_rounds, max_staleness=max_staleness, members=members)",
                 "global_rounds=global_rounds, max_staleness=0, members=members)")],
         tests=["tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_keras.py"],
         bug="api.md/semantics.md: the TensorFlow group_allreduce takes the same arguments "
             "and semantics as the PyTorch op, max_staleness (default sync_period) bounding "
             "how old a passive value may be with wait-avoiding global rounds; the kernel "
             "now always gets max_staleness=0, so the TF op and the Keras optimizer leave "
             "out every passive value one round old whose app is a step behind"),
    dict(id="fresh7-keras-sequence-equal-steps-needed-inverted",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("self.equal_steps_needed = synchronous", "self.equal_steps_needed = not synchronous")],
         tests=["tests/test_keras.py::test_balanced_sequence_keeps_equal_shares_for_horovods_optimizer",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit"],
         bug="api.md: BalancedSequence keeps equal shares where a rank's "
             "DistributedWagmaOptimizer did not average during the epoch, and "
             "equal_steps_needed is then True; the attribute is now inverted (False under "
             "Horovod's optimizer, True under WAGMA's) while the shares stay right"),
    dict(id="fresh7-keras-join-returns-the-step-count", file="horovod_wagma/keras/optimizer.py",
         edits=[("        steps.assign(agreed)\n        return last\n",
                 "        steps.assign(agreed)\n        return int(agreed)\n")],
         tests=["tests/test_keras.py::test_uneven_batches_with_join",
                "tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_keras.py"],
         bug="api.md/faults.md: the Keras optimizer's join() is as in PyTorch and returns "
             "the last rank to join, like hvd.join(); it now returns this rank's step "
             "count after the join (the furthest any rank reached with blocking global "
             "rounds)"),
]
