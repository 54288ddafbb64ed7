"""The optimizers' default averaging rule, for both frameworks.

The rule decides what a rank whose engine contributed a stale value c (its published
value, docs/semantics.md "Averaging rules") takes from a round with sum s over |G|
contributions, given its fresh x:

    "local":  s/|G| + (x - b)      all of its own progress since c (b = c plus the
                                   results applied after c) stays with it, and the
                                   others receive it at the next round: no work lost,
                                   but the rank runs a whole step off the mean;
    "fresh":  (s - c + x)/|G|      only 1/|G| of that progress: the rank stays at the
                                   mean, the others never receive it;
    "follow": as "fresh", and while the rank is late its engine contributes the
                                   newest result it served (the group's consensus),
                                   not its application's old model.

Which loses less depends on the optimizer (docs/benchmarks.md, "The averaging rule
follows the optimizer"): with SGD and momentum "local" won under random stragglers
(mlp, 0.64x against 0.86x Horovod's time) and over LB-BSP batches with one rank 2x
slower (mlp20, 1.00x against 1.46x LB-BSP's); with Adam "fresh" won the second case
by far (mlp_adam, 1.17x against 2.17x LB-BSP's, about 10% of rounds passive), and
"follow" beat "fresh" where most rounds are passive (random stragglers, mlp_adam:
0.65x against 0.89x local SGD's time, side by side): an old model contributed round
after round pulls every mean back. Why Adam and SGD differ is not measured apart. A likely
reason: an Adam step is normalised per coordinate, so the step a "local" rank keeps
to itself is as large as the group's mean step on every coordinate, however noisy
its batch, where a step of SGD shrinks with its gradient.
"""
ADAM_FAMILY_DEFAULT = "follow"
OTHER_DEFAULT = "local"


def resolve(mode, adam_family):
    """None: "follow" for an Adam-family optimizer, else "local"; a given rule stays
    (OptimizerKnobs validates it)."""
    if mode is None:
        return ADAM_FAMILY_DEFAULT if adam_family else OTHER_DEFAULT
    return mode
