"""A tenth fresh batch of planted bugs, by a reviewer who read the user docs
(README.md, docs/api.md, docs/semantics.md, docs/faults.md, docs/elastic.md),
docs/claims.md and the code, but not the tests. The format is lab/mutation/mutants.py's:
each mutant breaks a documented, user-visible behaviour with a one-line (or few-line)
change, and names the tests that should guard it (the pytest node ids docs/claims.md
lists for the promise, plus a whole module where the row looks weak; C++ unit tests the
row names are mentioned in `bug`, since check.py runs them anyway for an engine mutant
and passes only pytest ids on). None edits a line that a mutant of mutants.py,
fresh_batch.py .. fresh_batch9.py, fresh_survivors.py or the detail_*.py batches edits
(checked by locating every earlier `old` text in the current files), and none repeats
a behaviour planted there in the same code path (four are the twin, in another framework's
or another path's own code, of an earlier mutant, and say so). Every `old` text occurs exactly once in its file. The
C++ edits leave no variable or parameter unused: each edited file was compiled alone
with g++ -std=c++17 -fsyntax-only -Wall -Werror, so the engine's unit tests still build
and the mutants are not caught by the build alone. Aimed at what looks under-tested:
second and later uses (a second global round's drift, a re-probed silent peer, a join's
answer on the blocking path), boundaries (a leaver that served only round 0, the oldest
held result, P not a power of S), non-default knob values (staircase=False, SGD
dampening, dynamic process sets, HOROVOD_WAGMA_LOSS_SETTLE_MS), the
Keras twins of PyTorch features, wrappers and forwarded arguments, and the exact
contents of messages and statistics.
Spread: faults.md 6, api.md 6, semantics.md 5, README.md 4, elastic.md 3."""

