"""Fourth detail pass, the Keras and API rows (claims.md rows whose tests live in
test_keras.py, test_api_surface.py, test_api.py, test_init.py, test_balanced_sampler.py,
test_observability.py, test_timeline_format.py), 2026-12-04: "behaviours no test runs".
Each mutant breaks a documented behaviour that no make-test run exercised before this
pass, only its first kind or its first time: a second sync() of an optimizer with
wait-avoiding global rounds (every test synced once, and round 0 of a stream is blocking
anyway), Keras's groups/num_groups and a Keras model of two dtypes (PyTorch's twins only),
validation metrics that appear in some epochs only, the TensorFlow op called directly in
a tf.function (only through the Keras optimizer, one call per stream per step), a
process set under the TensorFlow op and the Keras optimizer (PyTorch's only), drift
correction on Adam in Keras (SGD's only) and Keras's quasi_global (an unstable test, not
in make test). The tests named in `tests` were extended to run them; each mutant was
reasoned to SURVIVE the tests as they were and to be caught by the new assertion; none
has been run yet. The C++ mutant (cpp_ops/tensorflow/tf_ops.cc) rebuilds the TensorFlow
op; no engine unit test reaches it. Run with `check.py --catalogue detail_pass4_api`."""

KERAS = "tests/test_keras.py"
SURFACE = "tests/test_api_surface.py"

