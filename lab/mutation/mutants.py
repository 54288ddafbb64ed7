"""The mutants of `make mutation-check` (lab/mutation/check.py): one planted bug each,
in the round rules, the reduction, the optimizers' step and global-round logic, the
elastic state and the knob checks, with the tests expected to catch it.

Each mutant: `id`; `file` (from the repository root); `edits`, (original, replacement)
pairs, each original occurring exactly once in the file; `tests`, pytest node ids (every
parametrization runs, unless options follow: "-k expr") that should fail on it; `bug`, what the
change breaks. A rule that changes adds its mutant here (docs/mutation.md).
"""

GLOBAL_ROUNDS = "tests/test_global_rounds.py"
LEFT_OUT = GLOBAL_ROUNDS + "::test_a_left_out_member_and_the_others_get_exact_values"
STRAGGLER = GLOBAL_ROUNDS + "::test_fast_ranks_do_not_wait_for_a_persistent_straggler"
HELD = GLOBAL_ROUNDS + "::test_held_results_stay_bounded_over_thousands_of_rounds"
STALE_JOIN = "tests/test_stale_join.py"
GOSSIP_P3 = "tests/test_gossip.py::test_gossip_matches_exact_trajectory -k torch-3-engine"
DRIFT = "tests/test_no_deadlock.py::test_no_rank_runs_off_after_a_collective_that_a_" \
        "persistent_straggler_was_late_for"
BAD_INPUT = "tests/test_bad_input.py::test_mismatches_and_invalid_knobs"
PROCESS_SETS = "tests/test_api.py::test_op_on_disjoint_process_sets"
OPTIMIZER = "tests/test_optimizer.py"
OPTIMIZER_CORE = "tests/test_optimizer_core.py"
FP16 = OPTIMIZER + "::test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds"
HOST_KILLED = "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback"
HOST_ADDED = "tests/test_elastic.py::test_host_added_starts_from_the_survivors_average"
SAMPLER = "tests/test_balanced_sampler.py"
KERAS = "tests/test_keras.py"
S = "tests/test_api_surface.py"

POLICY = "cpp_ops/engine/rounds/round_policy.cc"
RULE = "cpp_ops/engine/rounds/averaging_rule.cc"
ROUNDS = "cpp_ops/engine/core/engine_rounds.cc"
DATA = "cpp_ops/engine/reduce/data_type.cc"
SPEC = "cpp_ops/engine/core/stream_spec.cc"
BOOK = "cpp_ops/engine/core/registration_book.cc"

