"""The "follow" averaging rule (docs/semantics.md "Averaging rules", docs/design.md 2.6),
2026-12-07: "fresh"'s output, and a passive round's result becomes the rank's published
value (not for a rank serving its final model, nor for a failed round). Run with
`check.py --catalogue detail_follow`."""

LEFT_OUT = ("tests/test_global_rounds.py::"
            "test_a_left_out_member_and_the_others_get_exact_values -k follow")
# "follow" where its value counts in every round (max_staleness 5: never left out).
POLICY = "cpp_ops/engine/rounds/round_policy.cc"
RULE = "cpp_ops/engine/rounds/averaging_rule.cc"

MUTANTS = [
    dict(id="follow-publishes-nothing", file=POLICY,
         edits=[("  return RuleOf(configured).publishes_served_result && passive",
                 "  return false && RuleOf(configured).publishes_served_result && passive")],
         tests=[LEFT_OUT],
         bug="'follow' is 'fresh': a late rank's engine contributes its app's old model "
             "round after round (mlp_adam, random stragglers: 0.89x local SGD's time "
             "against 0.65x)"),
    dict(id="follow-publishes-the-final-model-over", file=POLICY,
         edits=[("passive && !final_model && !failed;", "passive && !failed;")],
         tests=[LEFT_OUT],
         bug="a joined rank under 'follow' serves the group's last mean instead of its "
             "final model (join()'s promise)"),
    dict(id="follow-output-not-fresh", file=RULE,
         edits=[('{Averaging::kFollow, "follow", Fresh, FreshOutput,',
                 '{Averaging::kFollow, "follow", Local, FreshOutput,')],
         tests=[LEFT_OUT],
         bug="'follow' outputs 'local''s m + (x - c) for a passive round, not "
             "'fresh''s m + (x - c)/g (nor (s + x)/(g + 1) when left out)"),
    dict(id="follow-engine-never-publishes", file="cpp_ops/engine/core/engine.cc",
         edits=[("        Publish(s, rs.mean.data(), InputVersion(round), /*copy=*/true);\n",
                 "        (void)0;\n")],
         tests=[LEFT_OUT],
         bug="the engine never publishes a served result: 'follow' is 'fresh'"),
    dict(id="follow-served-mean-hides-the-apps-result", file="cpp_ops/engine/core/engine.cc",
         edits=[("Publish(s, rs.mean.data(), InputVersion(round), /*copy=*/true);",
                 "Publish(s, rs.mean.data(), OutputVersion(round), /*copy=*/true);")],
         tests=[LEFT_OUT],
         bug="a round the app takes after its engine served it publishes the group's mean "
             "and the app's own result is never published: its next passive join "
             "contributes the mean, losing its step"),
    dict(id="follow-code-is-fresh", file="cpp_ops/engine/c_api.cc",
         edits=[("  *code = static_cast<int>(rules[index].code);",
                 "  *code = rules[index].code == wagma::Averaging::kFollow ? 0 : "
                 "static_cast<int>(rules[index].code);")],
         tests=["tests/test_optimizer_core.py::test_averaging_rules_are_the_engines_table",
                LEFT_OUT],
         bug="Python sends 'follow' as 'fresh''s code"),
]
