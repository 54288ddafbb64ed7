"""docs/claims.md names, for every documented promise, the tests that guard it and the
mutants that prove them: a renamed or deleted test, or a mutant id that no catalogue
holds, would leave a row pointing at nothing while the table still looks complete."""
import importlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_ID = re.compile(r"((?:tests|lab/tests)/[\w/]+\.py)::(\w+)")
CXX_ID = re.compile(r"(cpp_ops/[\w/]+\.cc)::(\w+)")
# Catalogues whose ids a row may name: the check's own and the reviewers' batches.
CATALOGUES = ("mutants", "fresh_batch", "fresh_batch2", "fresh_batch3", "fresh_batch4",
              "fresh_batch5", "fresh_batch6", "fresh_batch7", "fresh_batch8", "fresh_batch9",
              "fresh_batch10", "fresh_survivors")


def rows():
    with open(os.path.join(ROOT, "docs", "claims.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.split("|")]
            if len(cells) >= 6 and re.fullmatch(r"[RASFE]\d+\w?", cells[1]):
                yield cells[1], cells[3], cells[4]


def mutant_ids():
    sys.path.insert(0, os.path.join(ROOT, "lab", "mutation"))
    try:
        return {m["id"] for name in CATALOGUES
                for m in importlib.import_module(name).MUTANTS}
    finally:
        sys.path.pop(0)


def test_every_row_names_tests_that_exist():
    missing = []
    for row, tests, _ in rows():
        for path, name in TEST_ID.findall(tests):
            text = open(os.path.join(ROOT, path)).read() if os.path.exists(
                os.path.join(ROOT, path)) else ""
            if not re.search(rf"^\s*def {name}\(", text, re.M):
                missing.append(f"{row}: {path}::{name}")
        for path, name in CXX_ID.findall(tests):
            full = os.path.join(ROOT, path)
            if not os.path.exists(full) or not re.search(rf"\b{name}\s*\(", open(full).read()):
                missing.append(f"{row}: {path}::{name}")
    assert not missing, "claims.md names tests that do not exist:\n" + "\n".join(missing)


def test_every_named_mutant_is_in_a_catalogue():
    known = mutant_ids()
    unknown = []
    for row, _, mutants in rows():
        for word in re.findall(r"`?([a-z0-9][a-z0-9-]*-[a-z0-9-]+)`?", mutants):
            if word not in known:
                unknown.append(f"{row}: {word}")
    assert not unknown, "claims.md names mutants no catalogue holds:\n" + "\n".join(unknown)


def test_the_table_has_a_row_for_each_doc_section():
    ids = [row for row, _, _ in rows()]
    assert len(ids) == len(set(ids)), "a row id is used twice"
    for prefix in "RASFE":
        assert any(r.startswith(prefix) for r in ids), prefix


def test_every_mutant_still_finds_the_code_it_plants_into():
    """A mutant whose edit text no longer occurs (the code moved or was reworded) is
    refused by the check at run time, and its claim goes unguarded meanwhile: every
    catalogue's edits must apply to today's files."""
    sys.path.insert(0, os.path.join(ROOT, "lab", "mutation"))
    try:
        stale = []
        for name in CATALOGUES:
            for m in importlib.import_module(name).MUTANTS:
                with open(os.path.join(ROOT, m["file"])) as f:
                    text = f.read()
                stale += [f"{name}:{m['id']} ({m['file']}): {old[:70]!r}"
                          for old, _ in m["edits"] if old not in text]
    finally:
        sys.path.pop(0)
    assert not stale, "mutants whose code is gone:\n" + "\n".join(stale)
