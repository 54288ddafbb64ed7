"""Fourth detail pass, fault-handling, bad-input and elastic rows (claims.md F*, A102,
E*, README's elastic rows R34-R39), 2026-12-04: "behaviours no test runs". Each mutant
breaks a documented behaviour that the tests before this pass never exercised, only its
first kind: a stall in a group round (every stalled round was global, whose inspector is
rank 0 either way), specs that differ while their buffers have the same size (every
mismatch changed the byte count too), a fragment scope set apart (only the two sizes
were), a joiner at rank 0 and survivors whose counters differ (the elastic tests keep
rank 0 a survivor, in step with the other), and the Keras WagmaState, whose reset and
average no make-test run reaches. The tests named in `tests` were extended to run them;
the C++ mutants name no unit test (none reaches them: check.py runs `make
engine-unit-test` first for every mutant of cpp_ops/engine/). Run with `check.py
--catalogue detail_pass4_faults`."""

FAULTS = "tests/test_faults.py"
STUCK = FAULTS + "::test_stuck_rank_is_reported_and_times_out"
BAD_INPUT = "tests/test_bad_input.py::test_mismatches_and_invalid_knobs"
FRAGMENT_SCOPE = ("tests/test_bad_input.py::test_fragment_settings_must_match_on_every_rank "
                  "-k differ_scope")
STATE = "tests/test_elastic_state.py"
COUNTERS = STATE + "::test_joiners_take_the_lowest_ranked_survivors_counters_survivors_keep_theirs"
KERAS_STATE = STATE + "::test_keras_state_drops_traced_functions_and_averages_every_floating_" \
                      "variable"

MUTANTS = [
    # --- stalls in group rounds (F11, F13) ------------------------------------------------
    dict(id="detail4-faults-stall-inspector-always-rank-0",
         file="cpp_ops/engine/core/engine_faults.cc",
         edits=[("        if (rs.members[0] == rank_) {\n"
                 "          stalls_->inspector().OnWaiting(s.id, r.first, rank_, now);\n"
                 "        } else {\n"
                 "          SendControl(rs.members[0], ControlKind::kWaiting, s.id, r.first);",
                 "        if (rank_ == kRegistrar) {\n"
                 "          stalls_->inspector().OnWaiting(s.id, r.first, rank_, now);\n"
                 "        } else {\n"
                 "          SendControl(kRegistrar, ControlKind::kWaiting, s.id, r.first);")],
         tests=[STUCK],
         bug="faults.md:45-50 (F11, F13): after WAGMA_STALL_WARNING_S 'the round's inspector "
             "(rank 0 for global rounds)' prints which ranks are missing; a group round's "
             "inspector is its first member. Every waiting rank now reports to rank 0: for "
             "group round 3 of 'g' (members [1, 2]) rank 0, not a member, judges from its own "
             "group ([0]) and names itself ('ranks not waiting in it: [0] (stall report of "
             "rank 0)'), rank 1 never warns, and the timeout error carries rank 0's wrong "
             "note. Every stall the tests ran was in a global round, whose inspector is "
             "rank 0 either way"),
    # --- round-0 mismatches (F22, R31) ----------------------------------------------------
    dict(id="detail4-faults-spec-compares-bytes-not-dtype-and-shape",
         file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("return name == o.name && dtype == o.dtype && shape == o.shape &&",
                 "return name == o.name && num_bytes() == o.num_bytes() &&")],
         tests=[BAD_INPUT],
         bug="faults.md:98-100 (F22): a stream whose shape or dtype differ between ranks is "
             "rejected at round 0 on every rank, naming both values; specs are now alike "
             "when their buffers have the same size, so float16 against bfloat16 (2 bytes "
             "each) reduces the two encodings as one, and [2, 3] against [6] runs. Every "
             "mismatch the tests made (float32/float64, [4]/[5], n/n+1 in the fuzz) changed "
             "the byte count too"),
    # --- HOROVOD_WAGMA_FRAGMENT_* must match (A102) --------------------------------------
    dict(id="detail4-faults-fragment-check-skips-the-scope",
         file="cpp_ops/engine/reduce/message_cut.cc",
         edits=[("if (std::memcmp(lo, hi, sizeof(lo)) != 0) {",
                 "if (std::memcmp(lo, hi, 2 * sizeof(lo[0])) != 0) {")],
         tests=[FRAGMENT_SCOPE],
         bug="api.md:368, 376 (A102): HOROVOD_WAGMA_FRAGMENT_BYTES, _UP_TO_BYTES and _SCOPE must "
             "match across ranks; the start-up check now compares the two sizes only, so a "
             "rank with _SCOPE=all cuts its local messages into fragments that its peers "
             "receive whole (the tests set the fragment size and the largest cut apart, "
             "never the scope; the new [differ_scope] case, extended, sets it on rank 0)"),
    # --- the elastic state's counters (R34, R36) -------------------------------------------
    dict(id="detail4-faults-joiners-take-rank-0s-counters",
         file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("        first = survivors.index(True)", "        first = 0")],
         tests=[COUNTERS],
         bug="README:158 (R36): hosts added 'start from the survivors' average and "
             "counters'; the counters' broadcast now comes from rank 0, as Horovod's own "
             "states do, so where rank 0 is a joiner every joiner keeps (and the survivors "
             "get broadcast) a fresh rank's step 0. The host-added test keeps rank 0 a "
             "survivor (Horovod appends the new host's ranks)"),
    dict(id="detail4-faults-survivors-take-the-first-survivors-counters",
         file="horovod_wagma/common/elastic/elastic_state.py",
         edits=[("        if not survivors[hvd.rank()]:", "        if hvd.rank() != first:")],
         tests=[COUNTERS],
         bug="README:155-157, api.md:52-53 (R34): the survivors go on from their own replicas, 'no step "
             "counter goes back'; every rank but the first survivor now takes its counters, "
             "so a survivor a step ahead of it goes back. In the loopback tests the "
             "survivors usually fail at the same step, which hides it"),
    # --- the Keras WagmaState (E2, R36) -----------------------------------------------------
    dict(id="detail4-faults-keras-reset-keeps-the-train-function",
         file="horovod_wagma/keras/elastic.py",
         edits=[("        self.model.train_function = None\n", "")],
         tests=[KERAS_STATE],
         bug="elastic.md:22 (E2): after a reset 'the model's traced functions are dropped "
             "and traced again for the new member set'; the train function is kept, so "
             "model.fit goes on with WAGMA ops traced for the old member set. Only the "
             "extended Keras host-killed test reset a Keras model, and it asserted only "
             "that the survivors trained on"),
    dict(id="detail4-faults-keras-joiners-weigh-in",
         file="horovod_wagma/keras/elastic.py",
         edits=[("_hvd_tf.allreduce(flat * weight, op=", "_hvd_tf.allreduce(flat, op=")],
         tests=[KERAS_STATE],
         bug="elastic.md:31-32, README:158 (E6, R36): 'hosts added: the joiners weigh 0 in "
             "the first average'; in Keras the joiners' fresh variables now enter the sum, "
             "which is still divided by the survivors only, so every rank starts from the "
             "survivors' sum plus the joiners' models over the survivors (BatchNorm "
             "statistics too). No test reached Keras's average: its only elastic test kills "
             "a host, where every rank is a survivor"),
]
