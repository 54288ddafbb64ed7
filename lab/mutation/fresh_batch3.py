"""A third fresh batch of planted bugs (an independent reviewer's, chosen from the user
docs and the code, not from the tests), in the format of lab/mutation/mutants.py: each
one breaks a documented, user-visible behaviour with a one-line (or few-line) change,
with the tests that should guard it (the node ids docs/claims.md lists for the
promise, plus the whole modules that plausibly guard the area where the row looks
weak). None repeats a behaviour planted in mutants.py, fresh_batch.py or
fresh_batch2.py."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh3-long-name-cut-mid-character", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;",
                 "while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0xC0) --n;")],
         tests=["tests/test_fuzz.py::test_long_names_in_engine_errors",
                "tests/test_fuzz.py", "tests/test_bad_input.py"],
         bug="faults.md/api.md: names are any str, and long names are shortened in "
             "messages; the shortening now backs up over lead bytes instead of "
             "continuation bytes, so a long non-ASCII name is cut in the middle of a "
             "UTF-8 character and the engine's error text is no longer valid UTF-8"),
    dict(id="fresh3-default-group-size-one-for-one-rank", file="cpp_ops/engine/rounds/group_schedule.cc",
         edits=[("  return std::max(2, s);\n", "  return s;\n")],
         tests=["tests/test_schedule.py::test_default_group_size_is_smallest_power_of_two_above_sqrt",
                "tests/test_schedule.py", "tests/test_api_surface.py", "tests/test_fuzz.py"],
         bug="api.md/semantics.md: default_group_size(P) is the smallest power of two >= "
             "sqrt(P), AT LEAST 2; for P = 1 it is now 1, so groups(1) and every "
             "single-rank op call at init()'s default group_size are refused "
             "('group_size must be an integer >= 2')"),
    dict(id="fresh3-stall-warning-never-repeats", file="cpp_ops/engine/health/stall_inspector.cc",
         edits=[("if (e.warned.time_since_epoch().count() != 0 && now - e.warned < every) continue;",
                 "if (e.warned.time_since_epoch().count() != 0) continue;")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_stall_reports.py::test_a_late_round0_registration_is_reported_by_the_registrar",
                "tests/test_faults.py", "tests/test_stall_reports.py"],
         bug="faults.md/design.md: after WAGMA_STALL_WARNING_S the inspector prints which "
             "ranks have not entered the round 'and repeats while the stall lasts'; it now "
             "warns once per round and then stays silent however long the stall lasts"),
    dict(id="fresh3-stats-staleness-max-is-the-last", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("st.staleness_max = std::max(st.staleness_max, staleness);",
                 "st.staleness_max = staleness;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_observability.py", "tests/test_global_rounds.py",
                "tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
         bug="faults.md: stats()'s staleness_max is how many rounds old the passive joins' "
             "values were at most; each stream's value is now the LAST passive join's "
             "staleness (it can go down)"),
    dict(id="fresh3-timeline-generation-2-overwrites-generation-1",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("if (generation > 1 && !s.timeline_path.empty()) {",
                 "if (generation > 2 && !s.timeline_path.empty()) {")],
         tests=["tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py", "tests/test_timeline_format.py"],
         bug="elastic.md: with WAGMA_TIMELINE each member set's engine writes its own trace "
             "(trace.gen2.<rank>.json, ...); the second member set now reopens (truncates) "
             "the first one's trace.<rank>.json, losing generation 1's events and its "
             "membership_change file"),

    # --- horovod_wagma/common ---------------------------------------------------------
    dict(id="fresh3-override-drops-false-knobs", file="horovod_wagma/common/op/config.py",
         edits=[("changes = {k: v for k, v in knobs.items() if v is not None}",
                 "changes = {k: v for k, v in knobs.items() if v}")],
         tests=["tests/test_straggler.py::test_without_wait_avoidance_partners_wait",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_optimizer_core.py::test_knob_defaults_and_global_rounds_resolution",
                "tests/test_optimizer_core.py", "tests/test_fuzz.py", "tests/test_bad_input.py",
                "tests/test_straggler.py"],
         bug="api.md: the per-call knobs override init()'s defaults ('None keeps them'); "
             "a falsy override is now dropped too, so wait_avoiding=False (per call or an "
             "optimizer's) and max_staleness=0 silently keep init()'s True / sync_period"),
    dict(id="fresh3-drift-correction-one-refused", file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[("if self.drift_correction is not None and not 0.0 <= self.drift_correction <= 1.0:",
                 "if self.drift_correction is not None and not 0.0 <= self.drift_correction < 1.0:")],
         tests=["tests/test_optimizer_core.py::test_drift_correction_default_follows_the_wrapped_optimizer",
                "tests/test_optimizer_core.py::test_a_given_drift_correction_needs_on_sync",
                "tests/test_optimizer.py::test_bad_arguments", "tests/test_optimizer_core.py",
                "tests/test_api_surface.py"],
         bug="api.md: drift_correction is a float in [0, 1]; alpha = 1.0 (the upper bound, "
             "the variate's fastest setting) is now a ValueError "
             "'drift_correction must be in [0, 1], got 1.0'"),
    dict(id="fresh3-optimizer-ignores-init-group-size", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[("self._default_group = knobs.group_size is None and basics.config.group_size is None",
                 "self._default_group = knobs.group_size is None")],
         tests=["tests/test_optimizer_core.py::test_init_defaults_fill_the_knobs_left_at_none",
                "tests/test_optimizer_core.py::test_default_group_size_is_the_optimizers_and_follows_the_member_set",
                "tests/test_optimizer_core.py", "tests/test_optimizer.py"],
         bug="api.md: an optimizer's group_size=None takes init()'s if init() was given "
             "one; init(group_size=4) is now ignored and the optimizers use their own "
             "min(P, max(8, ...)) groups"),
    dict(id="fresh3-membership-additions-not-recorded", file="horovod_wagma/common/elastic/membership.py",
         edits=[("if previous_gen > 0 and (lost or added):",
                 "if previous_gen > 0 and lost:")],
         tests=["tests/test_elastic.py::test_host_added_starts_from_the_survivors_average",
                "tests/test_membership.py", "tests/test_elastic.py"],
         bug="elastic.md/api.md: membership_changes() lists this rank's changes with the "
             "ranks lost AND added; a change that only added hosts is no longer recorded "
             "(and the new member set's timeline gets no membership_change event)"),
    dict(id="fresh3-predivide-factor-above-one-silent",
         file="horovod_wagma/common/optimizer/horovod_arguments.py",
         edits=[("if gradient_predivide_factor != 1.0:",
                 "if gradient_predivide_factor < 1.0:")],
         tests=["tests/test_optimizer.py::test_bad_arguments", "tests/test_api_surface.py",
                "tests/test_optimizer_core.py"],
         bug="api.md: gradient_predivide_factor != 1 is a no-op that WARNS; a factor above 1 "
             "(the usual value, e.g. 2.0) is now silently ignored, no warning"),

    # --- horovod_wagma/torch ----------------------------------------------------------
    dict(id="fresh3-torch-sampler-checks-last-epochs-shares",
         file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("if len(set(shares)) > 1 and synchronous:",
                 "if len(set(self.shares)) > 1 and synchronous:")],
         tests=["tests/test_balanced_sampler.py::test_horovods_optimizer_with_unequal_shares_is_a_clear_error",
                "tests/test_balanced_sampler.py"],
         bug="api.md: under Horovod's DistributedOptimizer a set_epoch that WOULD give "
             "unequal shares raises a ValueError on every rank; the check now looks at the "
             "previous epoch's shares, so the first unequal epoch is dealt silently (and "
             "Horovod's per-step allreduce then hangs at the short rank's end)"),
    dict(id="fresh3-torch-qgm-multiplies-by-lr",
         file="horovod_wagma/torch/quasi_global_momentum.py",
         edits=[("torch._foreach_mul_(d, (1.0 - beta) / lr)",
                 "torch._foreach_mul_(d, (1.0 - beta) * lr)")],
         tests=["tests/test_quasi_global.py::test_torch_matches_exact_simulation_of_all_ranks",
                "tests/test_quasi_global.py::test_torch_fixed_point_is_heavy_balls",
                "tests/test_quasi_global.py"],
         bug="semantics.md: quasi_global rebuilds m = beta m_old + (1 - beta) (x_before - "
             "x_after) / lr; the model's change is now multiplied by lr instead of divided "
             "(lr^2 times too small a buffer: the momentum nearly vanishes)"),
    dict(id="fresh3-torch-named-parameters-partial-accepted",
         file="horovod_wagma/torch/named_parameters.py",
         edits=[("if any(id(p) not in named_ids for p in params):",
                 "if all(id(p) not in named_ids for p in params):")],
         tests=["tests/test_optimizer.py::test_bad_arguments", "tests/test_optimizer_core.py",
                "tests/test_api_surface.py"],
         bug="api.md: named_parameters is checked as Horovod does, covering EVERY "
             "parameter; a list that names only some of the optimizer's parameters is now "
             "accepted (only one naming none of them is refused)"),
    dict(id="fresh3-torch-noncontiguous-output-not-staged", file="horovod_wagma/torch/ops.py",
         edits=[("staged = not output.is_contiguous()",
                 "staged = not host_in.is_contiguous()")],
         tests=["tests/test_api.py::test_api_behaviour", "tests/test_fuzz.py::test_fuzz_public_api",
                "tests/test_api.py", "tests/test_fuzz.py"],
         bug="api.md: non-contiguous tensors are staged through contiguous ones; the "
             "in-place ops (group_allreduce_, group_allreduce_async_) on a non-contiguous "
             "tensor no longer stage the output and fail ('output must be contiguous')"),
    dict(id="fresh3-torch-model-streams-numbered-from-one", file="horovod_wagma/torch/optimizer.py",
         edits=[('wire, name=core.names.stream("model", i), **core.stream_knobs)))',
                 'wire, name=core.names.stream("model", i + 1), **core.stream_knobs)))')],
         tests=["tests/test_optimizer_core.py::test_status_is_a_read_only_snapshot_naming_the_streams",
                "tests/test_optimizer_core.py::test_stream_names_count_per_prefix_in_creation_order",
                "tests/test_optimizer.py", "tests/test_global_rounds.py",
                "tests/test_observability.py", "tests/test_optimizer_core.py"],
         bug="api.md: the PyTorch optimizer's streams are named wagma.optimizerN.model{i} "
             "and wagma_status().stream() names the one to pass to hvd.stats; the model "
             "buffers' streams are now model1, model2, ..., so hvd.stats(status.stream()) "
             "is a ValueError (no stream 'wagma.optimizerN.model0')"),

    # --- horovod_wagma/keras and tensorflow -------------------------------------------
    dict(id="fresh3-keras-metric-average-not-global", file="horovod_wagma/keras/callbacks.py",
         edits=[("        avg = ops.group_allreduce(values, name=f\"{self._name}.{','.join(keys)}\",\n"
                 "                                  **BLOCKING_GLOBAL)\n",
                 "        avg = ops.group_allreduce(values, name=f\"{self._name}.{','.join(keys)}\")\n")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_no_deadlock.py::test_keras_fit_with_horovod_callbacks_over_many_epochs",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit",
                "tests/test_keras.py"],
         bug="api.md: MetricAverageCallback averages the epoch's metrics over ALL ranks "
             "through a blocking global round; the stream now takes init()'s knobs, so only "
             "the first epoch (round 0) is global and later epochs average within a "
             "wait-avoiding group (with stale published values from absent members)"),
    dict(id="fresh3-keras-sequence-dead-band-ignored",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("shares = proportional_shares(self.total_size, throughputs, self.min_share,\n"
                 "                                         self.dead_band)",
                 "shares = proportional_shares(self.total_size, throughputs, self.min_share)")],
         tests=["tests/test_balanced_sampler.py::test_dead_band_gives_same_speed_ranks_equal_shares",
                "tests/test_balanced_sampler.py::test_keras_balanced_sequence_keeps_the_floor_for_a_rank_measured_very_slow",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit",
                "tests/test_balanced_sampler.py", "tests/test_api_surface.py"],
         bug="api.md: BalancedSequence takes the sampler's dead_band (throughputs within "
             "dead_band of their median count as equal, default 0.1); the knob is now "
             "silently ignored, so same-speed ranks get shares that follow measurement noise"),
    dict(id="fresh3-keras-qgm-velocity-sign",
         file="horovod_wagma/keras/quasi_global_momentum.py",
         edits=[("v.assign(beta * v_old + (1 - beta) * (tf.identity(x) - x_old))",
                 "v.assign(beta * v_old + (1 - beta) * (x_old - tf.identity(x)))")],
         tests=["tests/test_quasi_global.py::test_keras_rebuilds_velocity_in_fit_and_eager",
                "tests/test_quasi_global.py", "tests/test_keras.py"],
         bug="api.md/semantics.md: Keras 'quasi_global' rebuilds SGD's velocity from the "
             "averaged model's change (v = beta v_old + (1 - beta)(x_after - x_before), "
             "Keras's velocity carrying -lr); the change now enters with torch's sign, so "
             "the velocity points against the model's motion"),
    dict(id="fresh3-tf-return-round-swapped", file="horovod_wagma/tensorflow/ops.py",
         edits=[("return (result, served) if return_round else result",
                 "return (served, result) if return_round else result")],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_keras.py::test_eager_gradient_tape", "tests/test_keras.py",
                "tests/test_global_rounds.py"],
         bug="api.md: TensorFlow group_allreduce(..., return_round=True) returns (result, "
             "round); it now returns (round, result) (the Keras optimizer, which reads the "
             "served round this way, then unpacks the round scalar into the model)"),
    dict(id="fresh3-tf-async-bfloat16-returns-raw-bits", file="horovod_wagma/tensorflow/ops.py",
         edits=[("handle._result = tf.bitcast(out, tf.bfloat16) if handle._dtype == tf.bfloat16 else out",
                 "handle._result = out")],
         tests=["tests/test_fuzz.py::test_fuzz_public_api", "tests/test_fuzz.py",
                "tests/test_gossip.py", "tests/test_api_surface.py", "tests/test_bad_input.py"],
         bug="README/api.md: bfloat16 is supported and TensorFlow synchronize(handle) returns "
             "the result as a tf.Tensor; for a bfloat16 group_allreduce_async it now returns "
             "the raw uint16 bits the engine wrote, not a bfloat16 tensor"),
]