MUTANTS = [
    # --- round rules (engine) ----------------------------------------------------------
    dict(id="stale-boundary", file=POLICY,
         edits=[("return round - last_app_round > max_staleness;",
                 "return round - last_app_round >= max_staleness;")],
         tests=[LEFT_OUT],
         bug="a value exactly max_staleness rounds old becomes a candidate for leaving out"),
    dict(id="forget-rounds-a-lagging-app-skips", file=POLICY,
         edits=[("return app_done ? newest_dropped - keep : next_app_round;",
                 "return std::max(next_app_round, newest_dropped - keep);")],
         tests=["tests/test_no_deadlock.py::test_apps_held_back_skip_every_round_served_"
                "meanwhile"],
         bug="an app that lagged past 36 served rounds enters a forgotten one afresh and "
             "waits there for peers that served it long ago (a hang)"),
    dict(id="never-left-out", file=POLICY,
         edits=[("const bool in = code >= 0 || out.most_steps - StepsOfInclusion(code) <= "
                 "max_staleness;", "const bool in = true;")],
         tests=[LEFT_OUT],
         bug="values of any age enter the average (no staleness bound)"),
    dict(id="left-out-in-rounds-alone", file=POLICY,
         edits=[("const bool in = code >= 0 || out.most_steps - StepsOfInclusion(code) <= "
                 "max_staleness;", "const bool in = code >= 0;")],
         tests=["tests/test_no_deadlock.py::test_a_lagging_rank_keeps_averaging_while_the_"
                "others_wait_in_a_collective"],
         bug="a value old in rounds but ahead in steps is left out (the slow rank then "
             "averages alone)"),
    dict(id="fresh-left-out-as-correction", file=RULE,
         edits=[("  if (!self_included) return OutputFormula::kPaper;\n", "")],
         tests=[LEFT_OUT],
         bug="'fresh', left out: m + (x - c) / g, as if c were in the mean"),
    dict(id="passive-global-takes-plain-mean", file=POLICY,
         edits=[("if (f.global && (f.contributed_x || !f.wait_avoiding_global)) return "
                 "OutputFormula::kMean;", "if (f.global) return OutputFormula::kMean;")],
         tests=[LEFT_OUT],
         bug="a wait-avoiding global round served passively drops the app's own progress"),
    dict(id="local-as-plain-mean", file=RULE,
         edits=[("  return contributed_x ? OutputFormula::kMean : OutputFormula::kLocalCorrection;",
                 "  return OutputFormula::kMean;")],
         tests=[LEFT_OUT, STALE_JOIN],
         bug="'local' takes the plain group mean, dropping the member's own progress"),
    dict(id="local-never-falls-back", file=RULE,
         edits=[("return results_since_join > 1 ? Averaging::kFresh : Averaging::kLocal;",
                 "return Averaging::kLocal;")],
         tests=[DRIFT],
         bug="'local' keeps x - base past several results applied since the join"),
    dict(id="never-skip", file=POLICY,
         edits=[("choice.round = std::max(first, last_served);  // the newest served "
                 "round's result", "choice.round = first;")],
         tests=[STRAGGLER],
         bug="a lagging app never skips the rounds its engine served"),
    dict(id="hold-every-result", file=POLICY,
         edits=[("if (wait_avoiding_global && !failed) return "
                 "CompletedRoundFate::kSupersedeOlder;",
                 "if (wait_avoiding_global && !failed) return CompletedRoundFate::kHold;")],
         tests=[HELD],
         bug="every served result is held for a lagging app (memory grows)"),
    # --- the reduction and the output formulas (engine) ---------------------------------
    dict(id="divide-by-group", file=ROUNDS,
         edits=[("const int g = rs.included;",
                 "const int g = static_cast<int>(rs.members.size());")],
         tests=[LEFT_OUT],
         bug="the output formulas divide by every member, not the ones included"),
    dict(id="mean-over-left-out", file="cpp_ops/engine/reduce/group_reduction.cc",
         edits=[("if (inclusion.included[j]) kept.push_back((*srcs)[j]);",
                 "kept.push_back((*srcs)[j]);")],
         tests=[LEFT_OUT],
         bug="left-out values are summed into the mean"),
    dict(id="fresh-undivided", file=DATA,
         edits=[("    for (size_t i = 0; i < len; ++i) ax[i] -= ac[i];\n"
                 "    DivideInto(ax, len, divisor, ax);",
                 "    for (size_t i = 0; i < len; ++i) ax[i] -= ac[i];")],
         tests=[STALE_JOIN],
         bug="'fresh': m + (x - c) instead of m + (x - c) / g"),
    dict(id="paper-divisor", file=DATA,
         edits=[("DivideInto(am, len, g + 1, am);", "DivideInto(am, len, g, am);")],
         tests=[STALE_JOIN, GOSSIP_P3],
         bug="'paper': (s + x) / g instead of / (g + 1)"),
    dict(id="third-source-dropped", file=DATA,
         edits=[("    for (int k = 2; k < num_srcs; ++k) {\n      const A* sk",
                 "    for (int k = 3; k < num_srcs; ++k) {\n      const A* sk")],
         tests=[GOSSIP_P3],
         bug="float32/float64 means of three or more members skip the third"),
    dict(id="local-base-sign", file=ROUNDS,
         edits=[("AddScaled(s.spec.dtype, x, -1, n, r->local_base.data());",
                 "AddScaled(s.spec.dtype, x, +1, n, r->local_base.data());")],
         tests=[DRIFT],
         bug="'local': later passive rounds' bases take the correction with the wrong sign"),
    # --- knobs that must agree across ranks (engine) ------------------------------------
    dict(id="averaging-unchecked", file=SPEC,
         edits=[("         config.averaging == o.config.averaging &&\n", "")],
         tests=[BAD_INPUT], bug="ranks that disagree on averaging run together"),
    dict(id="wait-avoiding-unchecked", file=SPEC,
         edits=[("         config.wait_avoiding == o.config.wait_avoiding &&\n", "")],
         tests=[BAD_INPUT], bug="ranks that disagree on wait_avoiding run together"),
    dict(id="sync-period-unchecked", file=SPEC,
         edits=[("         config.sync_period == o.config.sync_period &&\n", "")],
         tests=[BAD_INPUT], bug="ranks that disagree on sync_period run together"),
    dict(id="max-staleness-unchecked", file=SPEC,
         edits=[("         config.max_staleness == o.config.max_staleness && members == "
                 "o.members;", "         members == o.members;")],
         tests=[BAD_INPUT], bug="ranks that disagree on max_staleness run together"),
    dict(id="pending-overlap-unchecked", file=BOOK,
         edits=[("        !Overlap(other.first.members, spec.members)) {", "        true) {")],
         tests=[PROCESS_SETS],
         bug="a set overlapping a pending one under the same name waits instead of failing"),
    dict(id="accepted-overlap-unchecked", file=BOOK,
         edits=[("if (done.first.members == spec.members || "
                 "!Overlap(done.first.members, spec.members))", "if (true)")],
         tests=[PROCESS_SETS],
         bug="a set overlapping an accepted one under the same name waits for ranks that "
             "never register it"),
    # --- the optimizers' step and global-round logic (Python) ---------------------------
    dict(id="optimizer-knobs-unchecked", file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[("        WagmaConfig(**dict(self.stream_knobs(), averaging=averaging_policy.OTHER_DEFAULT\n"
                 "                           if self.averaging is None else self.averaging))",
                 "        pass")],
         tests=[OPTIMIZER_CORE],
         bug="a DistributedWagmaOptimizer with a bad knob is built anyway"),
    dict(id="fp16-always-replaces", file="horovod_wagma/common/optimizer/fp16_rule.py",
         edits=[("lambda: x + (average - sent))", "lambda: average)")],
         tests=[OPTIMIZER_CORE, FP16],
         bug="every round replaces the fp32 model with the fp16 average"),
    dict(id="fp16-torch-every-round-global", file="horovod_wagma/torch/optimizer.py",
         edits=[("core.served_global(step, handle.round), python_cond))",
                 "True, python_cond))")],
         tests=[FP16],
         bug="the PyTorch optimizer treats every round as global for the fp16 rule"),
    dict(id="global-round-formula", file="horovod_wagma/common/optimizer/rounds.py",
         edits=[("return (round_index == 0) | ((round_index + 1) % sync_period == 0)",
                 "return (round_index == 0) | (round_index % sync_period == 0)")],
         tests=[OPTIMIZER_CORE],
         bug="the frontends' global rounds disagree with the engine's"),
    dict(id="global-between-inclusive", file="horovod_wagma/common/optimizer/rounds.py",
         edits=[("(upto + 1) // sync_period > (after + 1) // sync_period))",
                 "(upto + 1) // sync_period >= (after + 1) // sync_period))")],
         tests=[OPTIMIZER_CORE],
         bug="a skip with no global round in it still runs global-round duties"),
    dict(id="served-round-ignores-report", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[("return reported_round if self.wait_avoiding_global else step",
                 "return step")],
         tests=[OPTIMIZER_CORE, OPTIMIZER + "::test_wait_avoiding_global_rounds_straggler_"
                "and_join"],
         bug="with wait-avoiding global rounds the served round is taken to be the step's"),
    dict(id="duties-at-served-round-only", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[("return global_round_between(last_served, served, self.sync_period)",
                 "return is_global_round(served, self.sync_period)")],
         tests=[OPTIMIZER_CORE],
         bug="a skip over a global round runs no global-round duties"),
    dict(id="buffers-never-averaged", file="horovod_wagma/torch/optimizer.py",
         edits=[("if duties_due and self._sync_buffers:", "if False and self._sync_buffers:")],
         tests=[OPTIMIZER + "::test_models_identical_after_every_global_round"],
         bug="BatchNorm statistics and optimizer state are never averaged"),
    # --- the elastic state (Python) -----------------------------------------------------
    dict(id="elastic-skips-sync-after-removal", file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("raise HostsUpdatedInterrupt(skip_sync=False) from interrupt",
                 "raise interrupt")],
         tests=["tests/test_elastic_state.py"],
         bug="after a removal the survivors skip the sync that joiners added at once sit in"),
    dict(id="restore-rolls-back-model", file="horovod_wagma/torch/elastic.py",
         edits=[("    def save(self):\n        super().save()\n",
                 "    def save(self):\n        super().save()\n"
                 "        import copy\n"
                 "        self._model_copy = copy.deepcopy(self.model.state_dict())\n"
                 "\n    def restore(self):\n"
                 "        self.model.load_state_dict(self._model_copy)\n"
                 "        super().restore()\n")],
         tests=[HOST_KILLED],
         bug="restore() rolls the model back to the last commit, like TorchState"),
    dict(id="restore-rolls-back-counters", file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[('        """Nothing to undo: the survivors go on from their current replica."""',
                 '        """Nothing to undo: the survivors go on from their current replica."""\n'
                 "        super().restore()")],
         tests=[HOST_KILLED],
         bug="restore() rolls the step counters back to the last commit"),
    dict(id="joiners-weigh-in", file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("self._average_model(1.0 if survivors[hvd.rank()] else 0.0, sum(survivors))",
                 "self._average_model(1.0, sum(survivors))")],
         tests=[HOST_ADDED],
         bug="joiners' fresh models enter the survivors' average"),
    dict(id="joiners-keep-own-counters", file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("        if not survivors[hvd.rank()]:\n            self._saved_state = theirs",
                 "        if False:\n            self._saved_state = theirs")],
         tests=[HOST_ADDED],
         bug="joiners start their step counters from 0"),
    dict(id="no-rebase", file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("        if rebase is not None:  # a WAGMA optimizer (a plain one has no rounds)\n"
                 "            rebase()",
                 "        if rebase is not None:  # a WAGMA optimizer (a plain one has no rounds)\n"
                 "            pass")],
         tests=[HOST_KILLED],
         bug="after a restart the optimizer numbers its rounds from its old step count"),
    # --- drift correction (PyTorch) ---------------------------------------------------
    dict(id="drift-sign", file="horovod_wagma/torch/drift_correction.py",
         edits=[("moves, offset = flat - sent, 0", "moves, offset = sent - flat, 0")],
         tests=[OPTIMIZER + "::test_drift_correction_removes_a_non_iid_bias"],
         bug="the variate learns the rank's bias with the wrong sign"),
    dict(id="drift-not-applied", file="horovod_wagma/torch/drift_correction.py",
         edits=[("                p.grad.add_(c)", "                p.grad.sub_(c)")],
         tests=[OPTIMIZER + "::test_drift_correction_removes_a_non_iid_bias"],
         bug="the correction is subtracted from the gradients"),
    dict(id="drift-forgets", file="horovod_wagma/torch/drift_correction.py",
         edits=[("c.add_(moves[offset:offset + c.numel()].view_as(c), alpha=self._alpha * k)",
                 "c.copy_(moves[offset:offset + c.numel()].view_as(c) * (self._alpha * k))")],
         tests=[OPTIMIZER + "::test_drift_correction_removes_a_non_iid_bias"],
         bug="the variate keeps only the last round's estimate instead of accumulating"),
    dict(id="keras-drift-sign", file="horovod_wagma/keras/drift_correction.py",
         edits=[("k = -(1.0 - tf.cast(optimizer.momentum, tf.float32))",
                 "k = (1.0 - tf.cast(optimizer.momentum, tf.float32))")],
         tests=["tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias"],
         bug="Keras SGD's velocity carries -lr: the variate learns the bias with the wrong sign"),
    dict(id="drift-default-off", file="horovod_wagma/common/optimizer/drift_policy.py",
         edits=[("    return default_alpha\n", "    return 0.0\n")],
         tests=[OPTIMIZER_CORE],
         bug="drift_correction=None leaves the correction off for optimizers with momentum"),
    dict(id="keras-drift-default-on", file="horovod_wagma/keras/optimizer.py",
         edits=[("knobs.average_optimizer_state, drift_policy.KERAS_DEFAULT_ALPHA))",
                 "knobs.average_optimizer_state))")],
         tests=["tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias"],
         bug="Keras takes PyTorch's default 0.25, with which long runs fell"),
    dict(id="sampler-equal-shares", file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("proportional_shares(self.total_size, throughputs, self.min_share,",
                 "proportional_shares(self.total_size, [1.0] * len(throughputs), "
                 "self.min_share,")],
         tests=[SAMPLER + "::test_shares_follow_the_injected_speeds_and_rebalance"],
         bug="the balanced sampler ignores the measured throughputs"),
    dict(id="lbbsp-unweighted", file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("return self.num_replicas * self.batch_sizes[self.rank] / self.global_batch",
                 "return 1.0")],
         tests=[SAMPLER + "::test_lbbsp_equal_steps_batches_follow_speeds_and_weights_"
                "give_the_mean_gradient"],
         bug="LB-BSP's unequal batches are averaged unweighted: not the mean gradient"),
    dict(id="step-clock-counts-waits", file="horovod_wagma/common/optimizer/step_clock.py",
         edits=[("            self._wait += seconds\n", "            pass\n")],
         tests=[SAMPLER + "::test_lbbsp_equal_steps_batches_follow_speeds_and_weights_"
                "give_the_mean_gradient"],
         bug="a synchronize() wait between steps counts as compute, so every rank looks "
             "as slow as the slowest"),
    dict(id="keras-sequence-equal-shares", file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("proportional_shares(self.total_size, throughputs, self.min_share,",
                 "proportional_shares(self.total_size, [1.0] * len(throughputs), "
                 "self.min_share,")],
         tests=[KERAS + "::test_balanced_sequence_follows_speeds_in_fit"],
         bug="Keras's BalancedSequence ignores the measured throughputs"),
    dict(id="keras-sequence-ignores-optimizer",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("self._clock.synchronous = self._clock.steps() > 0 and rounds == "
                 "self._rounds", "self._clock.synchronous = False")],
         tests=[KERAS + "::test_balanced_sequence_keeps_equal_shares_for_horovods_optimizer"],
         bug="BalancedSequence cuts unequal shares under Horovod's optimizer, whose ranks "
             "then wait in an allreduce that some never call"),
    dict(id="stale-join-notice-counts", file="cpp_ops/engine/rounds/join_coordinator.cc",
         edits=[("  if (generation < generation_) return Notice::kStale;\n", "")],
         tests=["tests/test_uneven.py::test_repeated_joins_leave_blocking_rounds_exact"],
         bug="a join notice overtaken by the end of its join marks the rank joined for "
             "good: its published data stands in for it in blocking rounds"),
    dict(id="delta-skipped-rounds-lost", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("    AddScaled(s.spec.dtype, s.skipped_delta.data(), +1, n, out);\n", "")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_delta_moves_sum_to_zero_over_the_ranks"],
         bug="'delta' forgets the rounds an app skipped: the drift variates' moves no "
             "longer sum to zero, a false gradient on every rank"),
    dict(id="delta-left-out-moves", file=RULE,
         edits=[("  if (!self_included) return OutputFormula::kInput;\n", "")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_delta_moves_sum_to_zero_over_the_ranks"],
         bug="'delta' moves a rank whose value was left out of the mean, which nobody "
             "balances"),
    # --- issue 55: the averaging rules' table (averaging_rule.h) ----------------------
    dict(id="rule-table-unknown-code-accepted", file=RULE,
         edits=[("    if (rule.code == code) return &rule;\n  return nullptr;",
                 "    if (rule.code == code) return &rule;\n  return &AveragingRules()[0];")],
         tests=["tests/test_optimizer_core.py::test_averaging_rules_are_the_engines_table"],
         bug="a stream whose averaging code no rule has is taken as 'fresh' instead of "
             "refused at validation (Python refuses unknown names first: "
             "averaging_rule_test.cc is the guard)"),
    dict(id="rule-table-python-misses-the-last", file="horovod_wagma/common/op/engine_lib.py",
         edits=[("    while lib().wagma_averaging_rule(index, ctypes.byref(name), "
                 "ctypes.byref(code)) >= 0:",
                 "    while lib().wagma_averaging_rule(index + 1, ctypes.byref(name), "
                 "ctypes.byref(code)) >= 0:")],
         tests=["tests/test_optimizer_core.py::test_averaging_rules_are_the_engines_table"],
         bug="Python reads the engine's table off by one: 'fresh' is refused"),
    # --- issue 55: the engine unit tests on the loopback transport --------------------
    # Each is for make engine-unit-test (reduction_test.cc, output_formula_test.cc); the
    # multi-rank test named is a second line of defence.
    dict(id="sa-chunk-remainder-lost", file="cpp_ops/engine/reduce/scatter_allgather_reduction.cc",
         edits=[("  return jj * q + (jj < r ? jj : r);", "  return jj * q;")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="reduce-scatter chunks ignore the remainder: the last count % g elements are "
             "never averaged"),
    dict(id="reduction-keeps-left-out-values", file="cpp_ops/engine/reduce/group_reduction.cc",
         edits=[("    if (inclusion.included[j]) kept.push_back((*srcs)[j]);",
                 "    kept.push_back((*srcs)[j]);")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values"],
         bug="a value decided left out still goes into the mean (the count says otherwise)"),
    dict(id="message-cut-ignores-scope", file="cpp_ops/engine/reduce/message_cut.cc",
         edits=[("  if (!remote && !cut_local_) return 1;", "  if (!remote) return 1;")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="HOROVOD_WAGMA_FRAGMENT_SCOPE=all no longer cuts messages within a node"),
    dict(id="delta-output-divides-by-g", file="cpp_ops/engine/rounds/output_formula.cc",
         edits=[("      FreshCorrection(dtype, ops.m, ops.c, ops.x, 1, n, out);\n      break;\n"
                 "    case OutputFormula::kInput:",
                 "      FreshCorrection(dtype, ops.m, ops.c, ops.x, ops.g, n, out);\n      break;\n"
                 "    case OutputFormula::kInput:")],
         tests=["tests/test_global_rounds.py::test_delta_moves_sum_to_zero_over_the_ranks"],
         bug="'delta' moves x by (m - c)/g instead of m - c: the drift variates' moves no "
             "longer sum to zero"),
    dict(id="local-output-ignores-base", file="cpp_ops/engine/rounds/output_formula.cc",
         edits=[("ops.base != nullptr ? ops.base : ops.c", "ops.c")],
         tests=["tests/test_stale_join.py"],
         bug="'local' keeps x - c instead of x - base: corrections already applied count "
             "again as the rank's progress"),
    dict(id="add-scaled-always-adds", file="cpp_ops/engine/reduce/data_type.cc",
         edits=[("    for (size_t i = 0; i < len; ++i) ac[i] += A(scale) * aa[i];",
                 "    for (size_t i = 0; i < len; ++i) ac[i] += aa[i];")],
         tests=["tests/test_stale_join.py"],
         bug="AddScaled ignores its sign: 'local''s bases add the input they should "
             "subtract"),
    # --- issue 53: documented behaviours no mutant guarded before ------------------
    dict(id="sync-skips-state", file="horovod_wagma/torch/optimizer.py",
         edits=[("tensors = [t for bucket in self._bucketed(self._state_averaging != \"never\")",
                 "tensors = [t for bucket in self._bucketed(False)")],
         tests=[OPTIMIZER + "::test_optimizer_state_averaging_modes_and_sync"],
         bug="sync() averages the model but not the optimizer state (api.md: 'and state "
             "unless never')"),
    dict(id="always-averages-no-state", file="horovod_wagma/torch/optimizer.py",
         edits=[("always = self._state_averaging == \"always\"", "always = False")],
         tests=[OPTIMIZER + "::test_optimizer_state_averaging_modes_and_sync"],
         bug="average_optimizer_state='always' averages no state in group rounds"),
    dict(id="half-accumulates-in-half", file=DATA,
         edits=[("      for (size_t i = 0; i < len; ++i) acc[i] += tmp[i];\n    }\n",
                 "      for (size_t i = 0; i < len; ++i) acc[i] += tmp[i];\n"
                 "      T r[kBlock]; K::StoreN(acc, len, r); K::LoadN(r, len, acc);\n    }\n")],
         tests=[],
         bug="float16/bfloat16 sums rounded to the half type after every addition: "
             "precision lost, sums past 65504 inf (caught by data_type_test)"),
    dict(id="keras-fp16-always-replaces", file="horovod_wagma/keras/optimizer.py",
         edits=[("flat = fp16_result(flat, tf.cast(sent, tf.float32), tf.cast(avg, tf.float32),",
                 "flat = tf.cast(avg, tf.float32) if True else fp16_result(flat, "
                 "tf.cast(sent, tf.float32), tf.cast(avg, tf.float32),")],
         tests=[KERAS + "::test_fp16_replaces_at_global_rounds_and_corrects_at_group_rounds"],
         bug="Keras with Compression.fp16 replaces the fp32 model by the fp16 average at "
             "every round"),
    dict(id="sync-callback-skips-epoch-ends", file="horovod_wagma/keras/callbacks.py",
         edits=[("    def on_epoch_end(self, epoch, logs=None):\n        self._sync()\n",
                 "    def on_epoch_end(self, epoch, logs=None):\n        pass\n")],
         tests=[KERAS + "::test_fit_graph_mode_with_callbacks"],
         bug="WagmaGlobalSyncCallback syncs at train end only"),
    dict(id="join-leaver-named-wrong", file="cpp_ops/engine/core/engine_join.cc",
         edits=[("std::to_string(-last_rank - 1)", "std::to_string(-last_rank)")],
         tests=["tests/test_faults.py::test_a_rank_leaving_while_the_others_join_fails_"
                "their_join_naming_it -k torch"],
         bug="a rank leaving without join() while others join: the error names the "
             "next rank"),
    dict(id="probes-start-late", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("s.probe_after_s = std::max(s.report_after_s, shortest / 3);",
                 "s.probe_after_s = std::max(s.report_after_s, shortest / 2);")],
         tests=[],
         bug="liveness probes at half the deadline: the verdict meets the deadline and a "
             "stopped rank is no longer named in the error (caught by peer_liveness_test)"),
    dict(id="sampler-floor-dropped", file="horovod_wagma/torch/balanced_sampler.py",
         edits=[("proportional_shares(self.total_size, throughputs, self.min_share,",
                 "proportional_shares(self.total_size, throughputs, 0.0,")],
         tests=[SAMPLER + "::test_balanced_sampler_keeps_the_floor_for_a_rank_measured_very_slow"],
         bug="BalancedDistributedSampler drops min_share: a rank measured very slow gets "
             "nothing"),
    dict(id="lbbsp-floor-dropped", file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("floor = max(self.min_share, 1.0 / (self.global_batch / self.num_replicas))",
                 "floor = self.min_share")],
         tests=[SAMPLER + "::test_lbbsp_gives_a_rank_measured_very_slow_at_least_one_"
                "sample_a_step"],
         bug="LB-BSP's one-sample floor dropped: with min_share=0 a very slow rank gets "
             "empty batches"),
    dict(id="keras-sequence-floor-dropped", file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("proportional_shares(self.total_size, throughputs, self.min_share,",
                 "proportional_shares(self.total_size, throughputs, 0.0,")],
         tests=[SAMPLER + "::test_keras_balanced_sequence_keeps_the_floor_for_a_rank_"
                "measured_very_slow"],
         bug="Keras's BalancedSequence drops min_share"),
    dict(id="step-clock-mean", file="horovod_wagma/common/optimizer/step_clock.py",
         edits=[("return statistics.median(self._cycles)", "return statistics.mean(self._cycles)")],
         tests=[SAMPLER + "::test_step_clock_median_ignores_an_evaluation_or_checkpoint_step"],
         bug="the step clock takes the mean: one evaluation or checkpoint step skews the "
             "epoch's shares"),
    dict(id="hold-report-wrong-peer", file="cpp_ops/engine/health/hold_report.cc",
         edits=[("           std::to_string(m.peer);", "           std::to_string(m.peer + 1);")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on"],
         bug="the hold report names the wrong rank as the one a round waits on"),
    dict(id="hold-report-late", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("in_round > cfg.hold_report_s &&", "in_round > 3 * cfg.hold_report_s &&")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on"],
         bug="the hold report waits three times WAGMA_HOLD_REPORT_S: a held call is not "
             "reported"),
    dict(id="schedstat-verdict-swapped", file="cpp_ops/engine/health/thread_schedstat.cc",
         edits=[("  } else if (queued >= slept) {", "  } else if (queued < slept) {")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on"],
         bug="a loop pause calls a starved thread asleep and a sleeping one starved: the "
             "hold's self-report points at the wrong cause (thread_schedstat_test.cc "
             "catches it too)"),
    dict(id="hold-query-no-join", file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("return self_joined && !round_joined && !activation_held && !failed;",
                 "return false && self_joined && !round_joined && !activation_held && !failed;")],
         tests=["tests/test_faults.py::test_a_joined_rank_serves_a_round_whose_activations_were_lost"],
         bug="a joined rank ignores the hold queries of a round it has no activation for: "
             "a lost activation holds the blocking round until the stall timeout"),
    dict(id="hold-query-join-not-started", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("    s->activations.insert(round);  // joined by JoinActivatedRounds, as any activation\n",
                 "")],
         tests=["tests/test_faults.py::test_a_joined_rank_serves_a_round_whose_activations_were_lost"],
         bug="a joined rank says it joins a round on a hold query but never does: the "
             "blocking round waits until the stall timeout"),
    dict(id="hold-view-no-join-state", file="cpp_ops/engine/health/hold_report.cc",
         edits=[('(j.self_joined ? "called" : "not called")',
                 '(j.self_joined ? "not called" : "not called")')],
         tests=["tests/test_faults.py::test_a_joined_rank_serves_a_round_whose_activations_were_lost"],
         bug="the hold report says join() was not called on a rank that called it"),
    # --- the documented surface (tests/test_api_surface.py, engine settings, reduction choice)
    dict(id='top-level-imports-torch', file='horovod_wagma/__init__.py', edits=[('__version__ = "0.1.0"', 'import torch  # noqa: F401\n__version__ = "0.1.0"')], tests=[S + "::test_top_level_imports_no_framework"], bug='importing horovod_wagma loads PyTorch'),
    dict(id='init-default-sync-period', file='horovod_wagma/common/op/basics.py', edits=[('def init(self, comm=None, process_sets=None, group_size=None, sync_period=10,', 'def init(self, comm=None, process_sets=None, group_size=None, sync_period=8,')], tests=[S + "::test_init_defaults"], bug="init()'s default sync_period is 8, not 10"),
    dict(id='init-default-averaging', file='horovod_wagma/common/op/config.py', edits=[('    averaging: str = "fresh"\n', '    averaging: str = "paper"\n')], tests=[S + "::test_init_defaults"], bug="WagmaConfig's default averaging rule is 'paper', not 'fresh'"),
    dict(id='max-staleness-none-is-zero', file='horovod_wagma/common/op/config.py', edits=[('return self.sync_period if self.max_staleness is None else self.max_staleness', 'return 0 if self.max_staleness is None else self.max_staleness')], tests=[S + "::test_init_defaults"], bug='max_staleness=None means 0 rounds instead of sync_period'),
    dict(id='comm-any-object', file='horovod_wagma/common/op/basics.py', edits=[('if not isinstance(comm, MPI.Comm) or comm.Compare(MPI.COMM_WORLD) == MPI.UNEQUAL:', 'if isinstance(comm, MPI.Comm) and comm.Compare(MPI.COMM_WORLD) == MPI.UNEQUAL:')], tests=[S + "::test_comm_must_be_none_or_comm_world"], bug='init(comm=<not a communicator>) is accepted'),
    dict(id='synchronize-horovod-handle-to-wagma', file='horovod_wagma/torch/__init__.py', edits=[('    """Synchronizes a WAGMA handle or a Horovod handle."""\n    if isinstance(handle, GroupAllreduceHandle):', '    """Synchronizes a WAGMA handle or a Horovod handle."""\n    if True:')], tests=[S + "::test_synchronize_and_poll_take_horovod_handles"], bug='torch synchronize() treats a Horovod handle as a WAGMA one'),
    dict(id='poll-horovod-handle-to-wagma', file='horovod_wagma/torch/__init__.py', edits=[('    """Polls a WAGMA handle or a Horovod handle."""\n    if isinstance(handle, GroupAllreduceHandle):', '    """Polls a WAGMA handle or a Horovod handle."""\n    if True:')], tests=[S + "::test_synchronize_and_poll_take_horovod_handles"], bug='torch poll() treats a Horovod handle as a WAGMA one'),
    dict(id='compression-unchecked', file='horovod_wagma/common/optimizer/horovod_arguments.py', edits=[('if compression not in (hvd.Compression.none, hvd.Compression.fp16):', 'if False:')], tests=[S + "::test_compression_other_than_none_or_fp16_is_a_value_error", S + "::test_keras_compression_other_than_none_or_fp16_is_a_value_error"], bug='a compressor other than none/fp16 is accepted (and sent uncompressed)'),
    dict(id='set-passes-unchecked', file='horovod_wagma/torch/optimizer.py', edits=[('        check_backward_passes(passes)\n        self.backward_passes_per_step = passes', '        self.backward_passes_per_step = passes')], tests=[S + "::test_set_backward_passes_per_step"], bug='set_backward_passes_per_step(0) is accepted'),
    dict(id='lbbsp-drop-last-pads', file='horovod_wagma/torch/balanced_batch_sampler.py', edits=[('self.steps = n // self.global_batch if drop_last else math.ceil(n / self.global_batch)', 'self.steps = math.ceil(n / self.global_batch)')], tests=[S + "::test_batch_sampler_drop_last_cuts_to_whole_global_batches"], bug='BalancedBatchSampler(drop_last=True) pads the last global batch with repeats'),
    dict(id='schedule-round-up-only', file='cpp_ops/engine/rounds/group_schedule.cc', edits=[('for (bool round_up : {true, false}) {', 'for (bool round_up : {true}) {')], tests=[S + "::test_schedule_has_the_fewest_phases_for_283_of_441_pairs"], bug='the strided construction tries rounded-up blocks only: 137, not 283, (P, S) pairs reach ceil(log_S P) phases'),
    dict(id='tf-reexports-some', file='horovod_wagma/tensorflow/__init__.py', edits=[('from horovod.tensorflow import *  # noqa: E402,F401,F403  (re-export: a drop-in superset)', 'from horovod.tensorflow import allreduce, broadcast, rank, size  # noqa: F401')], tests=[S + "::test_tensorflow_and_keras_reexport_all_of_horovods"], bug="horovod_wagma.tensorflow re-exports only a few of Horovod's names"),
    dict(id='keras-reexports-some', file='horovod_wagma/keras/__init__.py', edits=[('from horovod.tensorflow.keras import *  # noqa: E402,F401,F403  (a drop-in superset)', 'from horovod.tensorflow.keras import DistributedOptimizer, rank, size  # noqa: E402,F401')], tests=[S + "::test_tensorflow_and_keras_reexport_all_of_horovods"], bug="horovod_wagma.keras re-exports only a few of Horovod's names"),
    dict(id='keras-callbacks-reexport-one', file='horovod_wagma/keras/callbacks.py', edits=[('from horovod.tensorflow.keras.callbacks import *  # noqa: F401,F403', 'from horovod.tensorflow.keras.callbacks import BroadcastGlobalVariablesCallback  # noqa: F401')], tests=[S + "::test_keras_callbacks_reexport_all_of_horovods"], bug="horovod_wagma.keras.callbacks lacks Horovod's other callbacks"),
    dict(id='tf-async-in-function', file='horovod_wagma/tensorflow/ops.py', edits=[('    if not tf.executing_eagerly():\n        raise WagmaError("group_allreduce_async works', '    if False:\n        raise WagmaError("group_allreduce_async works')], tests=[S + "::test_tf_group_allreduce_async_inside_tf_function_is_a_wagma_error"], bug='group_allreduce_async inside tf.function is not refused'),
    dict(id='keras-stream-prefix', file='horovod_wagma/keras/optimizer.py', edits=[('STREAM_PREFIX = "wagma.keras_optimizer"', 'STREAM_PREFIX = "wagma.optimizer"')], tests=[S + "::test_keras_stream_prefix_and_name"], bug="Keras optimizers' streams share the PyTorch prefix"),
    dict(id='stream-name-ignored', file='horovod_wagma/common/optimizer/stream_names.py', edits=[('self.name = name or f"{prefix}{next(_counters[prefix])}"', 'self.name = f"{prefix}{next(_counters[prefix])}"')], tests=[S + "::test_keras_stream_prefix_and_name"], bug="an optimizer's name= is ignored"),
    dict(id='keras-sparse-as-dense-sends-fp16', file='horovod_wagma/keras/optimizer.py', edits=[('fp16=compression is Compression.fp16,', 'fp16=compression is Compression.fp16 or sparse_as_dense,')], tests=[S + "::test_keras_gradient_allreduce_arguments_have_no_effect"], bug='Keras sparse_as_dense=True puts fp16 on the wire'),
    dict(id='keras-passes-as-sync-period', file='horovod_wagma/keras/optimizer.py', edits=[('knobs = OptimizerKnobs.from_arguments(locals(), "Keras", STATE_MODES)', 'knobs = OptimizerKnobs.from_arguments(dict(locals(), sync_period=sync_period * backward_passes_per_step), "Keras", STATE_MODES)')], tests=[S + "::test_keras_gradient_allreduce_arguments_have_no_effect"], bug='Keras backward_passes_per_step stretches the sync period'),
    dict(id='keras-served-round-reported', file='horovod_wagma/keras/optimizer.py', edits=[('return self._wagma["core"].status(self._wagma["round"].numpy(), None)', 'return self._wagma["core"].status(self._wagma["round"].numpy(), self._wagma["round"].numpy() - 1)')], tests=[S + "::test_keras_wagma_status_served_round_is_none"], bug='Keras wagma_status() claims a served round it cannot know'),
    dict(id='lr-schedule-ignores-start-epoch', file='horovod_wagma/keras/callbacks.py', edits=[('super().__init__(tf.keras.backend, initial_lr, multiplier, start_epoch, end_epoch,', 'super().__init__(tf.keras.backend, initial_lr, multiplier, 0, end_epoch,')], tests=[S + "::test_keras_learning_rate_schedule_is_horovods"], bug='LearningRateScheduleCallback starts at epoch 0 whatever start_epoch says'),
    dict(id='momentum-correction-on-float', file='horovod_wagma/keras/callbacks.py', edits=[('if self.momentum_correction and not isinstance(momentum, tf.Variable):', 'if False:')], tests=[S + "::test_keras_momentum_correction_skipped_for_a_python_float_momentum"], bug="momentum correction runs on tf_keras SGD's Python-float momentum (fit fails)"),
    dict(id='momentum-correction-never', file='horovod_wagma/keras/callbacks.py', edits=[('if self.momentum_correction and not isinstance(momentum, tf.Variable):', 'if self.momentum_correction:')], tests=[S + "::test_keras_momentum_correction_skipped_for_a_python_float_momentum"], bug='momentum correction is skipped for momentum variables too'),
    dict(id='sequence-lists-as-one-array', file='horovod_wagma/keras/balanced_sequence.py', edits=[('    if isinstance(arrays, (list, tuple)):\n        return type(arrays)(np.asarray(a)[idx] for a in arrays)\n', '')], tests=[S + "::test_balanced_sequence_over_lists_of_arrays_or_unlabelled"], bug='BalancedSequence slices a list of arrays as one stacked array'),
    dict(id='sequence-unlabelled-yields-pairs', file='horovod_wagma/keras/balanced_sequence.py', edits=[('        if self.y is None:\n            return _take(self.x, idx)\n', '')], tests=[S + "::test_balanced_sequence_over_lists_of_arrays_or_unlabelled"], bug='BalancedSequence(x, None) fails to serve batches'),
    dict(id='shutdown-timeout-default', file='cpp_ops/engine/core/engine_settings.cc', edits=[('EnvDouble("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", 30.0)', 'EnvDouble("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", 60.0)')], tests=[], bug="the engine's shutdown waits 60 s by default (caught by engine_settings_test)"),
    dict(id='idle-sleep-default', file='cpp_ops/engine/core/engine_settings.cc', edits=[('EnvDouble("HOROVOD_WAGMA_IDLE_SLEEP_US", 1000)', 'EnvDouble("HOROVOD_WAGMA_IDLE_SLEEP_US", 4000)')], tests=[], bug='an idle engine sleeps up to 4 ms by default (caught by engine_settings_test)'),
    dict(id='idle-sleep-uncapped', file='cpp_ops/engine/core/progress_pacer.cc', edits=[('const int64_t cap_us = busy ? 200 : idle_cap;', 'const int64_t cap_us = busy ? 200 : 4 * idle_cap;')], tests=[], bug='the idle sleep runs past HOROVOD_WAGMA_IDLE_SLEEP_US (caught by engine_settings_test)'),
    dict(id='stall-warning-default', file='cpp_ops/engine/health/stall_inspector.h', edits=[('double warning_s = 60.0;', 'double warning_s = 30.0;')], tests=[], bug='the stall warning comes after 30 s by default (caught by engine_settings_test)'),
    dict(id='stall-timeout-on', file='cpp_ops/engine/health/stall_inspector.h', edits=[('double timeout_s = 0.0;', 'double timeout_s = 300.0;')], tests=[], bug='waiting ranks raise after 300 s by default (caught by engine_settings_test)'),
    dict(id='hold-report-default', file='cpp_ops/engine/health/stall_inspector.h', edits=[('double hold_report_s = 10.0;', 'double hold_report_s = 5.0;')], tests=[], bug='the hold report after 5 s by default (caught by engine_settings_test)'),
    dict(id='loss-settle-default', file='cpp_ops/engine/core/engine_settings.h', edits=[('double loss_settle_ms = 1500.0;', 'double loss_settle_ms = 1000.0;')], tests=[], bug='the membership verdict settles 1 s, not 1.5 s (caught by engine_settings_test)'),
    dict(id='liveness-default', file='cpp_ops/engine/core/engine_settings.h', edits=[('double liveness_s = 10.0;', 'double liveness_s = 3.0;')], tests=[], bug='a silent peer is lost after 3 s by default (caught by engine_settings_test)'),
    dict(id='liveness-env-ignored', file='cpp_ops/engine/core/engine_settings.cc', edits=[('  s.liveness_s = EnvDouble("HOROVOD_WAGMA_LIVENESS_S", s.liveness_s);\n', '')], tests=[], bug='HOROVOD_WAGMA_LIVENESS_S is not read (caught by engine_settings_test)'),
    dict(id='small-bytes-boundary', file='cpp_ops/engine/reduce/reduction_factory.cc', edits=[('if (args.members.size() == 1 || bytes <= direct_up_to)', 'if (args.members.size() == 1 || bytes < direct_up_to)')], tests=[], bug='a round of exactly HOROVOD_WAGMA_SMALL_BYTES takes two steps (caught by reduction_choice_test)'),
    dict(id='pairs-use-small-bytes', file='cpp_ops/engine/reduce/reduction_factory.cc', edits=[('args.members.size() <= 2 ? std::max(thresholds.small_bytes, thresholds.pair_scatter_bytes)', 'args.members.size() < 2 ? std::max(thresholds.small_bytes, thresholds.pair_scatter_bytes)')], tests=[], bug='groups of two switch to reduce-scatter at 64 KiB, not 8 MiB (caught by reduction_choice_test)'),
    dict(id='small-bytes-default', file='cpp_ops/engine/reduce/group_reduction.h', edits=[('size_t small_bytes = 64 * 1024;', 'size_t small_bytes = 32 * 1024;')], tests=[], bug='rounds above 32 KiB take two steps by default (caught by engine_settings_test and reduction_choice_test)'),
    dict(id='pair-threshold-env-ignored', file='cpp_ops/engine/core/engine_settings.cc', edits=[('"HOROVOD_WAGMA_PAIR_SCATTER_BYTES", static_cast<double>(s.thresholds.pair_scatter_bytes)', '"HOROVOD_WAGMA_PAIR_SCATTER_BYTE", static_cast<double>(s.thresholds.pair_scatter_bytes)')], tests=[], bug='HOROVOD_WAGMA_PAIR_SCATTER_BYTES is not read (caught by engine_settings_test and reduction_choice_test)'),
    dict(id="join-polls-collected-handle", file="horovod_wagma/common/elastic/join_both.py",
         edits=[("        if not horovod_done and done():", "        if done():")],
         tests=["tests/test_join_both.py"],
         bug="join() polls Horovod's join handle after collecting it: ValueError when "
             "Horovod's join ends before the engine's (seen in the hold soak)"),
    # --- claims.md's rows that had no test (2026-12-02) ----------------------------------
    dict(id="user-listed-group-registered-again", file="horovod_wagma/common/op/basics.py",
         edits=[("        registered = set(by_ranks)\n", "        registered = set()\n")],
         tests=["tests/test_api.py::test_api_behaviour"],
         bug="init() registers a group the user already listed in process_sets a second "
             "time (api.md: \"not a second time\")"),
    dict(id="gloo-registers-group-sets", file="horovod_wagma/common/op/basics.py",
         edits=[("# group_process_set() needs dynamic process sets there.\n"
                 "                hvd.init(process_sets=\"dynamic\" if dynamic else user_sets)",
                 "# group_process_set() needs dynamic process sets there.\n"
                 "                hvd.init(process_sets=\"dynamic\")\n"
                 "                dynamic = True")],
         tests=["tests/test_api.py::test_gloo_init_registers_no_group_process_sets"],
         transports="gloo",
         bug="on Gloo init() registers every group as a process set (Horovod then "
             "negotiates them in every cycle: its collectives 5-14x slower)"),
    dict(id="keras-state-never-averaged-at-global-rounds", file="horovod_wagma/keras/optimizer.py",
         edits=[("        if state:\n            state.run_due(self, variables, step, reported)\n",
                 "")],
         tests=[KERAS + "::test_on_sync_averages_optimizer_state_at_global_rounds_and_sync"],
         bug="Keras \"on_sync\" never averages the optimizer state at global rounds"),
    dict(id="keras-sync-leaves-state-out", file="horovod_wagma/keras/optimizer.py",
         edits=[("        if self._wagma[\"state\"]:\n            variables = list(variables) + "
                 "StateAveraging.state_variables(self)",
                 "        if False:\n            variables = list(variables) + "
                 "StateAveraging.state_variables(self)")],
         tests=[KERAS + "::test_on_sync_averages_optimizer_state_at_global_rounds_and_sync"],
         bug="Keras sync(variables) averages the model but not the optimizer state"),
    dict(id="keras-sync-averages-never-state", file="horovod_wagma/keras/optimizer.py",
         edits=[("        if self._wagma[\"state\"]:\n            variables = list(variables) + "
                 "StateAveraging.state_variables(self)",
                 "        if True:\n            variables = list(variables) + "
                 "StateAveraging.state_variables(self)")],
         tests=[KERAS + "::test_on_sync_averages_optimizer_state_at_global_rounds_and_sync"],
         bug="Keras sync() averages the state of an optimizer whose state mode is \"never\""),
    dict(id="keras-join-is-horovods", file="horovod_wagma/keras/__init__.py",
         edits=[("                                          group_process_set, init, join, "
                 "poll, stats,",
                 "                                          group_process_set, init, "
                 "poll, stats,")],
         tests=[KERAS + "::test_module_join_serves_rounds_and_returns_the_last_rank"],
         bug="horovod_wagma.keras.join is Horovod's: a joined rank's engine serves aged "
             "values, not its final model"),
    dict(id="join-skips-horovods-join", file="horovod_wagma/common/elastic/join_both.py",
         edits=[("    done, result = horovod_join_async()\n",
                 "    done, result = (lambda: True), (lambda: None)\n")],
         tests=["tests/test_uneven.py::test_horovod_collectives_are_served_during_join"],
         bug="torch join() joins the engine only: the others' Horovod collectives hang "
             "while a rank sits in join()"),
    dict(id="no-registration-stall-warning", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("    if (!stalls_->RegistrationWarningDue(p.key, p.waited_s, now)) continue;",
                 "    continue;")],
         tests=["tests/test_stall_reports.py::test_a_late_round0_registration_is_reported_"
                "by_the_registrar"],
         bug="a late round-0 registration is never reported (faults.md: \"inspected the "
             "same way\")"),
    dict(id="probes-without-a-waiting-call", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("stalls_->ProbesDue(longest_wait, heartbeat,",
                 "stalls_->ProbesDue(1e9, heartbeat,")],
         tests=["tests/test_stall_reports.py::test_no_liveness_probes_in_a_healthy_run"],
         bug="engines probe their peers with no call waiting (faults.md: none in a "
             "healthy run)"),
    dict(id="torch-wait-in-one-slice", file="cpp_ops/torch/torch_ops.cc",
         edits=[("rc = wagma_wait_for(handle, 100, &round, err, kErrLen);",
                 "rc = wagma_wait_for(handle, -1, &round, err, kErrLen);")],
         tests=["tests/test_stall_reports.py::test_ctrl_c_interrupts_a_wait_for_a_stuck_"
                "peer_at_once"],
         bug="torch waits in one slice: Ctrl-C waits for the stuck peer"),
    dict(id="liveness-zero-still-heartbeats", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("const bool heartbeat = settings_.elastic && settings_.liveness_s > 0;",
                 "const bool heartbeat = settings_.elastic;")],
         tests=["tests/test_stall_reports.py::test_liveness_zero_counts_only_closed_"
                "connections"],
         bug="HOROVOD_WAGMA_LIVENESS_S=0 still declares silent peers lost"),
    dict(id="shutdown-timeout-tripled", file="cpp_ops/engine/core/engine.cc",
         edits=[("  if (elapsed > settings_.shutdown_timeout_s) {",
                 "  if (elapsed > 3 * settings_.shutdown_timeout_s) {")],
         tests=["tests/test_shutdown.py::test_a_shutdown_that_cannot_finish_gives_up_after_"
                "its_timeout"],
         bug="a shutdown that cannot finish waits 3x HOROVOD_WAGMA_SHUTDOWN_TIMEOUT"),
    dict(id="global-wait-reported-as-group-wait", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    (global ? st.global_wait_us : st.group_wait_us) += waited_us;",
                 "    st.group_wait_us += waited_us;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="a wait in a global round counts as group_wait_s"),
    dict(id="round-time-counted-as-wait", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    if (has_callback) (global ? st.global_wait_us : st.group_wait_us) += call_us;",
                 "    (global ? st.global_wait_us : st.group_wait_us) += call_us;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="the time from a call to its completion counts as waiting even where the app "
             "computed meanwhile (an async call synchronized later)"),
    dict(id="global-wait-counted-twice", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    (global ? st.global_wait_us : st.group_wait_us) += waited_us;",
                 "    st.group_wait_us += waited_us;\n    if (global) st.global_wait_us += waited_us;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler"],
         bug="a wait in a global round counts in both global_wait_s and group_wait_s"),
    dict(id="skip-at-most-one-round", file=POLICY,
         edits=[("    if (failed) break;  // the app must hear that error, not skip it",
                 "    if (failed || served >= 1) break;  // the app must hear that error, not skip it")],
         tests=[GLOBAL_ROUNDS + "::test_a_k_times_slower_rank_enters_about_every_kth_round"],
         bug="a lagging app skips at most one served round per call: a 4x slower rank "
             "enters every other round and falls behind (semantics.md: every k-th)"),
    dict(id="re-formed-job-not-judged", file="horovod_wagma/common/elastic/membership.py",
         edits=[("        if previous_gen > 0 and not engine_lib.may_go_on(len(previous), lost):",
                 "        if False:")],
         tests=["tests/test_membership.py"],
         bug="a job Horovod re-forms with a minority of the previous member set trains on "
             "(faults.md: the majority rule is checked again)"),
    dict(id="re-formed-job-judged-against-oldest-replica",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[('        previous_gen = max(i["replica"] for i in infos)',
                 '        previous_gen = min(i["replica"] for i in infos if i["replica"]) '
                 'if any(i["replica"] for i in infos) else 0')],
         tests=["tests/test_membership.py"],
         bug="the rule counts against an older member set than the newest replica"),
    dict(id="early-activations-keep-only-the-first", file="cpp_ops/engine/core/stream_table.cc",
         edits=[("  early.push_back(std::move(activation));",
                 "  if (early.empty()) early.push_back(std::move(activation));")],
         tests=[],
         bug="of the activations that came before a stream's id, only the first is "
             "replayed (semantics.md: never dropped; caught by stream_table_test)"),
    dict(id="caller-never-progresses", file="cpp_ops/engine/core/engine.cc",
         edits=[("  int64_t spin_us = pacer_.settings().caller_progress_us;",
                 "  int64_t spin_us = 0;")],
         tests=["tests/test_gossip.py::test_caller_progress_drives_the_engine_from_the_"
                "waiting_thread"],
         bug="HOROVOD_WAGMA_CALLER_PROGRESS_US is ignored"),
    dict(id="caller-progress-on-by-default", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[('EnvDouble("HOROVOD_WAGMA_CALLER_PROGRESS_US", 0)',
                 'EnvDouble("HOROVOD_WAGMA_CALLER_PROGRESS_US", 2000000)')],
         tests=["tests/test_gossip.py::test_caller_progress_drives_the_engine_from_the_"
                "waiting_thread"],
         bug="waiting app threads drive the engine by default (api.md: opt-in)"),
]

