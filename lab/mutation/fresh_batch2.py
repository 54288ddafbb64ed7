"""A second fresh batch of planted bugs (an independent reviewer's), in the format of
lab/mutation/mutants.py: each one breaks a documented, user-visible behaviour (README.md,
docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md) with a one-line or
few-line change, chosen from the docs and the code, not from the tests. `tests` names the
test node ids that docs/claims.md's row for the promise names (C++ unit tests that the
row names are mentioned in `bug`, since check.py runs pytest ids)."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh2-mismatch-sync-period-named-group-size", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[('    head("sync_period");\n',
                 '    head("group_size");\n')],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs"],
         bug="faults.md/semantics.md: a round-0 knob mismatch is an error naming both values "
             "of THAT knob; a sync_period mismatch now reads 'group_size mismatch for stream "
             "...: rank 0 has group_size 10, ...' (also registration_book_test.cc::"
             "TestKnobMismatchNamesTheKnob)"),
    dict(id="fresh2-group-round-phase-off-by-one", file="cpp_ops/engine/rounds/round_plan.h",
         edits=[("const int64_t k = round - 1 - round / sync_period;",
                 "const int64_t k = round - round / sync_period;")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="semantics.md: the k-th group round averages within this rank's group of phase "
             "k mod L of hvd.groups(P, S); the engine now uses phase k+1 mod L, so the groups "
             "the op averages over are not the printed schedule's (also round_policy_test.cc::"
             "TestRoundPlan)"),
    dict(id="fresh2-timeline-rank-after-extension", file="cpp_ops/engine/observe/timeline.cc",
         edits=[('return path.substr(0, dot) + "." + rank_text + path.substr(dot);',
                 'return path + "." + rank_text;')],
         tests=["tests/test_timeline_format.py::test_writer_output_is_valid_chrome_trace",
                "tests/test_timeline_format.py::test_rank_placeholder_and_backwards_clock",
                "tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="faults.md/api.md: WAGMA_TIMELINE=trace.json makes every rank write "
             "trace.<rank>.json; it now writes trace.json.<rank> (the rank after the "
             "extension), which `python -m horovod_wagma.timeline 'trace.*.json'` misses"),
    dict(id="fresh2-stall-timeout-names-group-round", file="cpp_ops/engine/health/stall_monitor.cc",
         edits=[('std::string(global ? "global" : "group") + " round "',
                 'std::string(global ? "group" : "global") + " round "')],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out"],
         bug="faults.md: with WAGMA_STALL_TIMEOUT_S the waiting ranks raise 'stalled: waited "
             "5.0 s ... in global round 4 of stream 'w''; the error now calls a global round "
             "a group round (and a group round a global one)"),
    dict(id="fresh2-stats-global-rounds-count-every-round", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    if (global) ++st.global_rounds;\n",
                 "    ++st.global_rounds;\n")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="faults.md: stats()'s global_rounds counts the GLOBAL rounds the application "
             "entered and collected; it now counts every round (equal to rounds)"),
    dict(id="fresh2-left-out-counted-as-contribution", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    ++engine_.rounds_left_out;\n    return;\n  }\n",
                 "    ++engine_.rounds_left_out;\n  }\n")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish"],
         bug="faults.md/semantics.md: rounds_kept_ahead counts old values that COUNTED, and "
             "contribution_age_* only passive values that entered the average (never above "
             "max_staleness); a left-out value is now also counted as kept ahead and in the "
             "age histogram, so contribution_age_max exceeds max_staleness"),

    # --- horovod_wagma/common ---------------------------------------------------------
    dict(id="fresh2-group-size-one-accepted", file="horovod_wagma/common/op/config.py",
         edits=[("or not 2 <= group_size <= MAX_GROUP_SIZE):",
                 "or not 1 <= group_size <= MAX_GROUP_SIZE):")],
         tests=["tests/test_bad_input.py::test_init_rejects_invalid_knobs",
                "tests/test_fuzz.py::test_config_accepts_exactly_the_valid_knobs"],
         bug="api.md/faults.md: group_size is an int >= 2 (ValueError naming it otherwise, "
             "before anything is enqueued); init(group_size=1) and group_size=1 per call are "
             "now accepted by the frontend"),
    dict(id="fresh2-wait-avoiding-global-without-wait-avoiding", file="horovod_wagma/common/op/config.py",
         edits=[('if self.global_rounds == "wait_avoiding" and not self.wait_avoiding:',
                 'if self.global_rounds == "wait_avoiding" and self.wait_avoiding is None:')],
         tests=["tests/test_bad_input.py::test_init_rejects_invalid_knobs",
                "tests/test_optimizer_core.py::test_wait_avoiding_global_rounds_need_wait_avoiding_groups"],
         bug="api.md: global_rounds='wait_avoiding' needs wait_avoiding=True (ValueError); "
             "init(wait_avoiding=False, global_rounds='wait_avoiding') and the optimizers with "
             "both given are now accepted"),
    dict(id="fresh2-drift-correction-with-always-accepted", file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[('if self.drift_correction and self.average_optimizer_state != "on_sync":',
                 'if self.drift_correction and self.average_optimizer_state not in ("on_sync", "always"):')],
         tests=["tests/test_optimizer_core.py::test_drift_correction_default_follows_the_wrapped_optimizer",
                "tests/test_optimizer.py::test_bad_arguments"],
         bug="api.md: a given drift_correction alpha raises ValueError with a state mode other "
             "than 'on_sync'; with average_optimizer_state='always' it is now accepted and "
             "silently learns nothing (no state round runs the drift stream)"),
    dict(id="fresh2-set-epoch-mismatch-only-against-rank0", file="horovod_wagma/common/balance/throughput_exchange.py",
         edits=[("if len(set(epochs)) != 1:",
                 "if epochs[0] != epoch:")],
         tests=["tests/test_balanced_sampler.py::test_set_epoch_at_different_epochs_is_a_clear_error"],
         bug="api.md: ranks that call set_epoch at different epoch counts get a ValueError "
             "(on every rank); each rank now compares only with rank 0's epoch, so rank 0 "
             "(and ranks that agree with it) go on with shares cut from mixed epochs"),
    dict(id="fresh2-dead-band-around-the-mean", file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2.0",
                 "median = sum(ordered) / n")],
         tests=["tests/test_balanced_sampler.py::test_dead_band_gives_same_speed_ranks_equal_shares"],
         bug="api.md: throughputs within dead_band of their MEDIAN count as equal; the band is "
             "now centred on the mean, which one slow rank drags down, so same-speed ranks "
             "fall outside it and get unequal shares"),
    dict(id="fresh2-quasi-global-accepts-zero-momentum", file="horovod_wagma/common/optimizer/quasi_global.py",
         edits=[("if is_sgd and momenta and all(float(m) > 0 for m in momenta):",
                 "if is_sgd and momenta and all(float(m) >= 0 for m in momenta):")],
         tests=["tests/test_quasi_global.py::test_torch_refuses_other_optimizers",
                "tests/test_optimizer.py::test_bad_arguments"],
         bug="api.md: average_optimizer_state='quasi_global' needs SGD with momentum > 0, else "
             "ValueError (PyTorch and Keras); SGD with momentum=0 is now accepted"),

    # --- horovod_wagma/torch ----------------------------------------------------------
    dict(id="fresh2-torch-sync-skips-buffers", file="horovod_wagma/torch/optimizer.py",
         edits=[("for t in bucket] + list(self._named_buffers)",
                 "for t in bucket]")],
         tests=["tests/test_optimizer.py::test_models_identical_after_every_global_round",
                "tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join"],
         bug="api.md/semantics.md: sync() is a blocking global average of the model WITH its "
             "named_buffers (BatchNorm statistics); the buffers are now left out, so ranks "
             "evaluate different BatchNorm statistics after sync()"),
    dict(id="fresh2-torch-fp16-ignored-for-float32", file="horovod_wagma/torch/optimizer.py",
         edits=[("flat.dtype == torch.float32 else flat",
                 "flat.dtype == torch.float16 else flat")],
         tests=["tests/test_optimizer.py::test_fp16_compression_halves_traffic",
                "tests/test_optimizer.py::test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds"],
         bug="api.md: compression=hvd.Compression.fp16 sends fp16; float32 models are now "
             "sent in float32 (the knob is silently ignored, traffic not halved)"),
    dict(id="fresh2-torch-horovod-optimizer-not-recognised", file="horovod_wagma/torch/step_hooks.py",
         edits=[('synchronous = hasattr(optimizer, "_allreduce_grad_async")',
                 'synchronous = hasattr(optimizer, "_allreduce_grad")')],
         tests=["tests/test_balanced_sampler.py::test_horovods_optimizer_with_unequal_shares_is_a_clear_error",
                "tests/test_balanced_sampler.py::test_lbbsp_equal_steps_batches_follow_speeds_and_weights_give_the_mean_gradient",
                "tests/test_balanced_sampler.py::test_step_clock_counts_own_work_and_takes_out_waits"],
         bug="api.md: the throughput leaves out Horovod's DistributedOptimizer's whole step and "
             "its synchronize(), and a set_epoch giving it unequal shares is a ValueError; "
             "Horovod's optimizer is no longer recognised, so its allreduce waits count as "
             "compute and unequal shares are dealt to it (ranks hang in an allreduce)"),
    dict(id="fresh2-torch-bfloat16-refused", file="horovod_wagma/torch/ops.py",
         edits=[("_SUPPORTED_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)",
                 "_SUPPORTED_DTYPES = (torch.float32, torch.float64, torch.float16)")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_fuzz.py::test_fuzz_public_api"],
         bug="README/api.md: dtypes float32, float64, float16 and bfloat16 are supported; a "
             "bfloat16 torch tensor now raises TypeError"),
    dict(id="fresh2-torch-sampler-shuffle-ignored", file="horovod_wagma/torch/epoch_shares.py",
         edits=[("        if self.shuffle:\n",
                 "        if self.shuffle is not None:\n")],
         tests=["tests/test_balanced_sampler.py::test_drop_last_without_shuffle",
                "tests/test_balanced_sampler.py::test_every_sample_exactly_once_per_epoch"],
         bug="api.md: BalancedDistributedSampler/BalancedBatchSampler take DistributedSampler's "
             "arguments; shuffle=False is now ignored (the epoch is always permuted, not in "
             "dataset order)"),
    dict(id="fresh2-torch-elastic-average-divides-by-all", file="horovod_wagma/torch/elastic.py",
         edits=[('name="wagma.elastic.average") / float(survivors)',
                 'name="wagma.elastic.average") / float(_hvd.size())')],
         tests=["tests/test_elastic.py::test_host_added_starts_from_the_survivors_average"],
         bug="README/api.md/elastic.md: after hosts are added every rank starts from the "
             "survivors' average (joiners weigh 0); the weighted sum is now divided by every "
             "rank, joiners included, so the model shrinks by survivors/P"),

    # --- horovod_wagma/keras (and tensorflow) -----------------------------------------
    dict(id="fresh2-keras-sync-callback-trainable-only", file="horovod_wagma/keras/callbacks.py",
         edits=[("average_globally(self.model.variables,",
                 "average_globally(self.model.trainable_variables,")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
         bug="README/api.md: WagmaGlobalSyncCallback averages ALL model variables at every "
             "epoch end and train end; non-trainable ones (BatchNorm moving statistics) are "
             "now left out, so evaluation sees different models"),
    dict(id="fresh2-keras-always-state-accepted", file="horovod_wagma/keras/optimizer.py",
         edits=[('STATE_MODES = ("never", "on_sync", "quasi_global")',
                 'STATE_MODES = ("never", "on_sync", "always", "quasi_global")')],
         tests=["tests/test_quasi_global.py::test_keras_rebuilds_velocity_in_fit_and_eager",
                "tests/test_optimizer_core.py::test_from_arguments_takes_the_fields_and_the_frameworks_state_modes"],
         bug="api.md/semantics.md: average_optimizer_state='always' is PyTorch only (Keras: "
             "ValueError); the Keras optimizer now accepts it and averages no state at all"),
    dict(id="fresh2-keras-stats-wait-in-ms", file="horovod_wagma/keras/callbacks.py",
         edits=[('logs["wagma_wait_s"] = d["call_wait_us"] / 1e6',
                 'logs["wagma_wait_s"] = d["call_wait_us"] / 1e3')],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
         bug="api.md/faults.md: WagmaStatsCallback's wagma_wait_s is seconds; it now reports "
             "milliseconds (1000x too large)"),
    dict(id="fresh2-keras-sequence-drop-last-ignored", file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("self.total_size = epoch_total(self.n, num_replicas, drop_last)",
                 "self.total_size = epoch_total(self.n, num_replicas, False)")],
         tests=["tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit"],
         bug="api.md: BalancedSequence's drop_last is torch DistributedSampler's (the epoch "
             "truncated to a multiple of the ranks); it is now ignored and the epoch padded "
             "with repeated samples"),
    dict(id="fresh2-keras-drift-refuses-nadam", file="horovod_wagma/keras/drift_correction.py",
         edits=[('_ADAM_FAMILY = ("Adam", "AdamW", "Nadam")',
                 '_ADAM_FAMILY = ("Adam", "AdamW")')],
         tests=["tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias",
                "tests/test_keras.py"],
         bug="api.md: Keras drift_correction's first moment is SGD's velocity or the m of "
             "Adam, AdamW, Nadam; Nadam with a given drift_correction is now a ValueError"),
    dict(id="fresh2-tf-async-handle-round-unset", file="horovod_wagma/tensorflow/ops.py",
         edits=[("        handle.round = engine_lib.wait(handle._id)\n",
                 "        engine_lib.wait(handle._id)\n")],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="api.md: TensorFlow synchronize(handle) returns a tf.Tensor and handle.round is "
             "then set (the round that served the call); it now stays None"),
]
