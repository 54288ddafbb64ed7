"""Fourth detail pass, the rounds', schedule's, fuzz's, join's and membership's tests
(tests/test_global_rounds.py, test_no_deadlock.py, test_schedule.py, test_fuzz.py,
test_join_both.py, test_membership.py), 2026-12-04: "behaviours no test runs". Each
mutant breaks a documented behaviour that the tests before this pass never exercised,
only its first kind: the "local" rule past a passive round whose c predates a result
the app applied (only the extended 8-rank drift test reached it), a blocking stream's
passive values old in rounds (every stats check of rounds_kept_ahead was on
wait-avoiding streams), TensorFlow's blocking join path failing (its multi-rank test is
extended), an elastic reset before the first sync completed (every membership test
agreed right after a completed sync), schedules beyond 64 ranks (the tests stopped at
P = 64, one 64-bit word), global_rounds given a value of the wrong type (no test passed
one but strings) and the validation metrics of a Keras fit (no make-test assertion read
them). `tests` names the strengthened test; with the tests as they were, every mutant
here is expected to SURVIVE (make test). The C++ mutants name no unit test: none
reaches them (check.py runs `make engine-unit-test` first for every mutant of
cpp_ops/engine/). Run with `check.py --catalogue detail_pass4_rounds`."""

GLOBAL_ROUNDS = "tests/test_global_rounds.py"
LOCAL_BASE = GLOBAL_ROUNDS + \
    "::test_local_base_takes_the_results_applied_since_and_fresh_past_one"
JOIN_BOTH = "tests/test_join_both.py::" \
            "test_blocking_horovod_join_that_fails_gives_way_to_the_engines_error"
MEMBERSHIP = "tests/test_membership.py::" \
             "test_a_reset_before_the_first_sync_completed_is_numbered_anew_and_keeps_its_joiner"
LARGE_SCHEDULES = "tests/test_schedule.py::" \
                  "test_large_worlds_partition_bounded_groups_and_mix_fully"
CONFIG_FUZZ = "tests/test_fuzz.py::" \
              "test_config_accepts_exactly_the_valid_knobs_global_rounds_and_max_staleness_too"
KERAS_MIDRUN = "tests/test_no_deadlock.py::" \
               "test_keras_fit_with_horovod_callbacks_over_many_epochs"
ROUNDS = "cpp_ops/engine/core/engine_rounds.cc"

