"""The optimizers' averaging rule follows the optimizer family (averaging_policy.py;
docs/api.md, docs/semantics.md): "follow" for the Adam family (2026-12-07; "fresh" before), "local"
otherwise, in both factories. Run with `check.py --catalogue detail_averaging_default`."""

CORE = "tests/test_optimizer_core.py::test_the_averaging_default_follows_the_optimizer_family"
BOTH = ("tests/test_twin_properties.py::"
        "test_both_factories_accept_and_refuse_the_documented_optimizers")
POLICY = "horovod_wagma/common/optimizer/averaging_policy.py"

MUTANTS = [
    dict(id="averaging-default-local-for-adam", file=POLICY,
         edits=[('ADAM_FAMILY_DEFAULT = "follow"', 'ADAM_FAMILY_DEFAULT = "local"')],
         tests=[CORE],
         bug="Adam keeps the 'local' rule by default: 2.17x LB-BSP's time on mlp_adam "
             "with one rank 2x slower, against 1.17x"),
    dict(id="averaging-default-fresh-for-sgd", file=POLICY,
         edits=[('OTHER_DEFAULT = "local"', 'OTHER_DEFAULT = "fresh"')],
         tests=[CORE],
         bug="SGD takes the 'fresh' rule by default: 1.46x LB-BSP's time on mlp20 with "
             "one rank 2x slower, against 1.00x"),
    dict(id="averaging-given-rule-ignored", file=POLICY,
         edits=[("    if mode is None:\n        return ADAM_FAMILY_DEFAULT",
                 "    if True:\n        return ADAM_FAMILY_DEFAULT")],
         tests=[CORE],
         bug="a rule the user passes is replaced by the family's default"),
    dict(id="averaging-torch-not-resolved-by-family", file="horovod_wagma/torch/optimizer.py",
         edits=[("knobs.averaging, group_second_moment.keeps_second_moment(optimizer)))",
                 "knobs.averaging, False))")],
         tests=[BOTH],
         bug="PyTorch's Adam gets the SGD default"),
    dict(id="averaging-keras-not-resolved-by-family", file="horovod_wagma/keras/optimizer.py",
         edits=[("knobs.averaging, is_adam_family(optimizer)))", "knobs.averaging, False))")],
         tests=[BOTH],
         bug="Keras's Adam gets the SGD default"),
    dict(id="averaging-status-hides-the-rule", file="horovod_wagma/common/optimizer/optimizer_core.py",
         edits=[('self.stream_knobs["group_size"], self.config.averaging)',
                 'self.stream_knobs["group_size"], self.knobs.averaging and "local")')],
         tests=[CORE],
         bug="wagma_status().averaging says 'local' whatever the rule"),
]