MUTANTS += [
    dict(id="interrupted-synchronize-drops-tensors", file="horovod_wagma/torch/ops.py",
         edits=[("            try:\n                self.round = _torch_ops.wait(self._id)",
                 "            _pending_tensors.pop(self._id, None)\n"
                 "            try:\n                self.round = _torch_ops.wait(self._id)")],
         tests=["tests/test_torch_handle.py"],
         bug="a Ctrl-C'd synchronize lets go of the round's input and output while the "
             "engine still reads and writes them"),
    dict(id="claims-row-names-a-missing-test", file="docs/claims.md",
         edits=[("tests/test_torch_handle.py::test_interrupted_synchronize_keeps_the_round_"
                 "tensors_until_it_ends |",
                 "tests/test_torch_handle.py::test_interrupted_synchronize_keeps_the_round_"
                 "tensors |")],
         tests=["tests/test_claims_table.py::test_every_row_names_tests_that_exist"],
         bug="a claims row names a test that does not exist (renamed or deleted)"),
    dict(id="claims-row-names-a-missing-mutant", file="docs/claims.md",
         edits=[("| interrupted-synchronize-drops-tensors |", "| interrupted-sync-drops |")],
         tests=["tests/test_claims_table.py::test_every_named_mutant_is_in_a_catalogue"],
         bug="a claims row names a mutant that no catalogue holds"),
]

