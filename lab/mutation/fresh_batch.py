"""A fresh batch of planted bugs (an independent reviewer's), in the format of
lab/mutation/mutants.py: each one documented, user-visible behaviour broken by a
one-line change, with the test modules that should guard it (from docs/claims.md)."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh-majority-half-without-rank0-goes-on", file="cpp_ops/engine/health/majority_rule.h",
         edits=[("if (2 * remaining > size) return true;",
                 "if (2 * remaining >= size) return true;")],
         tests=["tests/test_elastic.py::test_a_minority_left_alone_is_fenced",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback"],
         bug="README/elastic.md: a side with exactly half of the member set and without "
             "rank 0 goes on instead of being fenced (both halves of a split train)"),
    dict(id="fresh-default-group-size-above-sqrt", file="cpp_ops/engine/rounds/group_schedule.cc",
         edits=[("while (static_cast<long long>(s) * s < P) s *= 2;",
                 "while (static_cast<long long>(s) * s <= P) s *= 2;")],
         tests=["tests/test_schedule.py::test_default_group_size_is_smallest_power_of_two_above_sqrt",
                "tests/test_schedule.py::test_partitions_bounded_groups_and_full_mixing"],
         bug="api.md/semantics.md: default_group_size(P) is the smallest power of two >= "
             "sqrt(P); at P = 4, 16, 64 it now doubles (P=4 gives 4, not 2)"),
    dict(id="fresh-shape-mismatch-values-swapped", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[('s << ShapeString(shape) << ", " << theirs << " has shape " << ShapeString(o.shape);',
                 's << ShapeString(o.shape) << ", " << theirs << " has shape " << ShapeString(shape);')],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_fuzz.py::test_long_names_in_engine_errors"],
         bug="faults.md: a round-0 shape mismatch names each rank with the other rank's "
             "shape ('rank 0 has shape [5], rank 2 has shape [4, 3]')"),
    dict(id="fresh-contribution-age-takes-the-larger", file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("return wait_avoiding_global ? std::min(age_rounds, steps_behind) : age_rounds;",
                 "return wait_avoiding_global ? std::max(age_rounds, steps_behind) : age_rounds;")],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish"],
         bug="faults.md/semantics.md: contribution_age is rounds since the app called or "
             "steps behind, whichever is fewer, never above max_staleness; now the larger, "
             "so contribution_age_max can exceed max_staleness"),
    dict(id="fresh-local-takes-fresh-after-one-result", file="cpp_ops/engine/rounds/averaging_rule.cc",
         edits=[("return results_since_join > 1 ? Averaging::kFresh : Averaging::kLocal;",
                 "return results_since_join > 0 ? Averaging::kFresh : Averaging::kLocal;")],
         tests=["tests/test_stale_join.py",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values"],
         bug="semantics.md: 'local' falls back to 'fresh' only when MORE than one result was "
             "applied after c was taken; now already after one (its progress divided by g)"),
    dict(id="fresh-early-exit-names-first-member", file="cpp_ops/engine/transport/peer_roster.cc",
         edits=[('std::string text = "rank " + std::to_string(m) +',
                 'std::string text = "rank " + std::to_string(members.front()) +')],
         tests=["tests/test_faults.py::test_early_exit_is_announced"],
         bug="faults.md: 'rank 3 left without join() ...' names the round's first member "
             "(rank 0 in a global round) instead of the rank that left"),
    dict(id="fresh-hold-report-zero-means-always", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("if (cfg.hold_report_s > 0 && !rs.hold_reported && in_round > cfg.hold_report_s &&",
                 "if (cfg.hold_report_s >= 0 && !rs.hold_reported && in_round > cfg.hold_report_s &&")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py"],
         bug="faults.md: WAGMA_HOLD_REPORT_S=0 means never; now every call that waits at "
             "all is hold-reported (and counted in hold_reports)"),
    dict(id="fresh-global-wait-reports-group-wait", file="cpp_ops/engine/observe/stream_stats.cc",
         edits=[(',\\"global_wait_us\\":" + std::to_string(s.global_wait_us);',
                 ',\\"global_wait_us\\":" + std::to_string(s.group_wait_us);')],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="faults.md: stats()'s global_wait_s is the time the app was blocked in global "
             "rounds; it now repeats group_wait_s"),
    # --- common/ ----------------------------------------------------------------------
    dict(id="fresh-max-staleness-4096-refused", file="horovod_wagma/common/op/config.py",
         edits=[("or not 0 <= max_staleness <= MAX_SYNC_PERIOD):",
                 "or not 0 <= max_staleness < MAX_SYNC_PERIOD):")],
         tests=["tests/test_bad_input.py::test_init_rejects_invalid_knobs",
                "tests/test_fuzz.py::test_config_accepts_exactly_the_valid_knobs"],
         bug="api.md/faults.md: max_staleness is 0 to 4096; 4096 is now a ValueError"),
    dict(id="fresh-optimizer-group-size-not-capped-at-P", file="horovod_wagma/common/op/schedule.py",
         edits=[("return max(2, min(num_ranks, max(OPTIMIZER_MIN_GROUP, default_group_size(num_ranks))))",
                 "return max(2, max(OPTIMIZER_MIN_GROUP, default_group_size(num_ranks)))")],
         tests=["tests/test_schedule.py::test_optimizer_group_size_is_every_rank_up_to_8_then_at_least_8",
                "tests/test_optimizer_core.py::test_default_group_size_is_the_optimizers_and_follows_the_member_set"],
         bug="api.md: optimizer_group_size(P) = min(P, max(8, default)); below 8 ranks it "
             "now returns 8, not P (and wagma_status() reports it)"),
    dict(id="fresh-join-agrees-steps-when-wait-avoiding", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[("        if not self.wait_avoiding_global:\n            steps = max_over_ranks(",
                 "        if self.wait_avoiding_global:\n            steps = max_over_ranks(")],
         tests=["tests/test_optimizer_core.py::test_join_agrees_on_steps_only_with_blocking_global_rounds",
                "tests/test_uneven.py::test_optimizer_join_with_uneven_batches"],
         bug="api.md/faults.md: after join() every rank takes the furthest step count with "
             "blocking global rounds, each keeps its own with wait-avoiding ones; the modes "
             "are swapped"),
    dict(id="fresh-drift-default-on-in-every-state-mode", file="horovod_wagma/common/optimizer/drift_policy.py",
         edits=[('    if state_mode != "on_sync":\n        return 0.0\n', "")],
         tests=["tests/test_optimizer_core.py::test_drift_correction_default_follows_the_wrapped_optimizer",
                "tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync"],
         bug="api.md: drift_correction=None is 0.25 only with average_optimizer_state="
             "'on_sync'; now also with 'never'/'always'/'quasi_global', where it then "
             "raises ValueError for an SGD-with-momentum or Adam optimizer"),
    dict(id="fresh-staleness-mean-over-all-rounds", file="horovod_wagma/common/op/stats.py",
         edits=[('"staleness_mean": raw["staleness_sum"] / joins if joins else 0.0,',
                 '"staleness_mean": raw["staleness_sum"] / raw["rounds"] if raw["rounds"] else 0.0,')],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="faults.md: staleness_mean is how many rounds old the passive joins' values "
             "were, per passive join; now divided by all the app's rounds"),
    dict(id="fresh-membership-change-reports-old-size", file="horovod_wagma/common/elastic/membership.py",
         edits=[('"size": len(current), "rank": hvd.rank(),',
                 '"size": len(previous), "rank": hvd.rank(),')],
         tests=["tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py::test_host_added_starts_from_the_survivors_average"],
         bug="elastic.md/api.md: membership_changes() gives the NEW size; it now gives the "
             "previous member set's"),
    # --- torch/ -----------------------------------------------------------------------
    dict(id="fresh-torch-integer-buffers-averaged", file="horovod_wagma/torch/optimizer.py",
         edits=[("self._named_buffers = [b for _, b in named_buffers or []\n"
                 "                               if torch.is_floating_point(b)]",
                 "self._named_buffers = [b for _, b in named_buffers or []]")],
         tests=["tests/test_optimizer.py::test_models_identical_after_every_global_round"],
         bug="api.md: only the floating-point named_buffers are averaged at global rounds; "
             "BatchNorm's int64 num_batches_tracked now enters the fused buffers (TypeError "
             "from the op)"),
    dict(id="fresh-torch-quasi-global-buffers-not-averaged", file="horovod_wagma/torch/optimizer.py",
         edits=[('if self._state_averaging in ("on_sync", "quasi_global"):',
                 'if self._state_averaging == "on_sync":')],
         tests=["tests/test_quasi_global.py::test_torch_matches_exact_simulation_of_all_ranks",
                "tests/test_quasi_global.py::test_torch_fixed_point_is_heavy_balls"],
         bug="semantics.md: with 'quasi_global' PyTorch also averages the rebuilt momentum "
             "buffers at global rounds; now they stay local"),
    dict(id="fresh-torch-join-sums-steps", file="horovod_wagma/torch/optimizer.py",
         edits=[("_hvd.allreduce(torch.tensor(steps), op=_hvd.Max, name=name)",
                 "_hvd.allreduce(torch.tensor(steps), op=_hvd.Sum, name=name)")],
         tests=["tests/test_uneven.py::test_optimizer_join_with_uneven_batches"],
         bug="api.md: join() with blocking global rounds sets every rank's step count to "
             "the furthest any rank reached; now to the sum over ranks"),
    dict(id="fresh-torch-sampler-same-permutation-every-epoch", file="horovod_wagma/torch/epoch_shares.py",
         edits=[("g.manual_seed(self.seed + self.epoch)", "g.manual_seed(self.seed)")],
         tests=["tests/test_balanced_sampler.py::test_every_sample_exactly_once_per_epoch",
                "tests/test_balanced_sampler.py"],
         bug="api.md: the epoch's permutation is torch's (seed + epoch); every epoch now "
             "deals the same order"),
    dict(id="fresh-torch-lbbsp-drop-last-ignored", file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("self.steps = n // self.global_batch if drop_last else math.ceil(n / self.global_batch)",
                 "self.steps = math.ceil(n / self.global_batch)")],
         tests=["tests/test_balanced_sampler.py"],
         bug="api.md: BalancedBatchSampler with drop_last cuts the epoch to a whole number "
             "of global batches; it now pads the last partial one like drop_last=False"),
    # --- keras/ -----------------------------------------------------------------------
    dict(id="fresh-keras-metric-average-keeps-own-values", file="horovod_wagma/keras/callbacks.py",
         edits=[("for key, value in zip(keys, avg.numpy().tolist()):",
                 "for key, value in zip(keys, values.numpy().tolist()):")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_no_deadlock.py::test_keras_fit_with_horovod_callbacks_over_many_epochs"],
         bug="api.md: MetricAverageCallback writes the ranks' average into logs; each rank "
             "now keeps its own metric values"),
    dict(id="fresh-keras-stats-callback-cumulative-rounds", file="horovod_wagma/keras/callbacks.py",
         edits=[('logs["wagma_rounds"] = d["rounds_completed"]',
                 'logs["wagma_rounds"] = now["rounds_completed"]')],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
         bug="api.md/faults.md: WagmaStatsCallback's wagma_rounds is this epoch's rounds; "
             "it now counts every round since the engine started"),
    dict(id="fresh-keras-sync-skips-state", file="horovod_wagma/keras/optimizer.py",
         edits=[('        if self._wagma["state"]:\n            variables = list(variables)',
                 '        if self._wagma["qgm"]:\n            variables = list(variables)')],
         tests=["tests/test_keras.py"],
         bug="api.md: Keras sync(variables) also averages the optimizer's state with "
             "'on_sync'; now only the variables"),
    dict(id="fresh-keras-sequence-drops-short-batch", file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("return math.ceil(len(self.indices) / self.batch_size)",
                 "return len(self.indices) // self.batch_size")],
         tests=["tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit"],
         bug="api.md: BalancedSequence serves this rank's whole share (the last batch may "
             "be short); the short last batch is now never served, so samples are lost"),
    dict(id="fresh-keras-drift-accepts-sgd-without-momentum", file="horovod_wagma/keras/drift_correction.py",
         edits=[("if float(optimizer.momentum) <= 0:", "if float(optimizer.momentum) < 0:")],
         tests=["tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias",
                "tests/test_keras.py"],
         bug="api.md: a given drift_correction needs a first moment (SGD momentum > 0, or "
             "Adam/AdamW/Nadam), else ValueError; plain SGD (momentum 0) is now accepted"),
]
