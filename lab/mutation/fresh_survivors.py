"""The fresh batches' survivors, each with the tests written for it afterwards
(docs/mutation.md, 2026-12-02): run with `check.py --catalogue fresh_survivors` to see
each one caught now. A batch's own rate counts only the tests it named; this file
shows the gap each survivor named is closed."""
import fresh_batch
import fresh_batch2
import fresh_batch3
import fresh_batch4
import fresh_batch5
import fresh_batch6
import fresh_batch7
import fresh_batch8

CLOSED_BY = {
    "fresh-shape-mismatch-values-swapped":
        ["tests/test_bad_input.py::test_mismatches_and_invalid_knobs -k torch"],
    "fresh-hold-report-zero-means-always":
        ["tests/test_faults.py::test_hold_report_zero_reports_nothing"],
    "fresh-max-staleness-4096-refused":
        ["tests/test_fuzz.py::test_sync_period_and_max_staleness_bounds_are_inclusive"],
    "fresh-torch-lbbsp-drop-last-ignored":
        ["tests/test_api_surface.py::test_batch_sampler_drop_last_cuts_to_whole_global_batches"],
    "fresh-keras-drift-accepts-sgd-without-momentum":
        ["tests/test_api_surface.py::test_keras_drift_correction_needs_a_first_moment"],
    "fresh2-stall-timeout-names-group-round":
        ["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out"],
    "fresh2-drift-correction-with-always-accepted":
        ["tests/test_optimizer_core.py::test_a_given_drift_correction_needs_on_sync"],
    "fresh2-keras-stats-wait-in-ms":
        ["tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
    "fresh2-keras-sequence-drop-last-ignored":
        ["tests/test_api_surface.py::test_balanced_sequence_drop_last_is_torchs"],
    "fresh2-keras-drift-refuses-nadam":
        ["tests/test_api_surface.py::test_keras_drift_correction_needs_a_first_moment"],
    "fresh3-stall-warning-never-repeats":
        ["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out"],
    "fresh3-drift-correction-one-refused":
        ["tests/test_optimizer_core.py::test_a_given_drift_correction_needs_on_sync"],
    "fresh3-keras-sequence-dead-band-ignored":
        ["tests/test_balanced_sampler.py::test_keras_balanced_sequence_passes_its_dead_band_"
         "to_the_shares"],
    "fresh3-torch-named-parameters-partial-accepted":
        ["tests/test_optimizer_core.py::test_named_parameters_must_cover_every_parameter"],
    # C++ survivors with no pytest: make engine-unit-test (engine_metrics_test) catches them.
    "fresh3-stats-staleness-max-is-the-last": [],
    "fresh4-activations-sent-counts-rounds": [],
    "fresh4-torch-first-step-skips-round0-duties":
        ["tests/test_api_surface.py::test_set_backward_passes_per_step"],
    "fresh4-tf-poll-false-after-synchronize":
        ["tests/test_api_surface.py::test_tf_group_allreduce_async_inside_tf_function_is_a_"
         "wagma_error"],
    "fresh4-torch-elastic-sync-leaves-buffers-out":
        ["tests/test_elastic_state.py::test_the_survivors_average_takes_the_floating_buffers_too"],
    "fresh4-init-ignores-max-staleness":
        ["tests/test_api_surface.py::test_init_passes_every_knob_to_the_defaults_and_checks_them"],
    "fresh4-keras-state-averaged-every-step":
        ["tests/test_keras.py::test_on_sync_with_wait_avoiding_global_rounds_averages_only_there"],
    "fresh5-app-away-report-never-due":
        ["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
    "fresh5-stall-timeout-error-drops-the-missing-ranks":
        ["tests/test_faults.py::test_stuck_rank_is_reported_and_times_out"],
    "fresh5-keras-metric-average-in-half":
        ["tests/test_keras.py::test_fit_graph_mode_with_callbacks"],
    "fresh6-hold-report-activations-sent-inverted":
        ["tests/test_faults.py::test_a_held_call_is_reported_with_what_it_waits_on"],
    "fresh6-fusion-unlisted-parameters-share-a-bucket":
        ["tests/test_optimizer_core.py::test_fusion_plan_buckets"],
    "fresh6-contribution-age-mean-over-all-passive-joins":
        ["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
    "fresh6-away-report-names-next-round":
        ["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
    "fresh6-early-exit-names-round-after-its-last":
        ["tests/test_faults.py::test_early_exit_is_announced -k torch"],
    "fresh6-keras-stats-passive-joins-cumulative":
        ["tests/test_keras.py::test_wait_avoiding_global_rounds_fit_with_straggler_and_join"],
    "fresh7-long-name-length-is-the-shown-prefix":
        ["tests/test_fuzz.py::test_long_names_in_engine_errors"],
    "fresh7-fragment-up-to-sets-the-fragment-size": [],  # engine_settings_test.cc
    "fresh7-away-report-counts-one-left-out-round":
        ["tests/test_global_rounds.py::test_a_rank_whose_app_stops_is_named_and_not_waited_for"],
    "fresh7-leaver-fails-the-round-it-served": [],  # peer_roster_test.cc
    "fresh7-settle-window-needs-the-full-liveness-silence": [],  # majority_rule_test.cc
    "fresh7-stats-errors-capped-at-one": [],  # engine_metrics_test.cc
    "fresh7-keras-elastic-fenced-stays-a-tf-error":
        ["tests/test_api_surface.py::test_keras_elastic_run_turns_engine_verdicts_into_wagma_errors"],
    # Batch 8's survivors (2026-12-03, later).
    "fresh8-joins-end-one-round-short":
        ["tests/test_uneven.py::test_join_serves_final_model_exactly"],
    "fresh8-torch-adam-second-moment-stays-local":
        ["tests/test_optimizer.py::test_optimizer_state_averaging_modes_and_sync"],
    "fresh8-fusion-one-buffer-per-tensor":
        ["tests/test_optimizer_core.py::test_fusion_plan_by_kind_sorts_kinds_and_keeps_order",
         "tests/test_optimizer.py::test_groups_and_num_groups_only_split_the_fusion_buffers"],
}

# The same bug, planted where its rule lives now (the closure moved it into a unit).
EDITS_NOW = {
    "fresh7-settle-window-needs-the-full-liveness-silence": dict(
        file="cpp_ops/engine/health/majority_rule.h",
        edits=[("return silent_s >= liveness_s / 2;", "return silent_s >= liveness_s;")]),
}

MUTANTS = [dict(m, tests=CLOSED_BY[m["id"]], **EDITS_NOW.get(m["id"], {}))
           for m in fresh_batch.MUTANTS + fresh_batch2.MUTANTS + fresh_batch3.MUTANTS
           + fresh_batch4.MUTANTS + fresh_batch5.MUTANTS + fresh_batch6.MUTANTS
           + fresh_batch7.MUTANTS + fresh_batch8.MUTANTS
           if m["id"] in CLOSED_BY]
assert len(MUTANTS) == len(CLOSED_BY), sorted(set(CLOSED_BY) - {m["id"] for m in MUTANTS})