# The detail pass over docs/claims.md (2026-12-02), one catalogue per doc section: each
# mutant breaks a detail a doc states (a bound's end, an error's words, a default, a
# pass-through argument) that the row's tests ran but did not assert before.
from detail_api1 import MUTANTS as _API1  # noqa: E402
from detail_api2 import MUTANTS as _API2  # noqa: E402
from detail_faults import MUTANTS as _FAULTS  # noqa: E402
from detail_readme_elastic import MUTANTS as _README_ELASTIC  # noqa: E402
from detail_semantics import MUTANTS as _SEMANTICS  # noqa: E402
# The second detail pass (2026-12-03): values inside reports, counters and defaults.
from detail_pass2 import MUTANTS as _PASS2  # noqa: E402
# The third (2026-12-03, later), one catalogue per group of test modules.
from detail_pass3_api import MUTANTS as _PASS3_API  # noqa: E402
from detail_pass3_faults import MUTANTS as _PASS3_FAULTS  # noqa: E402
from detail_pass3_rounds import MUTANTS as _PASS3_ROUNDS  # noqa: E402
from detail_pass3_torch import MUTANTS as _PASS3_TORCH  # noqa: E402
from detail_pass4_api import MUTANTS as _PASS4_API  # noqa: E402
from detail_pass4_faults import MUTANTS as _PASS4_FAULTS  # noqa: E402
from detail_pass4_rounds import MUTANTS as _PASS4_ROUNDS  # noqa: E402
from detail_pass4_torch import MUTANTS as _PASS4_TORCH  # noqa: E402

