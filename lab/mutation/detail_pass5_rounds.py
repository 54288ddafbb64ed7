"""Fifth detail pass, the rounds' area (docs/semantics.md S rows, the op and optimizer
rows of docs/api.md, docs/elastic.md's PyTorch side), 2026-12-06: second and later
uses, boundaries and wrappers, which the tests before it ran once, at one size, through
one form. tests/test_round_properties.py (workers/round_properties.py) runs every
stateful call 1, 2 and 3 times (sync() with three layouts, two met again; join() in
three generations; the elastic state reset twice; two membership changes), the lockstep
matrix over P = 3, 4, 5, 6 and process sets (S = 2, 4, P, P + 1; tau 1, 2, 5; every
averaging rule and mode; four dtypes; 0 to 2 elements and sizes around the scatter
threshold; each op form, the knobs by keyword and by position), and each public
function with non-default arguments.

With the tests as they were, every mutant here is expected to SURVIVE make test (the
note says why); `tests` names the new test that catches it. Run with
`check.py --catalogue detail_pass5_rounds`."""

PROPS = "tests/test_round_properties.py::"
SYNC_LAYOUTS = PROPS + "test_sync_with_three_layouts_each_met_again_is_the_exact_mean"
RESETS = PROPS + "test_the_torch_state_reset_twice_rebases_the_rounds_and_never_the_steps"
TWO_CHANGES = PROPS + "test_two_resets_judge_each_change_against_the_member_set_before_it"
LOCKSTEP = PROPS + "test_lockstep_matrix_matches_the_exact_trajectory"
SETS = PROPS + "test_lockstep_matrix_over_process_sets_of_5_and_3_ranks"
HANDLES = PROPS + "test_handles_stats_and_the_schedules_functions"
JOINS = PROPS + "test_join_in_three_generations_serves_final_models_and_returns_the_last_joiner"
TORCH_OPT = "horovod_wagma/torch/optimizer.py"
OPS = "horovod_wagma/torch/ops.py"

MUTANTS = [
    # --- sync(): a third layout, a layout met again (S48, A57) ------------------------
    dict(id="detail5-rounds-sync-layout-number-dropped", file=TORCH_OPT,
         edits=[('        role = "forced" if number == 0 else f"forced.layout{number}."',
                 '        role = "forced" if number == 0 else "forced.layout."')],
         tests=[SYNC_LAYOUTS],
         bug="semantics.md:145-147 (S48), api.md:197-198 (A57): sync() averages the model "
             "and state whenever called; each tensor layout met gets its own stream. The "
             "layout's number is dropped from the stream's name, so every layout after "
             "the first shares one stream: the third layout's sync() enters a stream "
             "fixed at another shape and fails ('cannot change after round 0'). The "
             "tests met two layouts (before and after the state exists); the new one "
             "meets three, two of them twice"),
    dict(id="detail5-rounds-sync-layout-met-again-renumbered", file=TORCH_OPT,
         edits=[("        number = self._forced_layouts.setdefault(layout, "
                 "len(self._forced_layouts))",
                 "        number = self._forced_layouts[layout] = len(self._forced_layouts)")],
         tests=[SYNC_LAYOUTS],
         bug="semantics.md:145-147 (S48): a layout met again (the state cleared, the "
             "first layout back) is given the next number instead of its own stream, "
             "which the next new layout then also takes: that sync() enters a stream "
             "fixed at the other layout and fails. The tests never met a layout twice"),
    # --- the elastic state reset twice (R34, E8) ---------------------------------------
    dict(id="detail5-rounds-torch-rebase-accumulates-the-base", file=TORCH_OPT,
         edits=[("        self._round_base = self._round\n",
                 "        self._round_base += self._round\n")],
         tests=[RESETS],
         bug="README/elastic.md (R34): after each reset the new engine's rounds start at 0 "
             "while the step count goes on. The base accumulates: right after one reset "
             "(base 0) it is the step count, after a second it is past it, so the steps "
             "after it map to negative rounds: round 0's global duties are missed and "
             "served_round is negative. Only Keras's rebase was run twice (a one-process "
             "test); PyTorch's ran in elastic jobs with one reset"),
    dict(id="detail5-rounds-membership-keeps-the-first-replica",
         file="horovod_wagma/common/elastic/membership.py",
         edits=[("        self.replica_members = list(self.members)",
                 "        self.replica_members = self.replica_members or list(self.members)")],
         tests=[TWO_CHANGES],
         bug="elastic.md:31-33 (E6, E7): each change is judged against the member set "
             "before it (lost: ranks of the previous member set). The replica's members "
             "are kept from the first sync: after a second reset a survivor tells the "
             "others generation 1's members as its replica of generation 2, so the "
             "lost/added ranks (and the majority rule) are judged against the wrong set. "
             "Every membership test synced once, from no replica"),
    # --- the op's wrappers: process sets, positions, handles (A19-A21, A28) ------------
    dict(id="detail5-rounds-blocking-in-place-drops-the-process-set", file=OPS,
         edits=[("    return synchronize(group_allreduce_async_(tensor, name, "
                 "process_set=process_set,\n"
                 "                                              **call_knobs(locals())))",
                 "    return synchronize(group_allreduce_async_(tensor, name,\n"
                 "                                              **call_knobs(locals())))")],
         tests=[SETS],
         bug="api.md:62-63, 77-78 (A21): process_set restricts the stream to its ranks, in "
             "every form. The blocking in-place group_allreduce_ drops it: the set's "
             "ranks register a stream over the world, which waits for the ranks outside "
             "(a hang). The process-set tests ran group_allreduce and the async forms"),
    dict(id="detail5-rounds-in-place-signature-swaps-group-size-and-tau", file=OPS,
         edits=[("def group_allreduce_(tensor, name=None, group_size=None, sync_period=None, "
                 "averaging=None,",
                 "def group_allreduce_(tensor, name=None, sync_period=None, group_size=None, "
                 "averaging=None,")],
         tests=[LOCKSTEP],
         bug="api.md:58-66 (A19, A20): the op's signature, group_size before sync_period. "
             "group_allreduce_'s two are swapped: calls by keyword still work, a call by "
             "position gets S and tau crossed (other groups, other global rounds). No "
             "test called an op with its knobs by position"),
    dict(id="detail5-rounds-second-synchronize-waits-again", file=OPS,
         edits=[("        if self._result is None and self._error is None:",
                 "        if self._error is None:")],
         tests=[HANDLES],
         bug="api.md:64-65: synchronize(handle) returns the result tensor; a second "
             "synchronize of the same handle waits on the engine's handle again, which "
             "the first released: an error (or another round's result) instead of the "
             "same tensor. Every test synchronized each handle once"),
]
