"""Third detail pass, the API rows (claims.md rows whose tests live in test_keras.py,
test_api_surface.py, test_api.py, test_init.py, test_examples.py,
test_balanced_sampler.py, test_observability.py, test_timeline_format.py): each mutant
breaks one value that README.md / docs/api.md / docs/faults.md state inside a report,
a counter, a trace, a default or a knob's effect, which those tests ran but did not
pin (coverage checked where the order is promised, a column printed but not read, an
event counted but its arguments not read, a list of accepted optimizers one short).
Each was reasoned to SURVIVE the tests as they were and to be caught by the assertion
added in this pass (named in `bug`); none has been run yet. The two C++ mutants
(engine_metrics.cc, engine.cc) change only what the timeline writes: no engine unit
test reads it, so only the pytest named catches them. Run with
`check.py --catalogue detail_pass3_api`."""

SAMPLER = "tests/test_balanced_sampler.py"
SURFACE = "tests/test_api_surface.py"
KERAS = "tests/test_keras.py"
STATS = "tests/test_observability.py::test_stats_count_a_known_straggler"
VIEWER = "tests/test_timeline_format.py::test_plot_two_ranks"

MUTANTS = [
    # --- BalancedSequence / BalancedBatchSampler ----------------------------------------
    dict(id="detail3-api-sequence-permutation-ignores-epoch",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("np.random.RandomState(self.seed + self.epoch)",
                 "np.random.RandomState(self.seed)")],
         tests=[SAMPLER + "::test_keras_balanced_sequence_permutation_is_numpys_seed_plus_epoch"],
         bug="api.md:268 (A73, A75b): BalancedSequence's permutation is numpy's "
             "RandomState(seed + epoch); every epoch now deals the same order. The old tests "
             "checked only that each epoch covers every sample once (test_keras's balanced "
             "fit, the single-process sequence tests at epoch 0), which one fixed order "
             "still does; the new test compares the ranks' indices, in rank order, with "
             "RandomState(5 + e).permutation(n), padded as torch pads, for epochs 0-2"),
    dict(id="detail3-api-lbbsp-extra-step-when-divisible",
         file="horovod_wagma/torch/balanced_batch_sampler.py",
         edits=[("else math.ceil(n / self.global_batch)",
                 "else n // self.global_batch + 1")],
         tests=[SAMPLER + "::test_lbbsp_gives_a_rank_measured_very_slow_at_least_one_sample_a_step"],
         bug="api.md:294-295 (A76, A78): BalancedBatchSampler pads the permutation to a "
             "whole number of global batches; where the dataset already is one (4000 "
             "samples, G = 32) it now adds a 126th step of repeats. Same as ceil for every "
             "size the old tests used that is not a multiple of G (803/32, 50/12), and "
             "the 4000-sample tests read only batch_sizes and each batch's length; now "
             "len(sampler) == 125 and 125 batches (not lbbsp-drop-last-pads, which breaks "
             "drop_last on the same line)"),
    dict(id="detail3-api-keras-sequence-counts-batches",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[("self._exchange.count(len(idx))", "self._exchange.count(1)")],
         tests=[KERAS + "::test_balanced_sequence_follows_speeds_in_fit"],
         bug="api.md:240-241, 265-272 (A73): BalancedSequence's `throughputs` are samples/s "
             "of each rank's own work; it now counts one per batch, so they are batches/s "
             "(8x fewer). With every batch 8 samples (but each rank's last) the ratios, so "
             "the shares, stay within the one-batch tolerance, and the fake-clock tests "
             "bypass __getitem__; test_balanced_sequence_follows_speeds_in_fit now bounds "
             "each rank's gathered throughput around 8 / its injected cycle (0.3x-3x)"),
    # --- Keras optimizer ---------------------------------------------------------------
    dict(id="detail3-api-keras-drift-refuses-adamw",
         file="horovod_wagma/keras/drift_correction.py",
         edits=[('_ADAM_FAMILY = ("Adam", "AdamW", "Nadam")', '_ADAM_FAMILY = ("Adam", "Nadam")')],
         tests=[SURFACE + "::test_keras_drift_correction_needs_a_first_moment"],
         bug="api.md:329-331 (A85): a Keras drift_correction takes the m of Adam, AdamW or "
             "Nadam; AdamW (not an Adam subclass in tf_keras) is now a ValueError 'needs "
             "... a first moment'. No test built a Keras AdamW (the accepted list was SGD, "
             "Adam, Nadam; fresh2-keras-drift-refuses-nadam is the Nadam twin); AdamW is in "
             "it now"),
    # --- the timeline viewer's summary ---------------------------------------------------
    dict(id="detail3-api-viewer-blocked-per-call-in-seconds", file="horovod_wagma/timeline.py",
         edits=[('per_call = (s["blocked_us"] / 1e3 / s["calls"]) if s["calls"] else 0.0',
                 'per_call = (s["blocked_us"] / 1e6 / s["calls"]) if s["calls"] else 0.0')],
         tests=[VIEWER],
         bug="faults.md:175-181 (F47): `python -m horovod_wagma.timeline` prints a per-rank "
             "summary whose blocked_ms/call column now holds seconds per call (rank 0 of "
             "the synthetic run: 0.000 instead of 0.463). test_plot_two_ranks parsed that "
             "column into `_`; it now equals blocked_us / 1e3 / calls"),
    dict(id="detail3-api-viewer-faults-a-flag", file="horovod_wagma/timeline.py",
         edits=[('            s["faults"] += 1', '            s["faults"] = 1')],
         tests=[VIEWER],
         bug="faults.md:174-181 (F46, F47): the viewer's summary counts a rank's fault "
             "events; it now shows 1 for any number. The synthetic ranks had one fault each "
             "and the column was not read; they now have three (stall_warning, hold, "
             "round_failed) and the column must say 3"),
    # --- what the engine writes to the timeline -------------------------------------------
    dict(id="detail3-api-timeline-wait-span-ends-at-its-length",
         file="cpp_ops/engine/observe/engine_metrics.cc",
         edits=[('timeline_.Span(Timeline::kApp, "wait", stream, from_us, from_us + waited_us,',
                 'timeline_.Span(Timeline::kApp, "wait", stream, from_us, waited_us,')],
         tests=[STATS],
         bug="README:197-198, faults.md:173-175 (R47, F46): the trace's waits are the time "
             "the app was blocked; a wait span (PyTorch's, AppWaited) now ends at its "
             "length, before its start, so Span() writes dur 0 and the viewer shows no "
             "blocked time, while stats()' global_wait_s still counts it. The test only "
             "checked that rank 0's wait events are 'X' with a round; now the 'g' "
             "stream's spans add up to global_wait_s and the longest (>= 0.3 s) is round "
             "1. No engine unit test writes a wait span"),
    dict(id="detail3-api-activation-received-names-itself", file="cpp_ops/engine/core/engine.cc",
         edits=[("metrics_.ActivationReceived(s.spec.name, round, source);",
                 "metrics_.ActivationReceived(s.spec.name, round, rank_);")],
         tests=[STATS],
         bug="faults.md:174-175 (F46): an activation_received event names the rank that "
             "activated the round; it now names the receiver itself (rank 1 'from' 1). "
             "The test counted the 5 events only; it now reads from == 0 and rounds 1..5 "
             "on rank 1, and to == [1] on rank 0's activation_sent events. Only the trace "
             "changes: no unit test reads it"),
    # Found by this pass (a code bug, fixed): a named Keras optimizer was invisible.
    dict(id="detail3-api-sequence-knows-only-default-names",
         file="horovod_wagma/keras/balanced_sequence.py",
         edits=[('               if stream.rpartition(".")[0] in OPTIMIZER_NAMES)',
                 '               if stream.startswith("wagma.keras_optimizer"))')],
         tests=["tests/test_keras.py::test_balanced_sequence_keeps_equal_shares_for_horovods_optimizer"],
         bug="api.md:269-271 (A73): BalancedSequence keeps shares equal only when no "
             "DistributedWagmaOptimizer averaged; counting only the default-named streams, "
             "an optimizer built with name= looks like Horovod's, so its shares stay equal "
             "and equal_steps_needed is True (the code did this until 2026-12-03; the "
             "'balanced' scenario now names its optimizer)"),
]