MUTANTS += _API1 + _API2 + _FAULTS + _README_ELASTIC + _SEMANTICS + _PASS2
MUTANTS += _PASS3_API + _PASS3_FAULTS + _PASS3_ROUNDS + _PASS3_TORCH
MUTANTS += _PASS4_API + _PASS4_FAULTS + _PASS4_ROUNDS + _PASS4_TORCH
# The fifth (2026-12-06), by area: second uses, boundaries and wrappers.
from detail_pass5_reports import MUTANTS as _PASS5_REPORTS  # noqa: E402
from detail_pass5_rounds import MUTANTS as _PASS5_ROUNDS  # noqa: E402
from detail_pass5_twins import MUTANTS as _PASS5_TWINS  # noqa: E402
MUTANTS += _PASS5_REPORTS + _PASS5_ROUNDS + _PASS5_TWINS
# The grace window (2026-12-06): one mutant per rule.
from detail_grace_window import MUTANTS as _GRACE  # noqa: E402
MUTANTS += _GRACE
# Adam's second moment from the group's mean gradient (2026-12-06): one mutant per rule.
from detail_second_moment import MUTANTS as _SECOND_MOMENT  # noqa: E402
MUTANTS += _SECOND_MOMENT
# The optimizers' averaging rule follows the optimizer family (2026-12-06).
from detail_averaging_default import MUTANTS as _AVERAGING_DEFAULT  # noqa: E402
MUTANTS += _AVERAGING_DEFAULT
# The "follow" rule, the Adam family's default since 2026-12-07.
from detail_follow import MUTANTS as _FOLLOW  # noqa: E402
MUTANTS += _FOLLOW
# Checkpoints that resume WAGMA's state (issue 56).
from detail_checkpoint import MUTANTS as _CHECKPOINT  # noqa: E402
MUTANTS += _CHECKPOINT
