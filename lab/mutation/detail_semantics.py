"""Detail pass over docs/claims.md rows S1-S60 (docs/semantics.md), 2026-12-02: each
mutant breaks one detail a semantics.md promise states (a value an error names, a
default, a bound) that the row's tests ran but did not assert before; the test named
in the row now asserts it. Format: lab/mutation/mutants.py's docstring. C++ mutants in
cpp_ops/engine/ are caught by `make engine-unit-test`, which check.py runs for them;
`bug` names the unit test."""

MUTANTS = [
    dict(id="dse-group-size-mismatch-shows-own-value-twice",
         file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("""    s << config.group_size << ", " << theirs << " has group_size "
      << o.config.group_size;""",
                 """    s << config.group_size << ", " << theirs << " has group_size "
      << config.group_size;""")],
         tests=[],
         bug="semantics.md:14-16 (S1): a round-0 mismatch names both values; a group_size "
             "mismatch now shows the first rank's value for both ranks ('rank 1 has "
             "group_size 2'), caught by registration_book_test.cc::"
             "TestEachKnobMismatchNamesBothValuesWithTheirRanks"),
    dict(id="dse-max-staleness-mismatch-values-swapped",
         file="cpp_ops/engine/core/stream_spec.cc",
         edits=[("""    s << config.max_staleness << ", " << theirs << " has max_staleness "
      << o.config.max_staleness;""",
                 """    s << o.config.max_staleness << ", " << theirs << " has max_staleness "
      << config.max_staleness;""")],
         tests=[],
         bug="semantics.md:14-16 (S1): each value is named with the rank that has it; a "
             "max_staleness mismatch now gives each rank the other's value, caught by "
             "registration_book_test.cc::TestEachKnobMismatchNamesBothValuesWithTheirRanks"),
]