MUTANTS = [
    # --- faults.md ---------------------------------------------------------------------
    dict(id="fresh10-liveness-silence-restarts-at-every-probe",
         file="cpp_ops/engine/health/peer_liveness.cc",
         edits=[("    if (p.unanswered == Clock::time_point{}) p.unanswered = now;",
                 "    p.unanswered = now;")],
         tests=["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out",
                "tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes",
                "tests/test_faults.py"],
         bug="faults.md:55-59 (and 79-83): peers that stay silent a third again (at least "
             "1 s) after a probe are named first, 'ranks not responding: [2]', before the "
             "deadline; the silence is now counted from the latest probe instead of the "
             "first unanswered one, and a silent peer is re-probed every third (0.67 s with "
             "WAGMA_STALL_WARNING_S=2), so it is never silent the 1 s grace: a SIGSTOPped "
             "rank is no longer named in the stall warning or the stall-timeout error, and "
             "under elastic a stopped host is never found lost by its probes "
             "(peer_liveness_test.cc::TestSilenceAfterAProbe, "
             "TestStoppedRankNamedBeforeTheDeadline)"),
    dict(id="fresh10-engine-staleness-sum-keeps-the-last",
         file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[("    engine_.staleness_sum += staleness;",
                 "    engine_.staleness_sum = staleness;")],
         tests=["tests/test_keras.py::test_fit_graph_mode_with_callbacks",
                "tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join",
                "tests/test_keras.py"],
         bug="faults.md:167-169 (api.md:361-364, README:83): WagmaStatsCallback adds this "
             "rank's per-epoch wagma_mean_staleness, the rounds by which the epoch's "
             "passively contributed models lagged on average; the engine-wide staleness sum "
             "it is computed from now keeps only the last passive join's staleness, so in a "
             "straggler fit the epoch's mean is (last staleness - the previous epoch's last) "
             "/ joins: a fraction, zero or negative instead of the mean. The per-stream "
             "stats() values stay right (only the engine counter, read by the Keras "
             "callback and bench, is wrong); a test that brackets the callback by the same "
             "engine counter cannot see it"),
    dict(id="fresh10-blocking-join-returns-none-unless-last",
         file="horovod_wagma/common/elastic/join_both.py",
         edits=[("        return last if last is not None else engine_lib.join()",
                 "        return last")],
         tests=["tests/test_keras.py::test_uneven_batches_with_join",
                "tests/test_keras.py::test_module_join_serves_rounds_and_returns_the_last_rank",
                "tests/test_join_both.py::test_blocking_horovod_join_when_every_rank_had_joined",
                "tests/test_join_both.py"],
         bug="faults.md:14-15 (api.md:119-122, 333): join() returns the last rank to join, "
             "like hvd.join(), in every module; on the blocking path (horovod_wagma.keras and "
             ".tensorflow, whose Horovod join has no handle to poll) join() now returns the "
             "engine's answer from the moment it started its own join, None on every rank "
             "but the last to arrive, instead of waiting for the engine's answer after "
             "Horovod's join returned. Keras's opt.join() and hvd.join() return None on the "
             "ranks that ran out of data first; the one-process test of the path where every "
             "rank had already joined still passes"),
    dict(id="fresh10-polled-join-raises-horovods-error",
         file="horovod_wagma/common/elastic/join_both.py",
         edits=[("            except Exception as horovod_error:\n"
                 "                _engine_error_over(horovod_error, last)",
                 "            except Exception as horovod_error:\n"
                 "                raise")],
         tests=["tests/test_stall_reports.py::test_a_member_lost_during_join_raises_the_membership_verdict",
                "tests/test_faults.py::test_a_rank_leaving_while_the_others_join_fails_their_join_naming_it",
                "tests/test_join_both.py::test_blocking_horovod_join_that_fails_gives_way_to_the_engines_error",
                "tests/test_join_both.py"],
         bug="faults.md:100-102 and 85-95 (api.md:54-56): engine errors fail any join() in "
             "progress with the engine's text, and under elastic a lost member reaches the "
             "application as WagmaMembershipChanged (reset) or WagmaFenced (the script "
             "ends); in PyTorch's polled join (Horovod's join handle polled beside the "
             "engine's) a failed Horovod join now raises Horovod's own error at once instead "
             "of waiting the settle window for the engine's verdict: under elastic, where "
             "Horovod's join sees the closed connection first, a member lost during join() "
             "gives a HorovodInternalError without the membership verdict, and a fenced "
             "minority resets instead of ending. The TensorFlow path (test_join_both's "
             "one-process case) is unchanged"),
    dict(id="fresh10-loss-settle-variable-misnamed",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[('EnvDouble("HOROVOD_WAGMA_LOSS_SETTLE_MS", s.loss_settle_ms)',
                 'EnvDouble("HOROVOD_WAGMA_LOSS_SETTLE_S", s.loss_settle_ms)')],
         tests=["tests/test_elastic.py::test_a_stopped_host_is_found_by_liveness_probes",
                "tests/test_stall_reports.py::test_a_member_lost_during_join_raises_the_membership_verdict",
                "tests/test_elastic.py"],
         bug="faults.md:85-86 and the table at faults.md:111 (HOROVOD_WAGMA_LOSS_SETTLE_MS, "
             "default 1500: milliseconds from the first lost peer to the membership "
             "verdict); the engine now reads HOROVOD_WAGMA_LOSS_SETTLE_S, so setting the "
             "documented variable has no effect: the verdict always settles 1.5 s, and "
             "horovod_wagma.common.op.engine_lib.verdict_delay_ms() (which join() waits on for "
             "the verdict) reports 1500 whatever is set; a script that shortens the window "
             "to 300 ms still waits 1.5 s, one that widens it for a slow cut gets split "
             "verdicts (engine_settings_test.cc::TestVariablesChangeThem, if it sets it)"),
    dict(id="fresh10-early-exit-after-round-0-said-never-joined",
         file="cpp_ops/engine/transport/peer_roster.cc",
         edits=[("    text += last_round < 0 ? std::string(\"never joining stream '\")",
                 "    text += last_round <= 0 ? std::string(\"never joining stream '\")")],
         tests=["tests/test_faults.py::test_early_exit_is_announced",
                "tests/test_faults.py::test_registrar_exit_fails_new_streams",
                "tests/test_faults.py"],
         bug="faults.md:33-36 (README:195-197): a rank that exits without join() is named "
             "with the last round it served, 'rank 3 left without join(): its engine shut "
             "down after round 6 of stream 'w', and round 9 needs it'; a leaver whose last "
             "round served was round 0 (a script that ends after its first, validating "
             "round, e.g. one global sync then an early return on one rank) is now said to "
             "have shut down 'after never joining stream 'w'', which is false (it served "
             "round 0) and drops the round it served from the message "
             "(peer_roster_test.cc::TestTheLastRoundServedCompletesTheNextFails checks the "
             "rule, not this text)"),
    # --- api.md --------------------------------------------------------------------------
    dict(id="fresh10-json-escape-leaves-backslashes",
         file="cpp_ops/engine/observe/timeline.cc",
         edits=[("    if (c == '\"' || c == '\\\\') {",
                 "    if (c == '\"') {")],
         tests=["tests/test_fuzz.py::test_fuzz_public_api",
                "tests/test_fuzz.py::test_stream_names",
                "tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_timeline_format.py::test_writer_output_is_valid_chrome_trace",
                "tests/test_timeline_format.py"],
         bug="api.md:79-80 and 123-125 (faults.md:72-73, 150-151, 172-175): a stream name "
             "is any str without NUL, and stats() returns every stream by name; JSON "
             "escaping (used for the stats JSON the frontends parse and for every timeline "
             "event) no longer escapes backslashes, so a stream named e.g. 'C:\\\\w' or "
             "'layer\\\\' makes stats() raise a JSONDecodeError (or, for 'a\\\\b', report a "
             "key with a backspace in it, so stats('a\\\\b') is a ValueError), and "
             "WAGMA_TIMELINE writes a trace that Perfetto and python -m horovod_wagma.timeline "
             "cannot load; names without a backslash are unaffected"),
    dict(id="fresh10-keras-lr-schedule-staircase-swapped",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("                         staircase, momentum_correction, steps_per_epoch)",
                 "                         momentum_correction, staircase, steps_per_epoch)")],
         tests=["tests/test_api_surface.py::test_keras_learning_rate_schedule_is_horovods",
                "tests/test_api_surface.py"],
         bug="api.md:354-358 (README:87-88): LearningRateScheduleCallback is Horovod's "
             "schedule with the same arguments; it now hands Horovod's implementation "
             "momentum_correction in staircase's place and staircase in "
             "momentum_correction's, so staircase=False (a smooth, per-batch schedule) gives "
             "a staircase one (the defaults, both True, are unchanged), and "
             "momentum_correction=False with staircase=True changes the lr per batch; the "
             "warm-up callback is unaffected"),
    dict(id="fresh10-torch-poll-after-failed-synchronize-raises",
         file="horovod_wagma/torch/ops.py",
         edits=[("    if handle._result is not None or handle._error is not None:",
                 "    if handle._result is not None:")],
         tests=["tests/test_api.py::test_api_behaviour",
                "tests/test_api_surface.py::test_synchronize_and_poll_take_horovod_handles",
                "tests/test_torch_handle.py::test_interrupted_synchronize_keeps_the_round_tensors_until_it_ends",
                "tests/test_torch_handle.py"],
         bug="api.md:64-68 and 88 (README:110): poll(handle) is True when synchronize will "
             "not block, and errors raise WagmaError; once synchronize() has raised a "
             "round's WagmaError (a peer left, a stall timeout), poll() on that handle now "
             "asks the engine about a handle it already forgot and raises a plain "
             "RuntimeError 'unknown handle N' instead of returning True; a loop that polls "
             "its handles after an error (or a second synchronize after poll) dies with an "
             "untyped error. Successful handles are unaffected (their result is cached)"),
    dict(id="fresh10-shares-start-one-share-late",
         file="horovod_wagma/common/balance/balanced_shares.py",
         edits=[("    start = sum(shares[:rank])",
                 "    start = sum(shares[:rank + 1])")],
         tests=["tests/test_balanced_sampler.py::test_every_sample_exactly_once_per_epoch",
                "tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance",
                "tests/test_balanced_sampler.py::test_lbbsp_equal_steps_batches_follow_speeds_and_weights_give_the_mean_gradient",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit",
                "tests/test_balanced_sampler.py"],
         bug="api.md:233-240, 261-263 and 291-296 (README:97-100): each rank takes a "
             "contiguous share of the epoch's permutation, so every sample is dealt exactly "
             "once per epoch; every rank's share now starts where its own should end, so "
             "rank r deals rank r+1's samples (rank 0 never sees its own) and the last "
             "rank's slice runs off the end of the permutation and comes out short or empty: "
             "in BalancedDistributedSampler, BalancedBatchSampler and Keras's "
             "BalancedSequence alike, len(sampler) still says the share while fewer samples "
             "are yielded"),
    dict(id="fresh10-throughput-divides-by-cycles",
         file="horovod_wagma/common/balance/throughput_exchange.py",
         edits=[("        return self._samples / (self._clock.steps() + 1) / seconds",
                 "        return self._samples / self._clock.steps() / seconds")],
         tests=["tests/test_balanced_sampler.py::test_step_clock_counts_own_work_and_takes_out_waits",
                "tests/test_balanced_sampler.py::test_shares_follow_the_injected_speeds_and_rebalance",
                "tests/test_keras.py::test_balanced_sequence_follows_speeds_in_fit",
                "tests/test_balanced_sampler.py"],
         bug="api.md:227-229 and 241-242 (README:93-94): the throughput each rank reports is "
             "samples per second of its own work, samples per step over the median cycle, and "
             "`throughputs` holds the gathered samples/s; it now divides the epoch's samples "
             "by the cycles measured (one fewer than the steps), so every rank overstates "
             "its throughput by (n+1)/n, most for the rank with the fewest steps: a slow rank "
             "with 4 steps an epoch reports 1.25x its speed and is given a larger share than "
             "its speed earns (the shares' proportions drift towards equal), and "
             "`throughputs` no longer reads samples/s"),
    dict(id="fresh10-dynamic-group-sets-added-twice",
         file="horovod_wagma/common/op/basics.py",
         edits=[("                if len(key) == self._hvd.size() or key in self._group_sets:",
                 "                if len(key) == self._hvd.size():")],
         tests=["tests/test_init.py::test_every_phase_group_is_a_horovod_process_set",
                "tests/test_api.py::test_api_behaviour",
                "tests/test_init.py"],
         bug="api.md:29-32 and 114-118 (README:114): with process_sets=\"dynamic\" (or "
             "HOROVOD_DYNAMIC_PROCESS_SETS=1) every phase's groups are registered once, "
             "groups already registered not twice, so group_process_set(phase) gives any "
             "Horovod op a WAGMA group; registration no longer skips groups it already "
             "added, so a schedule whose phases repeat a group (P not a power of S, e.g. "
             "P = 5 or 6 with group_size=2, where the rotations reuse groups) calls Horovod's "
             "add_process_set twice for the same ranks and init() fails on every rank "
             "(Horovod: 'Attempted to add a duplicate process set'); P = 3 and powers of S "
             "are unaffected"),
    # --- semantics.md --------------------------------------------------------------------
    dict(id="fresh10-superseded-rounds-keep-the-oldest",
         file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("  while (r >= s.next_app_round() && ServedPassively(s, r)) --r;",
                 "  while (r > s.next_app_round() && ServedPassively(s, r)) --r;")],
         tests=["tests/test_global_rounds.py::test_held_results_stay_bounded_over_thousands_of_rounds",
                "tests/test_global_rounds.py"],
         bug="semantics.md:95-96 (memory): a lagging application needs only the newest "
             "served result and the engine keeps only that one; the search for older served "
             "rounds to drop now stops one round short, at the application's next round, so "
             "while an application is away its engine holds two results (the oldest served "
             "round's and the newest) instead of one: one extra model copy per "
             "wait-avoiding global stream (engine stats rounds_held 2, not 1, with the app "
             "away); a bound of max_staleness + 2 held rounds does not see it "
             "(round_policy_test.cc::TestSupersedeKeepsOneResult)"),
    dict(id="fresh10-solo-rounds-never-passed",
         file="cpp_ops/engine/rounds/round_policy.cc",
         edits=[("      if (!s.Solo(r)) break;\n"
                 "      passed_solo = true;\n"
                 "      continue;",
                 "      break;")],
         tests=["tests/test_global_rounds.py::test_a_k_times_slower_rank_enters_about_every_kth_round",
                "tests/test_global_rounds.py::test_fast_ranks_do_not_wait_for_a_persistent_straggler",
                "tests/test_global_rounds.py"],
         bug="semantics.md:72-76: where P is not a power of S some phases leave a rank alone "
             "in its group, and the skip passes over those rounds (with two or more served "
             "rounds beyond), so a k-times slower rank enters roughly every k-th round; the "
             "skip now stops at the first round this rank is alone in, so at P = 3 or 6 "
             "with S = 2 a slow rank's application re-enters every solo round and lags "
             "further behind (its rounds_skipped far below rounds - calls; measured in the "
             "code's own comment: a 4x slower host at P=6, S=2 lagged until max_staleness "
             "left it out); powers of S are unaffected "
             "(round_policy_test.cc::TestSoloRoundsPassedOnlyWithTwoServedBeyond)"),
    dict(id="fresh10-torch-drift-dampening-ignored",
         file="horovod_wagma/torch/drift_correction.py",
         edits=[("            scales.append((1.0 - beta) / (1.0 - damp))",
                 "            scales.append(1.0 - beta)")],
         tests=["tests/test_optimizer.py::test_drift_correction_default_alpha_per_group_scale_and_adam",
                "tests/test_optimizer_core.py::test_drift_correction_reads_each_parameter_groups_moment",
                "tests/test_optimizer.py::test_drift_correction_removes_a_non_iid_bias",
                "tests/test_optimizer.py"],
         bug="semantics.md:158-162 (api.md:174-180): each rank's control variate is learnt "
             "from its momentum's move at global rounds, converted to gradient units, so "
             "that the models follow the ranks' mean gradient; for torch.optim.SGD the "
             "conversion k = (1 - momentum) / (1 - dampening) now drops the dampening, so "
             "with SGD(momentum=0.9, dampening=0.5) the variates are learnt at half the "
             "intended rate (c_i after the first global round is 0.5x the exact value) and "
             "the non-IID bias is removed more slowly; dampening=0 (the default) is "
             "unaffected"),
    dict(id="fresh10-keras-drift-variate-replaced-not-accumulated",
         file="horovod_wagma/keras/drift_correction.py",
         edits=[("                c.assign_add(tf.cast(self._alpha * k, c.dtype) * tf.reshape(part, c.shape))",
                 "                c.assign(tf.cast(self._alpha * k, c.dtype) * tf.reshape(part, c.shape))")],
         tests=["tests/test_keras.py::test_on_sync_state_and_drift_correction_remove_a_non_iid_bias",
                "tests/test_keras.py::test_drift_correction_learns_from_adams_first_moment",
                "tests/test_keras.py"],
         bug="semantics.md:158-162 (api.md:330-333): in Keras, as in PyTorch, each rank's "
             "control variate accumulates at every global round, c_i <- c_i + alpha k (m̄ - "
             "m_i), and its fixed point is the mean gradient minus the rank's own; the Keras "
             "variate is now replaced by the last round's step alpha k (m̄ - m_i), so from "
             "the second global round on it forgets what it learnt (it shrinks back towards "
             "zero as the moments agree) and the non-IID bias returns. Exact after round 0 "
             "(where c_i was 0), so a check of the first round alone passes; the Keras twin "
             "of the PyTorch mutant drift-forgets, in Keras's own code"),
    dict(id="fresh10-noname-counter-advanced-by-named-calls",
         file="horovod_wagma/common/op/basics.py",
         edits=[("        _, fields, members = self.stream_config(process_set, **knobs)\n"
                 "        if name is None:\n"
                 "            name = f\"group_allreduce.noname.{next(self._noname)}\"",
                 "        _, fields, members = self.stream_config(process_set, **knobs)\n"
                 "        number = next(self._noname)\n"
                 "        if name is None:\n"
                 "            name = f\"group_allreduce.noname.{number}\"")],
         tests=["tests/test_fuzz.py::test_fuzz_public_api",
                "tests/test_fuzz.py::test_stream_names",
                "tests/test_api.py::test_op_on_disjoint_process_sets",
                "tests/test_api.py"],
         bug="semantics.md:25-26 (api.md:79-80): unnamed calls get a name from a counter "
             "that every rank advances alike; named calls now advance it too, so once ranks "
             "have made different numbers of named calls (a named stream over a process set "
             "that some ranks are not in, or a rank-0-only metric stream), their next "
             "unnamed calls get different names: the ranks wait in different streams' round "
             "0 (a stall) or, with equal shapes by chance, average with the wrong stream. "
             "Scripts whose ranks all make the same calls are unaffected"),
    # --- README.md -----------------------------------------------------------------------
    dict(id="fresh10-joiners-take-the-survivors-committed-counters",
         file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("        counters = {k: getattr(self, k) for k in self._saved_state}",
                 "        counters = dict(self._saved_state)")],
         tests=["tests/test_elastic_state.py::test_joiners_take_the_lowest_ranked_survivors_counters_survivors_keep_theirs",
                "tests/test_elastic.py::test_host_added_starts_from_the_survivors_average",
                "tests/test_elastic_state.py::test_commit_keeps_counters_and_rng_restore_undoes_nothing",
                "tests/test_elastic_state.py"],
         bug="README:155-158 (api.md:50-54, elastic.md:31-32): hosts added start from the "
             "survivors' average and counters, nothing is restored from the last commit and "
             "no step counter goes back; the counters the lowest-ranked survivor sends to "
             "the joiners are now its last commit()'s, not its current ones, so after a host "
             "is added the joiners start at the epoch/batch of the survivors' last commit "
             "(behind the survivors by every step since, e.g. batch=40 committed, 47 now) and "
             "train those steps again out of step with the survivors; with a commit every "
             "step the two agree, which hides it"),
    dict(id="fresh10-keras-state-without-optimizer-never-rebases",
         file="horovod_wagma/keras/elastic.py",
         edits=[("        self.optimizer = optimizer if optimizer is not None else model.optimizer",
                 "        self.optimizer = optimizer")],
         tests=["tests/test_elastic.py::test_keras_host_killed_survivors_go_on_without_rollback",
                "tests/test_elastic_state.py::test_keras_state_drops_traced_functions_and_averages_every_floating_variable",
                "tests/test_elastic_state.py"],
         bug="README:135-137 (elastic.md:8-16, api.md:50-53): Keras's WagmaState takes "
             "KerasState's signature, the optimizer defaulting to the one compiled into the "
             "model (the recipe's WagmaState(model, batch=0, epoch=0)); without an explicit "
             "optimizer it now holds None, so reset() never rebases the optimizer's rounds: "
             "after a membership change the new engine counts rounds from 0 while the "
             "optimizer's step numbering (and its state-averaging last served round) goes "
             "on from the old member set, so the global rounds' duties (on_sync state "
             "averaging, the fp16 rule) run at the wrong steps and survivors and joiners "
             "disagree on which rounds carry them (the joiners' state stream waits for "
             "survivors that never enter it); passing the optimizer explicitly hides it"),
    dict(id="fresh10-timeline-wait-span-starts-at-its-last-slice",
         file="cpp_ops/engine/core/handle_table.cc",
         edits=[("  if (s.outcome.first_wait_at_us == 0) s.outcome.first_wait_at_us = t0_us;",
                 "  s.outcome.first_wait_at_us = t0_us;")],
         tests=["tests/test_observability.py::test_stats_count_a_known_straggler",
                "tests/test_timeline_format.py::test_writer_output_is_valid_chrome_trace",
                "tests/test_observability.py"],
         bug="README:197-198 (faults.md:172-175): WAGMA_TIMELINE writes a Chrome trace per "
             "rank with the application's calls and waits; PyTorch waits in 100 ms slices, "
             "and a wait's start is now taken from its last slice instead of its first, "
             "while its length is still the whole wait: every wait longer than one slice "
             "(e.g. 0.5 s in a blocking global round for a straggler) is drawn starting "
             "about 0.1 s before the round completed and running up to the whole wait past "
             "it, over the next calls, so the trace no longer shows where the application "
             "waited; the total wait (and global_wait_s) is unchanged, so a check that sums "
             "the spans passes"),
    dict(id="fresh10-torch-fusion-mixes-dtypes",
         file="horovod_wagma/torch/fusion.py",
         edits=[("        buckets, lambda t: (str(t.device), str(t.dtype)))]",
                 "        buckets, lambda t: str(t.device))]")],
         tests=["tests/test_fusion.py::test_fuse_by_dtype_splits_by_device_and_dtype_in_a_stable_order",
                "tests/test_optimizer.py::test_models_identical_after_every_global_round",
                "tests/test_fusion.py"],
         bug="README:65 (semantics.md:124-127): step() averages the parameters in one fused "
             "buffer per dtype; PyTorch's fusion now splits by device only, so a model with "
             "float32 and float64 (or bfloat16) parameters packs them all into one buffer "
             "of the first parameter's dtype: float64 parameters are rounded to float32 "
             "(or a float32 model's to bfloat16) at every step, and the fp16 rule applies "
             "to the whole buffer; single-dtype models are unaffected. The PyTorch twin of "
             "detail4-api-keras-fusion-kind-is-the-device, in torch's own fusion"),
    # --- elastic.md ----------------------------------------------------------------------
    dict(id="fresh10-generation-trace-dot-in-directory",
         file="cpp_ops/engine/core/engine_settings.cc",
         edits=[("    const size_t slash = s.timeline_path.find_last_of('/');",
                 "    const size_t slash = s.timeline_path.find_first_of('/');")],
         tests=["tests/test_elastic.py::test_host_killed_survivors_go_on_without_rollback",
                "tests/test_membership.py::test_a_reset_before_the_first_sync_completed_is_numbered_anew_and_keeps_its_joiner",
                "tests/test_membership.py"],
         bug="elastic.md:33-34 (faults.md:172-174): with WAGMA_TIMELINE set each member "
             "set's engine writes its own trace, trace.gen2.<rank>.json; the generation is "
             "now inserted at the last dot of the path unless it lies before the first "
             "slash, so a dot in a directory name (WAGMA_TIMELINE=/tmp/run.1/trace, or "
             "./out/trace) puts '.gen2' into the directory (/tmp/run.gen2.1/trace.3), which "
             "does not exist: the engine of every member set after the first cannot open "
             "its trace and fails to start (or writes elsewhere); paths without a dot in a "
             "directory are unaffected. The elastic twin of "
             "fresh9-timeline-dot-in-directory-taken-for-extension, in the generation's own "
             "path code"),
    dict(id="fresh10-reformed-fenced-text-lists-a-python-list",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[("f\"fenced: ranks {', '.join(map(str, lost))} of the previous member set were \"",
                 "f\"fenced: ranks {lost} of the previous member set were \"")],
         tests=["tests/test_membership.py::test_a_re_formed_job_is_judged_against_the_previous_member_set",
                "tests/test_membership.py::test_a_fenced_side_ends_the_script_a_lost_member_resets",
                "tests/test_membership.py"],
         bug="elastic.md:27-29 (faults.md:90-95): a side with half or fewer of the member "
             "set stops with WagmaFenced naming the lost ranks as the engine's verdict does "
             "('fenced: ranks 2, 3 ...'); the re-formed job's own check now names them as a "
             "Python list, 'fenced: ranks [2, 3] of the previous member set were lost', so "
             "the two texts for the same verdict differ and a log search for the engine's "
             "form ('ranks 2, 3') misses it"),
    dict(id="fresh10-keras-elastic-average-divides-by-all",
         file="horovod_wagma/keras/elastic.py",
         edits=[("        mean = total / float(survivors)",
                 "        mean = total / float(_hvd_tf.size())")],
         tests=["tests/test_elastic_state.py::test_keras_state_drops_traced_functions_and_averages_every_floating_variable",
                "tests/test_elastic.py::test_host_added_starts_from_the_survivors_average",
                "tests/test_elastic_state.py"],
         bug="elastic.md:31-32 (README:158, api.md:52-53): hosts added: the joiners weigh 0 "
             "in the first average, so every rank starts from the survivors' average; "
             "Keras's WagmaState now divides the survivors' weighted sum by every rank, "
             "joiners included, so after 2 ranks join 6 survivors every Keras model "
             "(BatchNorm statistics too) is scaled by 6/8; with survivors alone (a host "
             "lost) it is unchanged. The Keras twin of fresh2-torch-elastic-average-divides-"
             "by-all, in Keras's own state"),
]
