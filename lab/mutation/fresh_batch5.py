"""A fifth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md) and the
code, but not the tests; written 2026-12-03. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the pytest node ids docs/claims.md
lists for the promise, plus a whole module where the row looks weak; C++ unit tests
the row names are mentioned in `bug`, since check.py runs them anyway for an engine
mutant and passes only pytest ids on). None repeats a behaviour planted in mutants.py,
fresh_batch.py, fresh_batch2.py, fresh_batch3.py, fresh_batch4.py, fresh_survivors.py
or the detail_*.py batches."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh5-wait-avoiding-false-still-activates", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("                        : config.wait_avoiding;",
                 "                        : true;")],
         tests=["tests/test_straggler.py::test_without_wait_avoidance_partners_wait",
                "tests/test_straggler.py"],
         bug="api.md/semantics.md: wait_avoiding=False makes group rounds wait for every "
             "member (synchronous group averaging); the first member to arrive now "
             "activates its group whatever the knob says, so the others' engines join "
             "passively with their published values and nobody waits: the ablation is "
             "silently the default"),
    dict(id="fresh5-staleness-one-round-too-many", file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("return std::max<int64_t>(0, round - 1 - published_version / 2);",
                 "return std::max<int64_t>(0, round - published_version / 2);")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_observability.py"],
         bug="faults.md: stats()'s staleness_mean/_max say how many rounds old the passive "
             "joins' values were (an output of round r - 1 is fresh, 0 rounds stale); every "
             "passive join now counts one round staler, so a straggler that was never "
             "stale shows staleness 1 (also Keras's wagma_mean_staleness/_max; "
             "round_policy_test.cc::TestPublishedVersions)"),
    dict(id="fresh5-left-out-at-exactly-max-staleness-steps",
         file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("const bool in = code >= 0 || out.most_steps - StepsOfInclusion(code) <= max_staleness;",
                 "const bool in = code >= 0 || out.most_steps - StepsOfInclusion(code) < max_staleness;")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_a_rank_slower_than_max_staleness_allows_is_left_out_not_waited_for"],
         bug="semantics.md: a value old in rounds is left out only when its app is MORE than "
             "max_staleness steps behind the round's most advanced member; one exactly "
             "max_staleness steps behind is now left out too (with max_staleness=0 every "
             "value old in rounds is dropped, however far ahead its app), so the averages and "
             "rounds_left_out change (round_policy_test.cc::TestLeaveOutBoundaryIsStrict, "
             "::TestLeaveOutNeedsStaleInRoundsAndBehindInSteps)"),
    dict(id="fresh5-schedule-groups-larger-than-S", file="cpp_ops/engine/rounds/group_schedule.cc",
         edits=[("if (!found && LargestGroup(ph) <= S && FullyMixes(P, ph)) {",
                 "if (!found && LargestGroup(ph) <= S + 1 && FullyMixes(P, ph)) {")],
         tests=["tests/test_schedule.py::test_partitions_bounded_groups_and_full_mixing"],
         bug="semantics.md/api.md: each phase partitions the ranks into groups of AT MOST S "
             "(group_size); the strided construction now accepts a phase with a group of "
             "S + 1, which wins for 140 of the (P, S) pairs with P in 2..64, S in 2..8 (P=3, "
             "S=2 gives the group [0, 1, 2]): hvd.groups() and the rounds average over more "
             "ranks than the user asked for"),
    dict(id="fresh5-join-returns-the-first-rank", file="cpp_ops/engine/rounds/join_coordinator.h",
         edits=[("int last_rank() const { return order_.back(); }",
                 "int last_rank() const { return order_.front(); }")],
         tests=["tests/test_uneven.py::test_join_serves_final_model_exactly",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_keras.py::test_uneven_batches_with_join"],
         bug="faults.md/api.md: join() returns the last rank to join, like hvd.join(); the "
             "registrar now reports the FIRST rank that joined (the one that ran out of data "
             "soonest), on every rank, in PyTorch, TensorFlow and Keras alike"),
    dict(id="fresh5-verdict-givers-counted-lost", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("    if (r != rank_ && !roster_.departed(r) && !lost_members_.count(r) &&\n"
                 "        !peers_past_verdict_.count(r)) {",
                 "    if (r != rank_ && !roster_.departed(r) && !lost_members_.count(r)) {")],
         tests=["tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes"],
         bug="faults.md: in the settle window peers silent for half the liveness window are "
             "counted with the losses, 'except peers that announced their own verdict first "
             "(ranks [0] gave their own verdicts first: members, silent since then, not "
             "lost)'; a survivor that gave its verdict and went on to Horovod's reset is now "
             "probed and counted lost like the stopped host, so the other survivors judge "
             "themselves a minority ('fenced: ... not a majority') and the script ends"),
    dict(id="fresh5-app-away-report-never-due", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("  const double warning_s = stalls_->settings().warning_s;",
                 "  const double warning_s = stalls_->settings().timeout_s;")],
         tests=["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
         bug="faults.md/semantics.md: once an application has not called a stream for "
             "WAGMA_STALL_WARNING_S while its engine is left out of rounds, its rank prints "
             "'the application of rank 3 has not called stream ...'; the report now reads "
             "WAGMA_STALL_TIMEOUT_S instead: with the timeout off (the default) it is never "
             "printed, with one set it comes only after the timeout"),
    dict(id="fresh5-stall-timeout-error-drops-the-missing-ranks",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[('        text += rs.stall_note.empty() ? "" : "; " + rs.stall_note;\n', "")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_faults.py"],
         bug="faults.md/README: with WAGMA_STALL_TIMEOUT_S the waiting ranks raise 'stalled: "
             "waited 5.0 s ... in global round 4 of stream 'w'; ranks that have not entered "
             "it: [2]'; the inspector's note is no longer appended, so the error names the "
             "round but not the stuck rank (only a liveness verdict, when there is one)"),
    dict(id="fresh5-midrun-mismatch-names-rank-0", file="cpp_ops/engine/core/engine.cc",
         edits=[('const std::string error = "rank " + std::to_string(rank_) + " called round " +',
                 'const std::string error = "rank " + std::to_string(kRegistrar) + " called round " +')],
         tests=["tests/test_faults.py::test_midrun_mismatch_fails_every_rank"],
         bug="faults.md: a call that changes a stream after round 0 fails the stream on every "
             "member, 'naming the rank and the difference'; the error now always says 'rank 0 "
             "called round ...', whichever rank changed the stream"),
    dict(id="fresh5-timeline-every-reduction-passive", file="cpp_ops/engine/core/engine.cc",
         edits=[("metrics_.ReductionCompleted(s.spec.name, round, rs.plan.global, rs.passive, rs.members,",
                 "metrics_.ReductionCompleted(s.spec.name, round, rs.plan.global, rs.completed, rs.members,")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="faults.md: the timeline has the reductions with the passive ones marked; every "
             "reduction span is now written with \"passive\": true (the completed flag is "
             "passed for the passive one), so a trace no longer tells the rounds an engine "
             "joined for a busy app from those the app entered"),
    dict(id="fresh5-spin-us-env-ignored", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("  s.pacer.spin_us = static_cast<int64_t>(\n"
                 "      EnvDouble(\"HOROVOD_WAGMA_SPIN_US\", transport_progresses_on_its_own ? 0 : 200));",
                 "  s.pacer.spin_us = static_cast<int64_t>(transport_progresses_on_its_own ? 0 : 200);")],
         tests=[],
         bug="api.md: HOROVOD_WAGMA_SPIN_US (200 on MPI, 0 on Gloo) sets the microseconds the "
             "engine thread spins after activity; the variable is no longer read, so the "
             "transport's default always applies (caught by engine_settings_test.cc::main, "
             "the row's test)"),
    # --- common/ and the viewer -------------------------------------------------------
    dict(id="fresh5-viewer-drops-a-truncated-trace", file="horovod_wagma/timeline.py",
         edits=[("        return _parse_truncated(text)", "        return []")],
         tests=["tests/test_timeline_format.py::test_truncated_trace_still_loads",
                "tests/test_timeline_format.py::test_plot_two_ranks"],
         bug="faults.md: `python -m horovod_wagma.timeline` merges the per-rank traces and a "
             "truncated trace (a killed rank's, without the closing event) still loads; such "
             "a file now loads as no events at all, so the killed rank silently vanishes "
             "from the merged trace, the summary and the plot"),
    dict(id="fresh5-fusion-num-groups-buckets-round-down", file="horovod_wagma/common/optimizer/fusion_plan.py",
         # Re-aimed 2026-12-03 at the exact-K split that replaced ceil(n / K) sizes.
         edits=[("size, extra = divmod(len(variables), k)", "size, extra = len(variables) // k, 0")],
         tests=["tests/test_optimizer_core.py::test_fusion_plan_buckets"],
         bug="api.md: groups=K (or num_groups=K) splits the fusion buffers into K contiguous "
             "buckets; the bucket size now rounds down, so 5 parameters with K=2 make 3 "
             "buckets (5 with K=3): more streams and rounds than the user asked for"),
    dict(id="fresh5-optimizer-accepts-delta", file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[('if self.averaging == "delta":', 'if self.averaging == "Delta":')],
         tests=["tests/test_optimizer_core.py::test_each_bad_knob_is_a_value_error_naming_it[averaging-delta]",
                "tests/test_bad_input.py::test_init_rejects_invalid_knobs"],
         bug="api.md: averaging='delta' is for bookkeeping streams and the optimizers refuse "
             "it (ValueError); DistributedWagmaOptimizer(..., averaging='delta') is now "
             "built, in PyTorch and Keras, and averages the model with the drift stream's "
             "rule"),
    dict(id="fresh5-op-sum-accepted", file="horovod_wagma/common/optimizer/horovod_arguments.py",
         edits=[("    if op is not hvd.Average:", "    if op not in (hvd.Average, hvd.Sum):")],
         tests=["tests/test_optimizer.py::test_bad_arguments"],
         bug="README/api.md: op must be hvd.Average; 'hvd.Adasum and others are a "
             "ValueError'; op=hvd.Sum is now accepted (and silently averages), in both "
             "frameworks' optimizers"),
    dict(id="fresh5-shares-lose-a-leftover-sample", file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("    for k in range(leftover):", "    for k in range(leftover - 1):")],
         tests=["tests/test_balanced_sampler.py::test_every_sample_exactly_once_per_epoch",
                "tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance"],
         bug="api.md: the epoch's permutation is cut into shares so that 'every sample is "
             "dealt exactly once per epoch'; when the proportional cut leaves remainders, "
             "one leftover sample is no longer handed out: the shares sum to total_size - 1 "
             "and the permutation's last sample is never dealt (BalancedBatchSampler's global "
             "batch loses one sample a step, BalancedSequence one an epoch)"),
    dict(id="fresh5-step-clock-leaves-out-every-step", file="horovod_wagma/common/optimizer/step_clock.py",
         edits=[("        if self._depth == 0 and self._step_waits:",
                 "        if self._depth == 0:")],
         tests=["tests/test_balanced_sampler.py::test_step_clock_counts_own_work_and_takes_out_waits",
                "tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance"],
         bug="api.md: a step's cycle holds data loading, forward, backward AND "
             "DistributedWagmaOptimizer's step (its averaging is this rank's work), leaving "
             "out only Horovod's DistributedOptimizer's step; every optimizer's step is now "
             "taken out as a wait, so a rank slow in its optimizer step (or its averaging) "
             "measures as fast and keeps too large a share"),
    dict(id="fresh5-stats-unknown-name-empty", file="horovod_wagma/common/op/stats.py",
         edits=[("    if name not in streams:\n"
                 "        raise ValueError(f\"no WAGMA stream named {name!r} on this rank; known: \"\n"
                 "                         f\"{sorted(streams)}\")\n"
                 "    return streams[name]",
                 "    return streams.get(name, {})")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_observability.py"],
         bug="api.md: stats(name) gives one stream's counters and raises ValueError for an "
             "unknown name; a misspelt name now returns {} silently, in all three modules"),
    # --- PyTorch ----------------------------------------------------------------------
    dict(id="fresh5-torch-named-parameters-duplicate-pair-accepted",
         file="horovod_wagma/torch/named_parameters.py",
         edits=[("names.count(k) > 1", "names.count(k) > 2")],
         tests=["tests/test_optimizer.py::test_bad_arguments",
                "tests/test_optimizer_core.py::test_named_parameters_must_cover_every_parameter"],
         bug="api.md: named_parameters is checked as Horovod does, with unique names; a name "
             "that appears twice (model.named_parameters() listed twice, two models with the "
             "same names) is now accepted, only three or more copies are refused"),
    dict(id="fresh5-torch-sampler-len-is-an-equal-share", file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("        return self.num_samples", "        return self.total_size // self.num_replicas")],
         tests=["tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance",
                "tests/test_balanced_sampler.py::test_fast_ranks_take_more_steps_then_join"],
         bug="api.md: 'len(sampler) is this rank's share'; BalancedDistributedSampler's len "
             "is now torch's equal share (total_size / P) while iteration still deals the "
             "proportional share, so len(sampler) and len(DataLoader) are wrong on every "
             "rank once the shares follow speed"),
    dict(id="fresh5-torch-qgm-old-momentum-unscaled",
         file="horovod_wagma/torch/quasi_global_momentum.py",
         edits=[("torch._foreach_add_(d, [olds[i] for i in keep], alpha=beta)",
                 "torch._foreach_add_(d, [olds[i] for i in keep], alpha=1.0)")],
         tests=["tests/test_quasi_global.py::test_torch_matches_exact_simulation_of_all_ranks",
                "tests/test_quasi_global.py::test_torch_fixed_point_is_heavy_balls"],
         bug="semantics.md: 'quasi_global' rebuilds m = beta * m_old + (1 - beta) * "
             "(x_before - x_after) / lr; the old buffer is now added unscaled (m_old + ...), "
             "so the momentum no longer decays and has no heavy-ball fixed point"),
    # --- Keras / TensorFlow -----------------------------------------------------------
    dict(id="fresh5-keras-fp16-ignored-for-float32", file="horovod_wagma/keras/optimizer.py",
         edits=[('            if w["fp16"] and flat.dtype == tf.float32:',
                 '            if w["fp16"] and flat.dtype == tf.float64:')],
         tests=["tests/test_keras.py::test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds"],
         bug="api.md/semantics.md: the Keras DistributedWagmaOptimizer with "
             "Compression.fp16 sends fp16 (global rounds take the fp16 average, group rounds "
             "apply x + (avg16 - x16)); float32 models are now sent in float32, the knob "
             "silently ignored (the PyTorch twin, fresh2-torch-fp16-ignored-for-float32, is "
             "in the other frontend)"),
    dict(id="fresh5-keras-metric-average-in-half", file="horovod_wagma/keras/callbacks.py",
         edits=[("values = tf.constant([float(logs[k]) for k in keys], tf.float64)",
                 "values = tf.constant([float(logs[k]) for k in keys], tf.float16)")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_no_deadlock.py::test_keras_fit_with_horovod_callbacks_over_many_epochs"],
         bug="api.md: MetricAverageCallback averages the epoch's scalar metrics over all "
             "ranks, in place in logs; they now cross the wire as float16, so the logged "
             "loss and accuracy are the average rounded to 3 significant digits (a loss "
             "above 65504 becomes inf), no longer the ranks' mean"),
    dict(id="fresh5-keras-elastic-run-never-resets", file="horovod_wagma/keras/elastic.py",
         edits=[("            if any(v in e.message for v in _ENGINE_VERDICTS):",
                 "            if all(v in e.message for v in _ENGINE_VERDICTS):")],
         tests=["tests/test_elastic.py::test_keras_host_killed_survivors_go_on_without_rollback"],
         bug="elastic.md/README: horovod_wagma.keras's hvd.elastic.run also resets on WAGMA's "
             "membership changes, which reach model.fit as a tf.errors.AbortedError; the "
             "error must now hold both 'membership changed:' and 'fenced:', which no verdict "
             "does, so the AbortedError escapes run() and the Keras survivors' script dies "
             "instead of resetting"),
]
