"""An eighth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md),
docs/claims.md and the code, but not the tests. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the pytest node ids docs/claims.md
lists for the promise, plus a whole module where the row looks weak; C++ unit tests the
row names are mentioned in `bug`, since check.py runs them anyway for an engine mutant
and passes only pytest ids on). None repeats a behaviour planted in mutants.py,
fresh_batch.py .. fresh_batch7.py, fresh_survivors.py or the detail_*.py batches.
Spread: faults.md 6, api.md 6, semantics.md 5, README.md 4, elastic.md 3."""

MUTANTS = [
    # --- faults.md ---------------------------------------------------------------------
    dict(id="fresh8-probes-keyed-to-the-longer-deadline",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("if (s.timeout_s > 0) shortest = std::min(shortest, s.timeout_s);",
                 "if (s.timeout_s > 0) shortest = std::max(shortest, s.timeout_s);")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_faults.py"],
         bug="faults.md:51-60: liveness probes start once a call has waited a third of the "
             "SHORTER of WAGMA_STALL_WARNING_S and WAGMA_STALL_TIMEOUT_S, so the stopped rank "
             "is named before either deadline; they are now keyed to the longer one: with "
             "the default 60 s warning and WAGMA_STALL_TIMEOUT_S=10 the first probe goes at "
             "20 s, after the error, which no longer says 'ranks not responding: [2]' "
             "(engine_settings_test.cc::TestProbesAtAThirdOfTheShorterDeadline)"),
    dict(id="fresh8-stall-note-global-says-not-waiting", file="cpp_ops/engine/health/stall_monitor.cc",
         edits=[("std::string(global ? \"ranks that have not entered it: \" : \"ranks not waiting in it: \")",
                 "std::string(!global ? \"ranks that have not entered it: \" : \"ranks not waiting in it: \")")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_faults.py"],
         bug="faults.md:49-50: a stall timeout in a global round raises 'stalled: waited 5.0 s "
             "... in global round 4 of stream 'w'; ranks that have not entered it: [2]'; the "
             "note's words are now swapped by round kind, so a global round's error (and "
             "warning) says 'ranks not waiting in it: [2]' and a group round's says 'ranks "
             "that have not entered it'"),
    dict(id="fresh8-lost-peer-named-as-self", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("\"[horovod_wagma rank %d] rank %d was lost: %s\\n\", rank_, peer, how.c_str());",
                 "\"[horovod_wagma rank %d] rank %d was lost: %s\\n\", rank_, rank_, how.c_str());")],
         tests=["tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py"],
         bug="faults.md:109-115: under Horovod elastic a lost peer is named, 'rank 3 was lost: "
             "its connection closed' / 'rank 2 was lost: no answer to liveness probes (...)'; "
             "the line now names the survivor that prints it ('[horovod_wagma rank 0] rank 0 "
             "was lost: ...'), so no survivor's stderr says which rank went (the verdict's "
             "'ranks 2, 3 were lost' stays right)"),
    dict(id="fresh8-joined-rank-final-model-ages", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("rs.final_model = joins_.self_joined() || leaving_;",
                 "rs.final_model = leaving_;")],
         tests=["tests/test_keras.py::test_module_join_serves_rounds_and_returns_the_last_rank",
                "tests/test_uneven.py::test_join_serves_final_model_exactly",
                "tests/test_no_deadlock.py::test_horovod_collectives_mid_run_finish",
                "tests/test_uneven.py"],
         bug="faults.md:10-13: until every rank has joined, a joined rank's engine serves "
             "every round with its final model, global rounds included, 'where it counts as "
             "present'; its final model is now aged like a straggler's value: with "
             "wait-avoiding global rounds it is left out of the average once it is "
             "max_staleness rounds and steps behind (rounds_left_out grows on the joined "
             "rank), and its joins show up in contribution_age_* with ages of many rounds"),
    dict(id="fresh8-joins-end-one-round-short", file="cpp_ops/engine/core/engine_join.cc",
         edits=[("s.next_app_round = std::max(s.next_app_round, kv.second + 1);",
                 "s.next_app_round = std::max(s.next_app_round, kv.second);")],
         tests=["tests/test_uneven.py::test_repeated_joins_leave_blocking_rounds_exact",
                "tests/test_uneven.py::test_optimizer_join_with_uneven_batches",
                "tests/test_uneven.py"],
         bug="faults.md:15-18: training may go on after join(): every rank continues from the "
             "furthest round any rank reached; the ranks that were behind now continue from "
             "that furthest round itself, one round short of the rank that reached it, so "
             "their next call enters a round the others already finished: it stalls (or, "
             "served, returns the wrong round's average) instead of averaging with them"),
    dict(id="fresh8-stats-bytes-sent-last-round-only", file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("streams_[stream].bytes_sent += bytes_sent;",
                 "streams_[stream].bytes_sent = bytes_sent;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_optimizer.py::test_fp16_compression_halves_traffic",
                "tests/test_observability.py"],
         bug="faults.md:193: stats()'s bytes_sent is the reduction payload a stream sent; it "
             "now holds only the last round's payload, so it stays flat over a run instead "
             "of growing with every round (the engine-wide counter still sums)"),
    # --- api.md ------------------------------------------------------------------------
    dict(id="fresh8-tf-op-averaging-ignored", file="horovod_wagma/tensorflow/ops.py",
         edits=[("averaging=averaging, wait_avoiding=bool(wait_avoiding),",
                 "averaging=0, wait_avoiding=bool(wait_avoiding),")],
         tests=["tests/test_api_surface.py::test_tf_op_hands_its_knobs_to_the_kernel",
                "tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_keras.py"],
         bug="api.md:101: the TensorFlow group_allreduce takes the same arguments and "
             "semantics as the PyTorch op; its kernel now always gets averaging='fresh', so "
             "averaging='paper'/'local'/'delta' (and the Keras optimizer's default 'local', "
             "and drift correction's 'delta' stream) silently run the fresh rule"),
    dict(id="fresh8-tf-op-reports-the-next-round", file="cpp_ops/engine/c_api.cc",
         edits=[("error.empty() ? nullptr : error.c_str(), error.empty() ? round : -1);",
                 "error.empty() ? nullptr : error.c_str(), error.empty() ? round + 1 : -1);")],
         tests=["tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_keras.py::test_on_sync_with_wait_avoiding_global_rounds_averages_only_there",
                "tests/test_keras.py"],
         bug="api.md:104-105: group_allreduce(..., return_round=True) returns (result, "
             "round), the round that served the call; the TF kernel now reports one round "
             "later than the one that served it, so the Keras optimizer with wait-avoiding "
             "global rounds runs its global-round duties (state averaging, the fp16 rule) "
             "one round off (the eager async handle, through engine_lib.wait, stays right)"),
    dict(id="fresh8-optimizer-global-rounds-default-blocking",
         file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[("\"wait_avoiding\" if self.wait_avoiding is True else \"blocking\")",
                 "\"blocking\")")],
         tests=["tests/test_optimizer_core.py::test_knob_defaults_and_global_rounds_resolution",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_optimizer_core.py"],
         bug="api.md:186-187 (semantics.md:129): the optimizers' global_rounds defaults to "
             "'wait_avoiding' ('blocking' only when wait_avoiding=False); the default is now "
             "'blocking' in both frameworks, so a persistently slow rank sets everyone's pace "
             "at every global round again and wagma_status().global_rounds says 'blocking'"),
    dict(id="fresh8-keras-stats-max-staleness-per-epoch-delta",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("logs[\"wagma_max_staleness\"] = now[\"staleness_max\"]",
                 "logs[\"wagma_max_staleness\"] = d[\"staleness_max\"]")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_keras.py"],
         bug="api.md:360-363 (faults.md:200-202): WagmaStatsCallback's wagma_max_staleness is "
             "the largest staleness since the engine started (a running maximum); it is now "
             "the epoch's change of that maximum, 0 in every epoch whose joins were no staler "
             "than an earlier epoch's"),
    dict(id="fresh8-torch-adam-second-moment-stays-local", file="horovod_wagma/torch/optimizer.py",
         edits=[("return [state[k] for k in sorted(state) if k != \"step\"",
                 "return [state[k] for k in sorted(state)[:1] if k != \"step\"")],
         tests=["tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync",
                "tests/test_optimizer.py"],
         bug="api.md:190-198 (semantics.md:149-152): with 'on_sync' (the default), 'always' "
             "and sync() the optimizer's floating state is averaged, Adam's moments "
             "included; only the first state tensor of each parameter is now averaged, so "
             "Adam's exp_avg_sq (and AMSGrad's max) stays each rank's own at global rounds "
             "and after sync() (SGD's single momentum buffer is unaffected)"),
    dict(id="fresh8-small-bytes-env-ignored", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("EnvDouble(\"HOROVOD_WAGMA_SMALL_BYTES\",",
                 "EnvDouble(\"HOROVOD_WAGMA_SMALL_BYTE\",")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_gossip.py"],
         bug="api.md:376: HOROVOD_WAGMA_SMALL_BYTES (65536) sets up to which size a round "
             "exchanges everything in one step; the engine now reads a misspelt variable, "
             "so setting it changes nothing and every round keeps the 64 KiB threshold "
             "(engine_settings_test.cc::TestVariablesChangeThem if it sets it; "
             "reduction_choice_test.cc builds reductions directly)"),
    # --- semantics.md ------------------------------------------------------------------
    dict(id="fresh8-paper-own-input-plain-mean", file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("return app_input_contributed && (global || RuleOf(configured).mean_when_input_went_in) &&",
                 "return app_input_contributed && (global || configured != Averaging::kDelta) &&")],
         tests=["tests/test_stale_join.py::test_late_member_result_follows_rule",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_stale_join.py"],
         bug="semantics.md:42-47: 'paper' counts the caller's input twice even without stale "
             "contributions, (s + x)/(|G| + 1); a group round whose caller contributed its "
             "own input (not in place) now reduces straight into the output and returns the "
             "plain mean s/|G| (round_policy_test.cc, if it covers ReduceIntoOutput)"),
    dict(id="fresh8-fusion-one-buffer-per-tensor", file="horovod_wagma/common/optimizer/fusion_plan.py",
         edits=[("out.extend(split[k] for k in sorted(split))",
                 "out.extend([v] for k in sorted(split) for v in split[k])")],
         tests=["tests/test_fusion.py::test_fuse_by_dtype_splits_by_device_and_dtype_in_a_stable_order",
                "tests/test_optimizer_core.py::test_fusion_plan_buckets",
                "tests/test_fusion.py"],
         bug="semantics.md:124-127 (README:65, api.md:155-156): the optimizers average the "
             "parameters fused into one buffer per dtype (per bucket), one stream each; every "
             "tensor is now its own buffer and stream (model0 .. modelN, one round per "
             "tensor per step), in both frameworks, and stats(...model0) covers only the "
             "first tensor"),
    dict(id="fresh8-blocking-global-rounds-activate", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("? config.wait_avoiding_global() && rs.round > 0",
                 "? config.wait_avoiding && rs.round > 0")],
         tests=["tests/test_staleness.py::test_no_rank_more_than_tau_rounds_ahead",
                "tests/test_straggler.py::test_straggler_not_waited_for",
                "tests/test_gossip.py::test_gossip_matches_exact_trajectory"],
         bug="semantics.md:17-20: blocking global rounds (the op's default) are entered by "
             "every member's application, return the exact average and are the only place "
             "a rank waits, so no rank gets more than tau rounds ahead; the first member "
             "now activates them as under wait-avoidance, the others' engines join with "
             "stale published values, and the average ignores the late apps' fresh inputs"),
    dict(id="fresh8-age-counted-from-before-the-skip", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("s.last_app_round = choice.round;", "s.last_app_round = first;")],
         tests=["tests/test_global_rounds.py::test_a_rank_slower_than_max_staleness_allows_is_left_out_not_waited_for",
                "tests/test_global_rounds.py::test_a_k_times_slower_rank_enters_about_every_kth_round",
                "tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for",
                "tests/test_global_rounds.py"],
         bug="semantics.md:77-80: a passive value's age is counted from the round its "
             "application last entered; after a lagging app skips to a newer round the age "
             "is now counted from the first round it skipped, so its later values look as "
             "many rounds older as it skipped: left out sooner, contribution ages too large, "
             "and the away report's 'its last round' names a round it never entered"),
    dict(id="fresh8-steps-bound-is-sync-period", file="cpp_ops/engine/core/engine_rounds.cc",
         edits=[("args.max_staleness = s.spec.config.max_staleness;",
                 "args.max_staleness = s.spec.config.sync_period;")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_a_rank_slower_than_max_staleness_allows_is_left_out_not_waited_for",
                "tests/test_global_rounds.py"],
         bug="semantics.md:77-83: a value more than max_staleness rounds old is left out when "
             "its app is ALSO more than max_staleness steps behind the most advanced member; "
             "the steps half of the rule now uses sync_period instead, so with max_staleness "
             "set apart from tau (e.g. 0 with tau 10) stale values of a rank up to tau steps "
             "behind still count (or, max_staleness > tau, are left out too soon)"),
    # --- README.md ---------------------------------------------------------------------
    dict(id="fresh8-schedule-one-phase-too-many", file="cpp_ops/engine/rounds/group_schedule.cc",
         edits=[("for (int L = L0; L <= L0 + 1 && !found; ++L) {",
                 "for (int L = L0 + 1; L <= L0 + 1 && !found; ++L) {")],
         tests=["tests/test_schedule.py::test_power_of_S_is_exactly_the_butterfly",
                "tests/test_api_surface.py::test_schedule_has_the_fewest_phases_for_283_of_441_pairs",
                "tests/test_schedule.py"],
         bug="README:5-7 (semantics.md:111-114): information reaches every rank within "
             "ceil(log_S P) steps, and for P = S^L the phases are the base-S butterfly; the "
             "strided search now starts one phase longer, so hvd.groups(4, 2) has 3 phases "
             "(one of them every rank alone) and mixing takes a step more wherever P > S"),
    dict(id="fresh8-stall-warning-names-the-next-round", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("rank_, plan.global ? \"global\" : \"group\", static_cast<long long>(stall.round),",
                 "rank_, plan.global ? \"global\" : \"group\", static_cast<long long>(stall.round + 1),")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_faults.py"],
         bug="README:195-197 (faults.md:45-47): a stuck rank ends in a warning naming the "
             "rank, stream and round; the inspector's stall warning now prints the round after "
             "the one that waits ('stall: global round 5 of stream 'w' has waited ...' for "
             "round 4), while the timeout error still names round 4"),
    dict(id="fresh8-torch-step-averages-before-the-local-step",
         file="horovod_wagma/torch/optimizer.py",
         edits=[("        loss = super(self.__class__, self).step(closure)\n"
                 "        duties_due = self._average()\n",
                 "        duties_due = self._average()\n"
                 "        loss = super(self.__class__, self).step(closure)\n")],
         tests=["tests/test_optimizer.py::test_models_identical_after_every_global_round",
                "tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync",
                "tests/test_optimizer.py"],
         bug="README:65 (api.md:145-146): step() runs the local optimizer step, then averages "
             "the parameters; the PyTorch optimizer now averages first and steps after, so "
             "every model leaves step() with its own unaveraged update (not identical after "
             "a blocking global round), and the state buffers, fused before the first step "
             "made any state, are never averaged"),
    dict(id="fresh8-group-process-set-is-the-first-group", file="horovod_wagma/common/op/basics.py",
         edits=[("members = next(m for m in phases[phase] if hvd.rank() in m)",
                 "members = phases[phase][0]")],
         tests=["tests/test_api.py::test_api_behaviour",
                "tests/test_init.py::test_every_phase_group_is_a_horovod_process_set",
                "tests/test_api.py"],
         bug="README:114 (api.md:114-118): group_process_set(phase) is this rank's group in "
             "that phase, so any Horovod op runs on a WAGMA group; it now returns the phase's "
             "first group on every rank, so ranks outside it get a ProcessSet they are not "
             "in and hvd.allreduce(t, process_set=hvd.group_process_set(0)) fails there"),
    # --- elastic.md --------------------------------------------------------------------
    dict(id="fresh8-heartbeat-counted-as-work", file="cpp_ops/engine/core/engine.cc",
         edits=[("any = any || (msg.kind != ControlKind::kProbe && msg.kind != ControlKind::kProbeAnswer);",
                 "any = true;")],
         tests=["tests/test_elastic.py::test_an_idle_engine_sleeps_through_the_heartbeat",
                "tests/test_elastic.py"],
         bug="elastic.md:91-101: under Horovod elastic every engine sends a liveness "
             "heartbeat, and an idle engine must not count it as work (it did, polling at "
             "about 1 kHz and starving Horovod's collectives into spurious resets); probes "
             "and their answers count as progress again, so an idle elastic engine never "
             "reaches the pacer's sleep"),
    dict(id="fresh8-membership-change-not-on-timeline", file="horovod_wagma/common/elastic/membership.py",
         edits=[("if self.changes and self.changes[-1][\"generation\"] == self.generation:",
                 "if self.changes and self.changes[-1][\"generation\"] != self.generation:")],
         tests=["tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py"],
         bug="elastic.md:33-34: with WAGMA_TIMELINE set each member set's engine writes its "
             "own trace that starts with a membership_change event; the new member set's "
             "change is no longer recorded on its trace (and a later member set without a "
             "change gets the previous one's event instead)"),
    dict(id="fresh8-timeline-generation-after-extension", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("s.timeline_path.insert(dot, \".gen\" + std::to_string(generation));",
                 "s.timeline_path += \".gen\" + std::to_string(generation);")],
         tests=["tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic.py"],
         bug="elastic.md:33-34: each member set's engine writes trace.gen2.<rank>.json; the "
             "generation is now appended after the extension, trace.json.gen2, which the "
             "rank insertion turns into trace.json.<rank>.gen2: no .json file for the new "
             "member set, and the viewer's 'trace.*.json' pattern misses it"),
]