MUTANTS = [
    # --- the "local" rule's base, a blocking stream's ages (S16, F43) ------------------
    dict(id="detail4-rounds-local-base-misses-the-result", file=ROUNDS,
         edits=[("  for (RoundState* r : later) AddScaled(s.spec.dtype, out, +1, n, "
                 "r->local_base.data());\n", "")],
         tests=[LOCAL_BASE],
         bug="semantics.md:53-58 (S16): for 'local', b is c plus the results the app "
             "applied after c was taken; the second pass that adds the app's output to "
             "the later passive rounds' bases is gone, so b = c - x and such a round "
             "hands back the corrected round's input as progress (the away rank's round "
             "4 is m + (x4 - c + x3) instead of m + (x4 - c - (out3 - x3))). Before this "
             "pass only the extended drift_consensus test reached later passive rounds; "
             "test_stale_join has one passive round"),
    dict(id="detail4-rounds-blocking-values-candidates-for-leaving-out", file=ROUNDS,
         edits=[("rs.stale_in_rounds = StaleInRounds(config.wait_avoiding_global(), "
                 "rs.final_model, round,",
                 "rs.stale_in_rounds = StaleInRounds(config.wait_avoiding, "
                 "rs.final_model, round,")],
         tests=[LOCAL_BASE],
         bug="api.md:40-41 (A14): max_staleness is used with wait-avoiding global rounds "
             "only; faults.md:196-197 (F43): rounds_left_out / rounds_kept_ahead are "
             "'(wait-avoiding global rounds)'. Keyed to wait_avoiding (the group rounds' "
             "knob), a blocking stream's passive values older than its engine bound (0 "
             "there) become candidates, and every such value that counts is reported "
             "kept ahead (the local_base scenario: 3 on the away rank, 1 per passive join "
             "elsewhere, against 0). The stats tests read rounds_kept_ahead on "
             "wait-avoiding streams only"),
    # --- join(): TensorFlow's blocking path (F9) ---------------------------------------
    dict(id="detail4-rounds-tf-join-raises-horovods-error",
         file="horovod_wagma/common/elastic/join_both.py",
         edits=[("            horovod_join()\n"
                 "        except Exception as horovod_error:\n"
                 "            _engine_error_over(horovod_error, last)",
                 "            horovod_join()\n"
                 "        except Exception as horovod_error:\n"
                 "            raise")],
         tests=[JOIN_BOTH],
         bug="faults.md:33-36, 100-102 (F9): a rank that leaves without join() while the "
             "others are in join() makes their join() fail with an error naming it; on "
             "TensorFlow's path (Horovod's join op blocks) Horovod's 'Horovod has been "
             "shut down', naming nobody, now reaches the caller instead of the engine's "
             "'rank 3 left without join()' (the multi-rank TensorFlow case of F9 is "
             "extended; test_join_both covered the polled path's errors and the "
             "blocking path's success only)"),
    # --- elastic membership (E6, E8, R36) ----------------------------------------------
    dict(id="detail4-rounds-generation-after-newest-replica",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[("        self.generation = max(i[\"generation\"] for i in infos) + 1",
                 "        self.generation = previous_gen + 1")],
         tests=[MEMBERSHIP],
         bug="elastic.md:32-34 (E8): each member set's engine has its own generation "
             "(trace.gen2.<rank>.json, ..., and its own Gloo rendezvous prefix); numbered "
             "after the newest replica instead of past every generation a member ran "
             "in, a member set reset before its first sync completed is followed by one "
             "numbered like it ('gen2.5.' again): the new engine's rendezvous keys and "
             "trace files collide with the failed generation's. Every test agreed "
             "right after a completed sync, where both numbers are the same"),
    dict(id="detail4-rounds-any-earlier-member-is-a-survivor",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[("        self.was_survivor = self.replica_generation == previous_gen > 0",
                 "        self.was_survivor = self.generation > 0")],
         tests=[MEMBERSHIP],
         bug="README:158 (R36), elastic.md:31-32 (E6): added hosts start from the "
             "survivors' average, the joiners weighing 0; a survivor is now any rank "
             "that ran in an earlier member set, so a joiner whose first sync never "
             "completed (Horovod reset again) counts as a survivor with its initial "
             "model, weighs 1 in the next average and may hand out its counters. "
             "test_elastic's joiners are fresh processes (generation 0) and its "
             "survivors ran in the previous generation, where both rules agree"),
    # --- the schedule beyond 64 ranks (S34-S38, R15) ------------------------------------
    dict(id="detail4-rounds-schedule-mixing-in-one-word",
         file="cpp_ops/engine/rounds/group_schedule.cc",
         edits=[("for (size_t w = 0; w < words; ++w) u[w] |= knows[r][w];",
                 "u[0] |= knows[r][0];")],
         tests=[LARGE_SCHEDULES],
         bug="semantics.md:113-120 (S34-S38), README:67 (R15: sqrt(P) beyond 64): the "
             "full-mixing check merges a group's knowledge in the bitset's first 64-bit "
             "word only, so above 64 ranks no schedule mixes: groups(P, S) raises and "
             "the engine cannot start (the schedule tests stopped at P = 64, one word; "
             "the new test runs P = 65..1024 with the op's and the optimizers' default "
             "S, 10 and 12, and the butterflies 16^2, 32^2, 2^7, 4^4)"),
    # --- knob validation (A13, F25) -----------------------------------------------------
    dict(id="detail4-rounds-global-rounds-unhashable-type-error",
         file="horovod_wagma/common/op/config.py",
         edits=[("    if not isinstance(global_rounds, str) or global_rounds not in "
                 "GLOBAL_ROUNDS:",
                 "    if global_rounds not in GLOBAL_ROUNDS:")],
         tests=[CONFIG_FUZZ],
         bug="api.md:39 (A13), faults.md:72-76 (F25): bad arguments get a TypeError or "
             "ValueError naming the argument; global_rounds=['wait_avoiding'] or a dict "
             "now raises 'TypeError: unhashable type: ...', naming nothing (every test "
             "passed global_rounds a string, and the fuzz worker never passes it; the "
             "new no-MPI fuzz of all six knobs has explicit examples with every other "
             "knob valid)"),
    # --- Keras metric average (A93) ------------------------------------------------------
    dict(id="detail4-rounds-metric-average-training-metrics-only",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("        keys = [k for k in sorted(logs)",
                 "        keys = [k for k in sorted(self.model.metrics_names) if k in logs")],
         tests=[KERAS_MIDRUN],
         bug="api.md:350-353 (A93): MetricAverageCallback averages the epoch's scalar "
             "metrics over all ranks; taking the keys from the compiled model's "
             "metrics_names averages loss and accuracy only, and each rank logs its own "
             "val_loss / val_accuracy (test_keras asserted the loss and accuracy; the "
             "midrun fit validates every epoch but asserted only the loss. The Keras "
             "helper's new test_keras assertion on the validation epoch may catch it "
             "too)"),
]
