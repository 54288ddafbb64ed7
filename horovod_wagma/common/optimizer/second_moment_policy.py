"""second_moment's value, for both frameworks (the mechanism: docs/design.md §3,
"Adam's second moment"; torch/group_second_moment.py, keras/group_second_moment.py).

"group": Adam's second moment follows the group's mean gradient, v <- beta2 v +
(1 - beta2) g_G^2, as Horovod's Adam's follows the allreduced gradient; "local": each
rank's own gradient's, whose noise is P times the mean's. Measured (docs/benchmarks.md,
"Adam: each rank's second moment is its own batch's"): with "local" WAGMA took 1.9-2.4x
Horovod's time to the plateau on two held-out Adam tasks with no straggler.
"""
MODES = ("group", "local")


def resolve(mode, keeps_second_moment, optimizer_name, family):
    """None: "group" where the optimizer keeps Adam's second moment, else "local";
    "group" for another optimizer is a ValueError naming it and ``family``."""
    if mode is None:
        return "group" if keeps_second_moment else "local"
    if mode == "group" and not keeps_second_moment:
        raise ValueError(f"second_moment='group' needs an Adam-family optimizer "
                         f"({family}); got {optimizer_name}")
    return mode
