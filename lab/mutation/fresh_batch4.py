"""A fourth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md) and the
code, but not the tests; written 2026-12-02. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the node ids docs/claims.md lists
for the promise, plus a whole module or a further node where the row looks weak).
None repeats a behaviour planted in mutants.py, fresh_batch.py, fresh_batch2.py,
fresh_batch3.py or fresh_survivors.py."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh4-stall-warning-names-the-waiting-ranks",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("      if (!stall.waiting.count(m)) missing.push_back(m);",
                 "      if (stall.waiting.count(m)) missing.push_back(m);")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_faults.py"],
         bug="faults.md: after WAGMA_STALL_WARNING_S the round's inspector 'prints which "
             "ranks have not entered it', and the timeout error ends 'ranks that have not "
             "entered it: [2]'; the list is now built from the ranks that DO wait in the "
             "round, so the warning and the stall note carried into the error name the "
             "healthy waiting ranks and never the stuck one"),
    dict(id="fresh4-registration-stall-names-every-member",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[('RankList(missing) + " to call it (registered: "',
                 'RankList(p.members) + " to call it (registered: "')],
         tests=["tests/test_stall_reports.py::test_a_late_round0_registration_is_reported_by_the_registrar",
                "tests/test_stall_reports.py"],
         bug="faults.md: round-0 registrations are 'inspected the same way' (the registrar "
             "names the ranks that have not called the stream and the registered ones); "
             "the warning and the WAGMA_STALL_TIMEOUT_S rejection now say the round 'has "
             "waited for ranks [0, 1, 2, 3]' (every member, the registered ones included) "
             "instead of the missing rank"),
    dict(id="fresh4-averaging-mismatch-names-one-value", file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("      << AveragingName(o.config.averaging);",
                 "      << AveragingName(config.averaging);")],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_bad_input.py", "tests/test_fuzz.py"],
         bug="semantics.md/faults.md: a round-0 mismatch is an error on every rank 'naming "
             "both values'; an averaging mismatch now prints this rank's rule twice "
             "('rank 0 has averaging fresh, rank 2 has averaging fresh'), so the other "
             "rank's value is never named"),
    dict(id="fresh4-activations-sent-counts-rounds", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    streams_[stream].activations_sent += static_cast<int64_t>(to.size());",
                 "    streams_[stream].activations_sent += 1;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_observability.py"],
         bug="faults.md: stats()'s activations_sent is the 'activation messages this rank "
             "sent'; each stream now counts one per activated round whatever the number of "
             "peers told (the same only in groups of two; a global round at P = 8 sends 7)"),
    dict(id="fresh4-kept-ahead-counts-every-passive-value",
         file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("  if (stale_in_rounds) ++st.rounds_kept_ahead;",
                 "  ++st.rounds_kept_ahead;")],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish"],
         bug="faults.md/semantics.md: rounds_kept_ahead counts the 'values old in rounds "
             "that counted, because their application was not behind in steps'; it now "
             "counts every passive value that entered the average, fresh ones included "
             "(it equals the number of passive contributions)"),
    dict(id="fresh4-solo-round-passed-with-one-served-beyond",
         file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("  if (passed_solo && served < 2 && !failed) last_served = first - 1;",
                 "  if (passed_solo && served < 1 && !failed) last_served = first - 1;")],
         tests=["tests/test_optimizer.py::test_wait_avoiding_global_rounds_lockstep_equals_blocking",
                "tests/test_global_rounds.py::test_a_k_times_slower_rank_enters_about_every_kth_round",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="semantics.md: the skip passes over a round that leaves the rank alone in its "
             "group 'only when two or more served rounds lie beyond, so that a peer one "
             "round ahead in lockstep never makes an application skip'; one served round "
             "beyond is now enough, so where P is not a power of S an app in lockstep skips "
             "behind a peer one round ahead and its results leave the blocking mode's "
             "(caught by round_policy_test's TestSoloRoundsPassedOnlyWithTwoServedBeyond)"),

    # --- horovod_wagma/common ---------------------------------------------------------
    dict(id="fresh4-sync-period-4096-refused", file="horovod_wagma/common/op/config.py",
         edits=[("if not _is_int(sync_period) or not 1 <= sync_period <= MAX_SYNC_PERIOD:",
                 "if not _is_int(sync_period) or not 1 <= sync_period < MAX_SYNC_PERIOD:")],
         tests=["tests/test_bad_input.py::test_init_rejects_invalid_knobs",
                "tests/test_fuzz.py::test_config_accepts_exactly_the_valid_knobs",
                "tests/test_fuzz.py::test_sync_period_and_max_staleness_bounds_are_inclusive"],
         bug="api.md/faults.md: sync_period is '1 to 4096' ('1 <= sync_period <= 4096'); "
             "the upper bound is now exclusive: init(sync_period=4096), a per-call "
             "sync_period=4096 and an optimizer's are a ValueError whose own text still "
             "says 'in [1, 4096]'"),
    dict(id="fresh4-nul-inside-name-accepted", file="horovod_wagma/common/op/config.py",
         edits=[('if name is not None and "\\x00" in name:',
                 'if name is not None and name.startswith("\\x00"):')],
         tests=["tests/test_fuzz.py::test_fuzz_public_api", "tests/test_fuzz.py::test_stream_names",
                "tests/test_bad_input.py"],
         bug="api.md/faults.md: a name is 'a str without NUL' (else a ValueError naming the "
             "argument); only a leading NUL is refused now, so 'w\\x00a' and 'w\\x00b' "
             "reach the engine, which keeps names as C strings: both become stream 'w' and "
             "alias each other silently"),
    dict(id="fresh4-contribution-age-max-is-a-count", file="horovod_wagma/common/op/stats.py",
         edits=[('"contribution_age_max": max(ages) if ages else 0,',
                 '"contribution_age_max": max(ages.values()) if ages else 0,')],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_observability.py"],
         bug="faults.md/semantics.md: contribution_age_max is the largest age of the passive "
             "values that entered the average, 'never above max_staleness'; it is now the "
             "histogram's largest COUNT (how many joins had the commonest age), which "
             "exceeds max_staleness in any long run"),
    dict(id="fresh4-whole-world-group-process-set-refused",
         file="horovod_wagma/common/op/basics.py",
         edits=[("        if len(members) == hvd.size():\n"
                 "            return hvd.global_process_set\n", "")],
         tests=["tests/test_api.py::test_api_behaviour",
                "tests/test_init.py::test_every_phase_group_is_a_horovod_process_set",
                "tests/test_init.py::test_op_works_after_plain_hvd_init",
                "tests/test_init.py"],
         bug="api.md: group_process_set(phase) is this rank's group as a Horovod ProcessSet, "
             "and 'the whole world gives hvd.global_process_set'; a phase whose group is "
             "every rank (P <= S, e.g. P = 2) is now a WagmaError 'the WAGMA groups are not "
             "registered as Horovod process sets' even after horovod_wagma's init()"),
    dict(id="fresh4-init-ignores-max-staleness", file="horovod_wagma/common/op/basics.py",
         edits=[("        self.config = WagmaConfig(group_size, sync_period, averaging, wait_avoiding,\n"
                 "                                  global_rounds, max_staleness)",
                 "        self.config = WagmaConfig(group_size, sync_period, averaging, wait_avoiding,\n"
                 "                                  global_rounds)")],
         tests=["tests/test_bad_input.py::test_init_rejects_invalid_knobs",
                "tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_api_surface.py::test_init_defaults",
                "tests/test_optimizer_core.py::test_init_defaults_fill_the_knobs_left_at_none"],
         bug="api.md: init()'s knobs 'are the defaults of every stream', max_staleness among "
             "them (0 to 4096, checked); init(max_staleness=...) is now dropped: every "
             "stream left at None bounds staleness by sync_period instead, and an invalid "
             "init(max_staleness=5000) is no longer a ValueError"),
    dict(id="fresh4-sync-stream-not-blocking", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[('BLOCKING_GLOBAL = {"sync_period": 1, "global_rounds": "blocking"}',
                 'BLOCKING_GLOBAL = {"sync_period": 1}')],
         tests=["tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join",
                "tests/test_global_rounds.py::test_equal_steps_with_a_slow_rank_then_sync_does_not_hang",
                "tests/test_optimizer.py::test_models_identical_after_every_global_round",
                "tests/test_optimizer_core.py::test_global_stream_knobs"],
         bug="semantics.md/api.md: 'the optimizers' sync() stays a blocking global average' "
             "and 'afterwards all models are identical'; sync()'s streams now keep the "
             "optimizer's global_rounds ('wait_avoiding' by default), so from the second "
             "sync() on a late rank's engine joins with its published model and the ranks "
             "leave sync() with different models (Keras sync(variables) too)"),

    # --- PyTorch frontend -------------------------------------------------------------
    dict(id="fresh4-torch-sync-averages-never-state", file="horovod_wagma/torch/optimizer.py",
         edits=[('tensors = [t for bucket in self._bucketed(self._state_averaging != "never")',
                 'tensors = [t for bucket in self._bucketed(True)')],
         tests=["tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync",
                "tests/test_optimizer.py"],
         bug="api.md/semantics.md: sync() averages the model 'and state unless \"never\"', "
             "and with 'never' momentum and Adam moments stay local; the PyTorch sync() now "
             "averages the optimizer state in every mode, 'never' included"),
    dict(id="fresh4-torch-duties-wait-for-everyone", file="horovod_wagma/torch/optimizer.py",
         edits=[('            self._average_globally(self._sync_buffers, "sync")',
                 '            self._average_globally(self._sync_buffers, "sync", blocking=True)')],
         tests=["tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join",
                "tests/test_optimizer_core.py::test_served_round_and_duties_wait_avoiding",
                "tests/test_balanced_sampler.py::test_fast_ranks_take_more_steps_then_join",
                "tests/test_no_deadlock.py::test_a_held_back_rank_is_not_waited_for"],
         bug="semantics.md: the duties of global rounds (named_buffers, 'on_sync' state, "
             "drift) run 'through a stream of their own that waits for nobody either'; the "
             "PyTorch optimizer's 'sync' stream is now blocking, so with the default "
             "wait-avoiding global rounds every fast rank waits for the slowest at each "
             "global round's duties (and a lagging rank that ran fewer duties leaves the "
             "others waiting)"),
    dict(id="fresh4-torch-blocking-op-ignores-process-set", file="horovod_wagma/torch/ops.py",
         edits=[("group_allreduce_async(tensor, name, process_set=process_set,",
                 "group_allreduce_async(tensor, name, process_set=None,")],
         tests=["tests/test_api.py::test_op_on_disjoint_process_sets", "tests/test_api.py"],
         bug="api.md: process_set restricts a call's stream to that set's ranks ('groups are "
             "formed among its ranks'); the blocking group_allreduce no longer passes it on, "
             "so its stream spans every rank (disjoint sets' streams of one name collide "
             "and wait for ranks that never call them); the async and in-place forms still "
             "honour it"),
    dict(id="fresh4-torch-drift-accepts-sgd-without-momentum",
         file="horovod_wagma/torch/drift_correction.py",
         edits=[("            if beta <= 0 or damp >= 1:",
                 "            if beta < 0 or damp >= 1:")],
         tests=["tests/test_optimizer_core.py::test_drift_correction_default_follows_the_wrapped_optimizer",
                "tests/test_optimizer.py::test_bad_arguments",
                "tests/test_optimizer_core.py::test_a_given_drift_correction_needs_on_sync",
                "tests/test_optimizer_core.py"],
         bug="api.md: drift_correction=None is 0.25 only 'where the wrapped optimizer keeps a "
             "first moment (SGD with momentum, the Adam family)', and a given alpha 'raises "
             "ValueError ... without a first moment'; torch.optim.SGD with momentum=0 now "
             "counts as keeping one: a given alpha is accepted (and learns nothing) and "
             "None resolves to 0.25 instead of off"),
    dict(id="fresh4-torch-first-step-skips-round0-duties", file="horovod_wagma/torch/optimizer.py",
         edits=[("        self._served = -1  # the round that served the last step",
                 "        self._served = 0  # the round that served the last step")],
         tests=["tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync",
                "tests/test_optimizer.py::test_wait_avoiding_global_rounds_straggler_and_join",
                "tests/test_optimizer_core.py::test_status_is_a_read_only_snapshot_naming_the_streams",
                "tests/test_optimizer.py::test_models_identical_after_every_global_round"],
         bug="semantics.md/api.md: step 0 is global, and its duties (floating named_buffers, "
             "'on_sync' state) run when a served round since the last step was global; "
             "wagma_status().served_round is steps - 1 (-1 before the first step). The "
             "PyTorch optimizer now starts as if round 0 had been served, so with "
             "wait-avoiding global rounds step 0 runs no duties (BatchNorm statistics and "
             "momenta stay each rank's own until round tau - 1) and served_round reads 0 "
             "before any step"),

    # --- Keras / TensorFlow frontend --------------------------------------------------
    dict(id="fresh4-keras-steps-numbered-from-one", file="horovod_wagma/keras/optimizer.py",
         edits=[('step = w["round"].assign_add(1) - 1 - w["round_base"]',
                 'step = w["round"].assign_add(1) - w["round_base"]')],
         tests=["tests/test_keras.py::test_on_sync_averages_optimizer_state_at_global_rounds_and_sync",
                "tests/test_keras.py::test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds",
                "tests/test_keras.py"],
         bug="semantics.md: step k is round k of each buffer's stream, so step 0 and every "
             "tau-th step are global; the Keras optimizer now numbers its steps from 1, so "
             "with blocking global rounds the 'on_sync' state is averaged one step early "
             "(step tau - 2, never at step 0) and Compression.fp16 replaces the model at "
             "group rounds and only corrects it at global ones"),
    dict(id="fresh4-keras-state-averaged-every-step",
         file="horovod_wagma/keras/state_averaging.py",
         edits=[("        self._last_served.assign(served)\n", "")],
         tests=["tests/test_keras.py::test_on_sync_averages_optimizer_state_at_global_rounds_and_sync",
                "tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias",
                "tests/test_keras.py"],
         bug="api.md/semantics.md: Keras 'on_sync' averages SGD's velocities / Adam's moments "
             "'at the global rounds' duties' and they stay local at group rounds; the last "
             "served round is no longer recorded, so with wait-avoiding global rounds every "
             "step looks as if it passed round 0 and the state (and the drift stream) is "
             "averaged at every step"),
    dict(id="fresh4-tf-op-global-rounds-always-blocking", file="horovod_wagma/tensorflow/ops.py",
         edits=[("        global_rounds=global_rounds, max_staleness=max_staleness, members=members)",
                 "        global_rounds=0, max_staleness=max_staleness, members=members)")],
         tests=["tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_keras.py"],
         bug="api.md: the TensorFlow group_allreduce takes the 'same arguments and semantics "
             "as the PyTorch op', and the Keras optimizer's default global rounds are "
             "wait-avoiding; the kernel is now always given global_rounds='blocking', so "
             "global_rounds='wait_avoiding' is silently ignored in TensorFlow and Keras "
             "(fast ranks wait for a persistent straggler at every global round, and no "
             "round is ever skipped)"),
    dict(id="fresh4-keras-join-keeps-own-step-count", file="horovod_wagma/keras/optimizer.py",
         edits=[("        steps.assign(agreed)\n", "")],
         tests=["tests/test_keras.py::test_uneven_batches_with_join",
                "tests/test_keras.py::test_eager_gradient_tape",
                "tests/test_keras.py"],
         bug="api.md/faults.md: Keras join() is 'as in PyTorch': with blocking global rounds "
             "every rank's step count becomes the furthest any rank reached; the agreed "
             "count is now computed and thrown away, so after join() the ranks' step "
             "counts (wagma_status().steps) differ and their global-round duties and fp16 "
             "rule fall on different steps if training goes on"),
    dict(id="fresh4-tf-poll-false-after-synchronize", file="horovod_wagma/tensorflow/ops.py",
         edits=[("    return handle._result is not None or engine_lib.poll(handle._id)",
                 "    return engine_lib.poll(handle._id)")],
         tests=["tests/test_api.py::test_api_behaviour", "tests/test_api_surface.py",
                "tests/test_bad_input.py"],
         bug="api.md: TensorFlow poll(handle) is True when synchronize will not block; once "
             "a handle is synchronized the engine has forgotten its id, so poll() of a "
             "synchronized handle now returns False (the engine's 'unknown handle'), though "
             "synchronize returns its result at once"),

    # --- elastic and samplers ---------------------------------------------------------
    dict(id="fresh4-torch-sampler-dead-band-ignored",
         file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("        shares = proportional_shares(self.total_size, throughputs, self.min_share,\n"
                 "                                     self.dead_band)",
                 "        shares = proportional_shares(self.total_size, throughputs, self.min_share)")],
         tests=["tests/test_balanced_sampler.py::test_dead_band_gives_same_speed_ranks_equal_shares",
                "tests/test_balanced_sampler.py"],
         bug="api.md: BalancedDistributedSampler(dead_band=0.1): 'throughputs within dead_band "
             "of their median count as equal'; the sampler no longer passes its dead_band "
             "on (the share function's default 0 applies), so same-speed ranks get shares "
             "that follow a few percent of measurement noise and wait at the epoch end"),
    dict(id="fresh4-torch-elastic-sync-leaves-buffers-out", file="horovod_wagma/torch/elastic.py",
         edits=[("        tensors = [p.data for p in self.model.parameters()] + [\n"
                 "            b for b in self.model.buffers() if torch.is_floating_point(b)]",
                 "        tensors = [p.data for p in self.model.parameters()]")],
         tests=["tests/test_elastic.py::test_host_added_starts_from_the_survivors_average",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic_state.py"],
         bug="README/api.md/elastic.md: after a membership change every rank starts from the "
             "survivors' average (joiners weigh 0); WagmaState.sync() now averages the "
             "parameters only: floating buffers (BatchNorm statistics) stay each rank's own, "
             "and joiners keep their fresh, untrained statistics"),
]
