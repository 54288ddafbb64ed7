"""Adam's second moment from the group's mean gradient (second_moment, both frameworks;
docs/design.md §3, docs/api.md), 2026-12-06: one mutant per rule, each caught by
tests/test_group_second_moment.py. Run with `check.py --catalogue detail_second_moment`."""

TEST = "tests/test_group_second_moment.py::"
GROUP = TEST + "test_group_mode_moves_v_to_the_mean_gradients"
LOCAL = TEST + "test_local_mode_keeps_each_ranks_own_second_moment"
REFUSED = TEST + "test_group_mode_needs_an_adam_family_optimizer"
TORCH = "horovod_wagma/torch/group_second_moment.py"
KERAS = "horovod_wagma/keras/group_second_moment.py"
POLICY = "horovod_wagma/common/optimizer/second_moment_policy.py"

MUTANTS = [
    dict(id="second-moment-default-local", file=POLICY,
         edits=[('return "group" if keeps_second_moment else "local"', 'return "local"')],
         tests=[GROUP],
         bug="Adam keeps each rank's own second moment by default: 1.9-2.4x Horovod's "
             "time on the held-out Adam tasks"),
    dict(id="second-moment-torch-sign", file=TORCH,
         edits=[("move = (self._mean_sq[i][offset:offset + n]\n"
                 "                            - self._own_sq[i][offset:offset + n])",
                 "move = (self._own_sq[i][offset:offset + n]\n"
                 "                            - self._mean_sq[i][offset:offset + n])")],
         tests=[GROUP + " -k torch"],
         bug="v moves away from the mean gradient's"),
    dict(id="second-moment-torch-no-beta2", file=TORCH,
         edits=[("v.add_(move.to(v.dtype), alpha=1.0 - beta2)", "v.add_(move.to(v.dtype))")],
         tests=[GROUP + " -k torch"],
         bug="the whole square replaces v's share of it, not (1 - beta2) of it"),
    dict(id="second-moment-keras-not-applied", file=KERAS,
         edits=[("velocity.assign(tf.maximum(velocity + delta, tf.zeros_like(velocity)))",
                 "pass")],
         tests=[GROUP + " -k tensorflow"],
         bug="Keras's Adam keeps each rank's own second moment"),
    dict(id="second-moment-keras-own-gradient-as-mean", file=KERAS,
         edits=[("model, mean = combined[:-n], combined[-n:]",
                 "model, mean = combined[:-n], own")],
         tests=[GROUP + " -k tensorflow"],
         bug="the gradient rides the round but the rank's own is used as the mean"),
    dict(id="second-moment-group-accepts-sgd", file=POLICY,
         edits=[('    if mode == "group" and not keeps_second_moment:\n', '    if False:\n')],
         tests=[REFUSED],
         bug="second_moment='group' with SGD is accepted and fails at the first step"),
]
