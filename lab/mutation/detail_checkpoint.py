"""Mutants for checkpoints that resume WAGMA's state (issue 56, docs/api.md
"Checkpoints (PyTorch)"), each caught by tests/test_checkpoint.py."""
OPT = "horovod_wagma/torch/optimizer.py"
CKPT = "horovod_wagma/common/optimizer/checkpoint.py"
EXACT = "tests/test_checkpoint.py::test_resumed_job_continues_the_uninterrupted_one_exactly"

MUTANTS = [
    dict(id="ckpt-variates-not-restored", file=OPT,
         edits=[("        if self._drift:\n            variates = record[\"variates\"]",
                 "        if False:\n            variates = record[\"variates\"]")],
         tests=[EXACT],
         bug="a resumed job's drift variates start from zero although the checkpoint has them"),
    dict(id="ckpt-every-rank-gets-rank0s-variates", file=OPT,
         edits=[("variates[self._core.rank_in_set()]", "variates[0]")],
         tests=[EXACT],
         bug="every rank resumes with the saver's variates instead of its own"),
    dict(id="ckpt-variates-not-gathered", file=OPT,
         edits=[("        if checkpoint and self._drift:", "        if False and self._drift:")],
         tests=[EXACT],
         bug="sync(checkpoint=True) gathers no variates, so the record has none"),
    dict(id="ckpt-steps-not-restored", file=OPT,
         edits=[("        self._round = record[\"steps\"]\n", "")],
         tests=[EXACT],
         bug="the step count starts from 0 after a resume instead of the checkpoint's"),
    dict(id="ckpt-world-size-unchecked", file=CKPT,
         edits=[("    if record[\"world_size\"] != world_size:",
                 "    if False:")],
         tests=["tests/test_checkpoint.py::test_another_world_size_is_refused_on_every_rank"],
         bug="a checkpoint of 4 ranks loads into 2 (the variates are per rank)"),
    dict(id="ckpt-knobs-unchecked", file=CKPT,
         edits=[("        if saved != here[knob]:", "        if False:")],
         tests=["tests/test_checkpoint.py::test_other_knobs_are_refused_on_every_rank"],
         bug="a checkpoint saved with other knobs loads silently"),
]

# README's install recipe: a build without TensorFlow names what is missing.
FRAMEWORKS = "horovod_wagma/common/op/frameworks.py"
MUTANTS += [
    dict(id="keras-without-tf-unnamed", file="horovod_wagma/keras/__init__.py",
         edits=[('require_modules("horovod_wagma.keras", {"tensorflow": "tensorflow", '
                 '"tf_keras": "tf-keras"})', 'pass')],
         tests=["tests/test_frameworks_required.py::test_importing_a_tf_frontend_without_tensorflow"],
         bug="import horovod_wagma.keras without TensorFlow fails inside Horovod's import, "
             "not with an error naming TensorFlow"),
    dict(id="tf-op-library-unchecked", file=FRAMEWORKS,
         edits=[("    if not os.path.exists(path):\n", "    if False:\n")],
         tests=["tests/test_frameworks_required.py::test_a_build_without_tensorflow_says_so"],
         bug="a package built without TensorFlow hands TensorFlow a missing op library"),
]
MUTANTS += [
    dict(id="build-tools-unchecked", file="setup.py",
         edits=[("    if missing:\n        sys.exit(\"horovod_wagma cannot build its engine without: \"",
                 "    if False:\n        sys.exit(\"horovod_wagma cannot build its engine without: \"")],
         tests=["tests/test_frameworks_required.py::test_a_build_without_its_tools_names_them"],
         bug="a machine without mpicxx fails inside the build with FileNotFoundError"),
]
MUTANTS += [
    dict(id="horovod-build-unchecked", file="horovod_wagma/common/op/basics.py",
         edits=[("            self._check_horovod_built_for(on_gloo)\n", "")],
         tests=["tests/test_frameworks_required.py::test_horovod_built_without_the_launchs_transport"],
         bug="a launch over a transport Horovod lacks fails inside Horovod's init, unnamed"),
]

# Keras: the optimizer's checkpoint record (docs/api.md "Checkpoints (Keras)"), each
# caught by tests/test_checkpoint_keras.py.
KREC = "horovod_wagma/keras/checkpoint_record.py"
KDRIFT = "horovod_wagma/keras/drift_correction.py"
KEXACT = "tests/test_checkpoint_keras.py::test_resumed_job_continues_the_uninterrupted_one_exactly"
MUTANTS += [
    dict(id="keras-ckpt-own-slice-wrong", file=KREC,
         edits=[("[self._core.rank_in_set()]", "[0]")],
         tests=[KEXACT],
         bug="every Keras rank resumes with the saver's variates instead of its own"),
    dict(id="keras-ckpt-pending-dropped", file=KDRIFT,
         edits=[("            if self._pending is not None:\n                self.restore_flat(self._pending)\n",
                 "")],
         tests=[KEXACT],
         bug="a job that loads before its first step loses the variates (they are created "
             "later, at zero)"),
    dict(id="keras-ckpt-not-gathered", file="horovod_wagma/keras/optimizer.py",
         edits=[("        if checkpoint:\n            self._wagma[\"record\"].gather(",
                 "        if False:\n            self._wagma[\"record\"].gather(")],
         tests=[KEXACT],
         bug="sync(..., checkpoint=True) gathers nothing, so the record has no variates"),
    dict(id="keras-ckpt-knobs-unchecked", file=KREC,
         edits=[("        checkpoint.check_record(record, self._core, self._core.num_ranks(),\n",
                 "        (lambda *a: None)(record, self._core, self._core.num_ranks(),\n")],
         tests=["tests/test_checkpoint_keras.py::test_other_knobs_are_refused_on_every_rank",
                "tests/test_checkpoint_keras.py::test_another_world_size_is_refused_on_every_rank"],
         bug="a Keras checkpoint saved with other knobs or by another world size loads silently"),
    dict(id="keras-ckpt-steps-not-restored", file=KREC,
         edits=[("        self._steps.assign(steps)\n", "")],
         tests=[KEXACT],
         bug="a resumed Keras job counts its steps from 0 instead of the checkpoint's"),
    dict(id="keras-sync-callback-ignores-checkpoint", file="horovod_wagma/keras/callbacks.py",
         edits=[("        if self._checkpoint:\n            optimizer = self.model.optimizer",
                 "        if False:\n            optimizer = self.model.optimizer")],
         tests=[KEXACT],
         bug="WagmaGlobalSyncCallback(checkpoint=True) averages the model alone: no variates "
             "for ModelCheckpoint's file"),
]
MUTANTS += [
    dict(id="keras-sync-callback-accepts-any-optimizer", file="horovod_wagma/keras/callbacks.py",
         edits=[("            if not hasattr(optimizer, \"_wagma\"):",
                 "            if False:")],
         tests=["tests/test_checkpoint_keras.py::test_checkpoint_sync_callback_needs_a_wagma_optimizer"],
         bug="WagmaGlobalSyncCallback(checkpoint=True) on a plain Keras optimizer fails with "
             "an AttributeError from inside fit instead of naming what it needs"),
]
