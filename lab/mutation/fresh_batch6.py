"""A sixth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md) and the
code, but not the tests; written 2026-12-03. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the pytest node ids docs/claims.md
lists for the promise, plus a whole module where the row looks weak; C++ unit tests
the row names are mentioned in `bug`, since check.py runs them anyway for an engine
mutant and passes only pytest ids on). None repeats a behaviour planted in mutants.py,
fresh_batch.py .. fresh_batch5.py, fresh_survivors.py or the detail_*.py batches."""

MUTANTS = [
    # --- C++ engine -------------------------------------------------------------------
    dict(id="fresh6-timeline-rank-placeholder-left-in-path", file="cpp_ops/engine/observe/timeline.cc",
         edits=[("      out += rank_text;\n",
                 "      out += kPlaceholder;\n")],
         tests=["tests/test_timeline_format.py::test_rank_placeholder_and_backwards_clock",
                "tests/test_timeline_format.py"],
         bug="api.md/faults.md: WAGMA_TIMELINE with '{rank}' in the path writes one trace per "
             "rank with the rank put in its place; the placeholder is now copied through "
             "unchanged, so every rank opens the same literal 'trace.{rank}.json' and they "
             "overwrite each other"),
    dict(id="fresh6-rounds-skipped-counts-skips-not-rounds",
         file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("streams_[stream].rounds_skipped += n;",
                 "streams_[stream].rounds_skipped += n > 0 ? 1 : 0;")],
         tests=["tests/test_global_rounds.py::test_a_k_times_slower_rank_enters_about_every_kth_round",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler"],
         bug="faults.md/semantics.md: stats()'s rounds_skipped counts the ROUNDS a lagging "
             "application skipped; it now counts one per call that skipped, however many "
             "rounds that call jumped, so a 4x slower rank shows about a third of its skipped "
             "rounds (rounds_skipped != rounds - calls)"),
    dict(id="fresh6-verdict-counts-lost-ranks-as-remaining",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("std::to_string(size_ - n) + \" of \"",
                 "std::to_string(size_) + \" of \"")],
         tests=["tests/test_elastic.py::test_a_minority_left_alone_is_fenced",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback"],
         bug="faults.md/elastic.md: the elastic verdict says how many ranks remain ('ranks 2, "
             "3 were lost (...); 2 of 4 ranks remain', 'fenced: ... 2 of 8 ranks remain on "
             "this side, not a majority'); it now always says 'P of P ranks remain', the lost "
             "ranks counted as remaining, in both the membership-changed and the fenced text"),
    dict(id="fresh6-away-report-names-next-round", file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("static_cast<long long>(s.last_app_round),",
                 "static_cast<long long>(s.next_app_round),")],
         tests=["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
         bug="faults.md: the away-application report says 'the application of rank 3 has "
             "not called stream ... (its last round: 120)'; it now gives the round after its "
             "last (or further: the next round the app would enter), not the one it last "
             "called"),
    dict(id="fresh6-loop-pause-compared-with-stall-warning",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("if (cfg.hold_report_s > 0 && pause.seconds > cfg.hold_report_s) {",
                 "if (cfg.hold_report_s > 0 && pause.seconds > cfg.warning_s) {")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py"],
         bug="faults.md: an engine loop that did not run for WAGMA_HOLD_REPORT_S says so on "
             "resuming ('hold: this engine's loop did not run for 12.3 s') and counts in "
             "loop_pauses; the pause is now compared with WAGMA_STALL_WARNING_S (60 s by "
             "default), so a 12 s or 2 s stop is never reported nor counted"),
    dict(id="fresh6-hold-report-activations-sent-inverted", file="cpp_ops/engine/health/hold_report.cc",
         edits=[("(rs.activated_all ? \"yes\" : \"no\")",
                 "(rs.activated_all ? \"no\" : \"yes\")")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py"],
         bug="faults.md: the hold report says how the held round was joined, 'joined by the "
             "app, activations sent: yes'; the yes/no is now inverted, so a round whose "
             "activations went out is reported as never having sent them (and the other way "
             "round), pointing the reader at the wrong side"),
    dict(id="fresh6-early-exit-names-round-after-its-last", file="cpp_ops/engine/transport/peer_roster.cc",
         edits=[(": \"round \" + std::to_string(last_round) + \" of stream '\" +",
                 ": \"round \" + std::to_string(last_round + 1) + \" of stream '\" +")],
         tests=["tests/test_faults.py::test_early_exit_is_announced", "tests/test_faults.py"],
         bug="faults.md: an early exit fails the others with 'rank 3 left without join(): its "
             "engine shut down after round 6 of stream 'w', and round 9 needs it'; the "
             "last round served is now reported one too high ('after round 7'), a round the "
             "leaver never served"),
    dict(id="fresh6-half-with-rank0-fenced-half-without-goes-on",
         file="cpp_ops/engine/health/majority_rule.h",
         edits=[("return 2 * remaining == size && lost.count(0) == 0;",
                 "return 2 * remaining == size && lost.count(0) == 1;")],
         tests=["tests/test_membership.py::test_a_fenced_side_ends_the_script_a_lost_member_resets",
                "tests/test_membership.py::test_a_re_formed_job_is_judged_against_the_previous_member_set",
                "tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback"],
         bug="README/faults.md/elastic.md: a side with exactly half of the member set goes on "
             "only if it holds rank 0; the rule is now inverted for halves: the half WITH "
             "rank 0 is fenced (WagmaFenced, the script ends) and the half without it trains "
             "on (majority_rule_test.cc::TestCases)"),
    dict(id="fresh6-hold-report-variable-misspelt", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("EnvDouble(\"WAGMA_HOLD_REPORT_S\", s.hold_report_s)",
                 "EnvDouble(\"WAGMA_HOLD_REPORT\", s.hold_report_s)")],
         tests=["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on",
                "tests/test_faults.py::test_hold_report_zero_reports_nothing"],
         bug="faults.md/api.md: WAGMA_HOLD_REPORT_S sets the seconds of waiting before the "
             "hold report (0: never); the engine now reads a misspelt name, so the variable "
             "is ignored: reports always come after the default 10 s, and 0 does not turn "
             "them off (engine_settings_test.cc::TestVariablesChangeThem)"),
    dict(id="fresh6-fragment-scope-default-all", file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("f.scope = scope && *scope ? scope : \"remote\";",
                 "f.scope = scope && *scope ? scope : \"all\";")],
         tests=["tests/test_gossip.py::test_gossip_matches_exact_trajectory",
                "tests/test_bad_input.py::test_fragment_settings_must_match_on_every_rank"],
         bug="api.md/launching.md: HOROVOD_WAGMA_FRAGMENT_SCOPE defaults to 'remote' (only "
             "cross-node messages are cut); the default is now 'all', so messages between "
             "ranks of one node are cut into 64512-byte fragments too (messages_cut > 0 on a "
             "single host, the extra per-fragment cost on every large round)"),
    # --- common/ ----------------------------------------------------------------------
    dict(id="fresh6-optimizer-group-size-at-most-8", file="horovod_wagma/common/op/schedule.py",
         edits=[("max(OPTIMIZER_MIN_GROUP, default_group_size(num_ranks))",
                 "min(OPTIMIZER_MIN_GROUP, default_group_size(num_ranks))")],
         tests=["tests/test_schedule.py::test_optimizer_group_size_is_every_rank_up_to_8_then_at_least_8",
                "tests/test_optimizer_core.py::test_default_group_size_is_the_optimizers_and_follows_the_member_set"],
         bug="README/api.md: the optimizers' default group_size is every rank up to 8, then 8, "
             "beyond 64 the smallest power of two >= sqrt(P) (min(P, max(8, default))); it is "
             "now min(P, min(8, default)): the op's sqrt rule capped at 8, so P = 8 averages "
             "in groups of 4, P = 16 in groups of 4 and P = 100 in groups of 8, not 16"),
    dict(id="fresh6-unsupported-dtype-value-error", file="horovod_wagma/common/op/basics.py",
         edits=[("raise TypeError(\"group_allreduce supports float32",
                 "raise ValueError(\"group_allreduce supports float32")],
         tests=["tests/test_bad_input.py::test_mismatches_and_invalid_knobs",
                "tests/test_fuzz.py::test_fuzz_public_api"],
         bug="api.md/faults.md: dtypes other than float32/64, float16 and bfloat16 raise "
             "TypeError; an int32 (or any unsupported) tensor now raises ValueError, in "
             "both the PyTorch and the TensorFlow op, so 'except TypeError' misses it"),
    dict(id="fresh6-contribution-age-mean-over-all-passive-joins",
         file="horovod_wagma/common/op/stats.py",
         edits=[("sum(a * n for a, n in ages.items()) / aged if aged else 0.0",
                 "sum(a * n for a, n in ages.items()) / joins if joins else 0.0")],
         tests=["tests/test_global_rounds.py::test_a_left_out_member_and_the_others_get_exact_values",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_global_rounds.py"],
         bug="faults.md: contribution_age_mean is the mean age of the passive values that "
             "ENTERED the average; it is now divided by every passive join, left-out ones "
             "included, so a rank whose engine was left out shows a mean age below its "
             "histogram's (and near 0 when most of its joins were left out)"),
    dict(id="fresh6-drop-last-truncates-a-row-too-many",
         file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("return math.ceil((n - replicas) / replicas) * replicas",
                 "return math.floor((n - replicas) / replicas) * replicas")],
         tests=["tests/test_balanced_sampler.py::test_drop_last_without_shuffle",
                "tests/test_api_surface.py::test_balanced_sequence_drop_last_is_torchs"],
         bug="api.md: with drop_last the epoch is truncated as torch's DistributedSampler "
             "truncates it (ceil((n - P) / P) samples a rank); it now rounds down, so 11 "
             "samples over 2 ranks deal 8 instead of 10, and BalancedDistributedSampler and "
             "BalancedSequence drop samples torch would keep"),
    dict(id="fresh6-fusion-unlisted-parameters-share-a-bucket",
         file="horovod_wagma/common/optimizer/fusion_plan.py",
         edits=[("[[v] for v in variables\n"
                 "                                                 if id(v) not in listed]",
                 "[[v for v in variables\n"
                 "                                                  if id(v) not in listed]]")],
         tests=["tests/test_optimizer_core.py::test_fusion_plan_buckets"],
         bug="api.md: groups= as a list of lists makes each list a bucket and 'every other "
             "parameter alone'; the parameters not listed are now fused into one shared "
             "bucket (one stream) instead of a bucket (stream) each"),
    dict(id="fresh6-optimizer-default-sync-period-20",
         file="horovod_wagma/common/optimizer/optimizer_knobs.py",
         edits=[("    sync_period: int = 10\n", "    sync_period: int = 20\n")],
         tests=["tests/test_optimizer_core.py::test_knob_defaults_and_global_rounds_resolution",
                "tests/test_optimizer_core.py::test_global_stream_knobs"],
         bug="README/api.md/semantics.md: DistributedWagmaOptimizer's sync_period defaults to "
             "10 (and max_staleness with it); both optimizers now default to 20, so an "
             "optimizer built without sync_period averages globally half as often and "
             "tolerates twice the staleness"),
    # --- PyTorch ----------------------------------------------------------------------
    dict(id="fresh6-torch-blocking-inplace-returns-a-copy", file="horovod_wagma/torch/ops.py",
         edits=[("return synchronize(group_allreduce_async_(tensor, name, process_set=process_set,",
                 "return synchronize(group_allreduce_async(tensor, name, process_set=process_set,")],
         tests=["tests/test_api.py::test_api_behaviour", "tests/test_fuzz.py::test_fuzz_public_api"],
         bug="README/api.md: group_allreduce_(x) is the blocking in-place form and returns "
             "x; it now runs the out-of-place op, so x is left unchanged and a new tensor "
             "comes back (callers that ignore the return value keep their own, unaveraged "
             "values)"),
    # --- Keras / TensorFlow -----------------------------------------------------------
    dict(id="fresh6-keras-stats-passive-joins-cumulative", file="horovod_wagma/keras/callbacks.py",
         edits=[("logs[\"wagma_passive_joins\"] = d[\"passive_joins\"]",
                 "logs[\"wagma_passive_joins\"] = now[\"passive_joins\"]")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks", "tests/test_keras.py"],
         bug="api.md/faults.md: WagmaStatsCallback adds this rank's PER-EPOCH "
             "wagma_passive_joins to the logs; it now logs every passive join since the "
             "engine started, so the count grows from epoch to epoch (and "
             "wagma_mean_staleness no longer matches it)"),
    dict(id="fresh6-keras-warmup-epochs-ignored", file="horovod_wagma/keras/callbacks.py",
         edits=[("super().__init__(tf.keras.backend, initial_lr, warmup_epochs, momentum_correction,",
                 "super().__init__(tf.keras.backend, initial_lr, 5, momentum_correction,")],
         tests=["tests/test_no_deadlock.py::test_keras_fit_with_horovod_callbacks_over_many_epochs"],
         bug="api.md: LearningRateWarmupCallback takes Horovod's arguments, warmup_epochs "
             "among them; the value given is now dropped and the warm-up always lasts the "
             "default 5 epochs, so a script's warmup_epochs=2 still ramps the lr over 5"),
    dict(id="fresh6-tf-op-wait-avoiding-knob-ignored", file="horovod_wagma/tensorflow/ops.py",
         edits=[("wait_avoiding=bool(wait_avoiding),", "wait_avoiding=True,")],
         tests=["tests/test_straggler.py::test_without_wait_avoidance_partners_wait",
                "tests/test_straggler.py", "tests/test_keras.py"],
         bug="api.md: the TensorFlow group_allreduce takes the same arguments and semantics "
             "as the PyTorch op, and wait_avoiding=False makes group rounds wait for every "
             "member; the kernel now always gets wait_avoiding=True, so the TF op (and the "
             "Keras optimizer with wait_avoiding=False) joins stragglers passively instead "
             "of waiting for them"),
]