MUTANTS = [
    # --- Keras sync(): a second time, with wait-avoiding global rounds -------------------
    dict(id="detail4-api-keras-sync-through-the-optimizers-global-knobs",
         file="horovod_wagma/keras/optimizer.py",
         edits=[("core.global_stream_knobs(blocking=True))", "core.global_stream_knobs())")],
         tests=[KERAS + "::test_a_second_sync_is_again_the_exact_mean_with_wait_avoiding_"
                        "global_rounds"],
         bug="api.md:334-335, semantics.md:148-149 (A86, S48): Keras sync(variables) "
             "averages them over all ranks now through blocking global rounds, every "
             "model identical afterwards; it now takes the optimizer's own global knobs, "
             "wait-avoiding by default. Round 0 of the 'forced' stream is blocking anyway, "
             "and every test synced an optimizer once; keras_join now syncs twice, rank 0 "
             "0.5 s late the second time: ranks 1 and 2 average rank 0's previous "
             "(published) value, rank 0 gets m + (x - c) by 'local' (errors ~0.08)"),
    # --- Keras fusion: groups/num_groups, one buffer per dtype --------------------------
    dict(id="detail4-api-keras-num-groups-ignored", file="horovod_wagma/keras/optimizer.py",
         edits=[("FusionPlan(groups, num_groups)", "FusionPlan(groups)")],
         tests=[SURFACE + "::test_keras_groups_and_num_groups_only_split_the_fusion_buffers"],
         bug="api.md:155-157, 317-319 (A46 for Keras): the Keras optimizer's num_groups "
             "splits the fusion buffers as PyTorch's; it is now ignored (one buffer, "
             "stream model0 only). No Keras test passed groups or num_groups "
             "(detail3-torch-num-groups-ignored is the PyTorch twin); the TF child now "
             "runs num_groups=2 (model0, model1) and groups=[[v3, v0]] (model0..model2)"),
    dict(id="detail4-api-keras-fusion-kind-is-the-device", file="horovod_wagma/keras/fusion.py",
         edits=[("lambda v: v.dtype.name)", "lambda v: v.device)")],
         tests=[SURFACE + "::test_keras_fuses_one_buffer_per_dtype"],
         bug="semantics.md:124-127 (S40, R13 for Keras): the optimizers average the "
             "parameters fused into one buffer per dtype; Keras's buffers are now split "
             "by device (PyTorch's other key) only, so float32 and float64 variables on "
             "one CPU share a buffer and tf.concat refuses them. Every Keras model the "
             "tests built had one dtype (drift's x is float64 alone); the TF child's "
             "float32/float64/float32 model now needs streams model0, model1 and plain "
             "SGD's bits. (Dropping the by-dtype split altogether is caught already: an "
             "empty state list then packs to a failing tf.concat([]).)"),
    # --- MetricAverageCallback: metrics that appear in some epochs only -----------------
    dict(id="detail4-api-metric-average-keys-fixed-at-the-first-epoch",
         file="horovod_wagma/keras/callbacks.py",
         edits=[("        keys = [k for k in sorted(logs)",
                 "        keys = getattr(self, \"_keys\", None) or [k for k in sorted(logs)"),
                ("        if not keys:\n            return\n        values =",
                 "        if not keys:\n            return\n        self._keys = keys\n"
                 "        values =")],
         tests=[KERAS + "::test_fit_graph_mode_with_callbacks"],
         bug="api.md:351-353 (A93): MetricAverageCallback averages the epoch's scalar "
             "metrics over all ranks; the keys are now fixed at the first epoch end, so "
             "metrics that appear later (validation every second epoch) keep each rank's "
             "own value. Every fit the tests ran had the same keys every epoch (fit none, "
             "keras_callbacks_midrun validation every epoch); fit now validates at epoch "
             "1 only and its val_loss, val_accuracy must be the ranks' mean (one stream "
             "for every key set is caught already: scenarios of the resident launch use "
             "the default name with other key sets)"),
    # --- the TensorFlow op inside tf.function --------------------------------------------
    dict(id="detail4-api-tf-op-not-stateful", file="cpp_ops/tensorflow/tf_ops.cc",
         edits=[("    // Every call is one round of the stream: never fold, merge or prune it.\n"
                 "    .SetIsStateful()\n",
                 "    // Every call is one round of the stream: never fold, merge or prune it.\n")],
         tests=[KERAS + "::test_tf_op_inside_tf_function_runs_one_round_per_call"],
         bug="api.md:101-105 (A30, R2): inside tf.function each execution of the op is one "
             "round; the op is now registered stateless, so Grappler merges two calls on "
             "the same input into one (and auto control dependencies no longer order "
             "them): a function that calls it twice runs one round per execution, not "
             "two. The op ran in a tf.function only through the Keras optimizer, one call "
             "per stream per step with distinct inputs; op_in_function now asserts rounds "
             "[2k, 2k + 1] and the exact values"),
    # --- process sets under the TensorFlow op and the Keras optimizer -------------------
    dict(id="detail4-api-tf-op-process-set-dropped", file="horovod_wagma/tensorflow/ops.py",
         edits=[("max_staleness=max_staleness, members=members)",
                 "max_staleness=max_staleness, members=[])")],
         tests=[KERAS + "::test_op_and_optimizer_over_a_process_set_average_its_ranks_only"],
         bug="api.md:77-78, 101 (A21 for TensorFlow): the op's process_set forms the groups "
             "among its ranks; the TensorFlow op no longer hands the kernel the set's "
             "members, so every call runs over the world (round 0 over [0, 1] gives 1.0, "
             "not 0.5; rank 2 alone gets 1.0, not 2.0). No TensorFlow or Keras test passed "
             "a process_set (test_op_on_disjoint_process_sets is PyTorch's); MPI only"),
    dict(id="detail4-api-keras-optimizer-process-set-ignored",
         file="horovod_wagma/keras/optimizer.py",
         edits=[("OptimizerCore(knobs, ops._basics, process_set,",
                 "OptimizerCore(knobs, ops._basics, _hvd_tf.global_process_set,")],
         tests=[KERAS + "::test_op_and_optimizer_over_a_process_set_average_its_ranks_only"],
         bug="api.md:158-159, 317-319 (A47 for Keras): the Keras optimizer's process_set "
             "restricts WAGMA to the set's ranks as in PyTorch; it now averages over the "
             "world (every rank builds the optimizer, so no hang: the 3-rank mean instead "
             "of [0, 1]'s, and rank 2, alone in its set, no longer keeps its own model). "
             "Only test_process_set_subset (PyTorch) used a process set"),
    # --- Keras drift correction on Adam ------------------------------------------------------
    dict(id="detail4-api-keras-drift-reads-adams-second-moment",
         file="horovod_wagma/keras/drift_correction.py",
         edits=[("slots, k = optimizer._momentums, tf.constant(1.0)",
                 "slots, k = optimizer._velocities, tf.constant(1.0)")],
         tests=[KERAS + "::test_drift_correction_learns_from_adams_first_moment"],
         bug="api.md:330-332 (A85, S55): a Keras drift correction learns from the first "
             "moment, for Adam its m; it now reads Adam's v (tf_keras's _velocities, the "
             "second moment: SGD's first moment is its 'momentums'), so after round 0 "
             "c_i = 0.5 * 0.001 (mean a^2 - a_i^2) instead of 0.5 * 0.1 (a_i - mean a). "
             "The Keras drift runs were all SGD with momentum; Adam was only constructed "
             "(its default alpha, its acceptance)"),
    # --- Keras quasi_global ------------------------------------------------------------------
    dict(id="detail4-api-keras-quasi-global-averages-the-velocities",
         file="horovod_wagma/keras/optimizer.py",
         edits=[('if knobs.average_optimizer_state == "on_sync" else None,',
                 'if knobs.average_optimizer_state in ("on_sync", "quasi_global") else None,')],
         tests=[KERAS + "::test_quasi_global_rebuilds_the_velocity_and_does_not_average_it"],
         bug="api.md:327-328, semantics.md:155-157 (A84, S53): Keras quasi_global rebuilds "
             "the velocity and, unlike PyTorch, does not average the buffers at global "
             "rounds; it now also runs on_sync's duties (as PyTorch averages its rebuilt "
             "buffers), so after global rounds 0 and 2 every rank's velocity is the same "
             "bits and no longer its own rule's. Before this pass only "
             "test_quasi_global.py::test_keras_rebuilds_velocity_in_fit_and_eager ran "
             "Keras's quasi_global, marked unstable (make test deselects it; check.py, "
             "which runs named tests with -m '', would catch this through it too)"),
]
