"""The mutation check: plants each bug of mutants.py, one at a time, in a scratch copy of
the working tree, and runs the tests expected to catch it. A mutant is caught when one
of its tests fails; one that survives is a test gap or a harmless change, and the
report must say which (docs/mutation.md).

    make mutation-check                         # every mutant (about 20 minutes)
    .venv/bin/python lab/mutation/check.py --only divide-by-group fp16-always-replaces
    .venv/bin/python lab/mutation/check.py --every-test --only no-rebase  # all catchers

Steps: copy the tree (tracked and untracked files, built libraries and build/'s
objects; not .git or .venv) to --scratch; build it there (incremental: a C++ mutant
recompiles one file); run every mutant's tests unmutated (one that fails is listed and
skipped for every mutant: a mutant with no other test is UNPROVEN);
then per mutant: edit, rebuild if it is C++ (the engine's unit tests run first: they
are seconds), run its tests in order until one fails, restore the file. Tests run over
MPI only (--transports mpi): a rule is the same on either transport; a mutant of a
transport's own rule names its transport (`transports="gloo"`). The report, a
markdown table, goes to stdout and --report.
"""
import argparse
import importlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

# What the copy leaves out: paths from the root, and names anywhere. build/ goes along:
# its engine objects, newer than their sources, spare the copy a full build.
SKIP_PATHS = {".git", ".venv", "bench/results"}
SKIP_NAMES = {"__pycache__", ".pytest_cache"}


def copy_tree(scratch):
    """The working tree as it is (edits not yet committed included) into `scratch`."""
    if os.path.exists(scratch):
        shutil.rmtree(scratch)

    def ignore(directory, names):
        rel = os.path.relpath(directory, ROOT)
        return [n for n in names if os.path.normpath(os.path.join(rel, n)) in SKIP_PATHS
                or n in SKIP_NAMES or n.endswith(".egg-info")]
    shutil.copytree(ROOT, scratch, ignore=ignore, symlinks=True)


def run(cmd, cwd, env, timeout, log):
    """(exit code, seconds); output appended to `log`."""
    t0 = time.monotonic()
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        try:
            code = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    return code, time.monotonic() - t0


class Scratch:
    """The copy and how to build and test it."""

    def __init__(self, path, log):
        self.path, self.log = path, log
        # The copy's package, not the editable install's, in every rank (mpirun and
        # horovodrun pass the environment on).
        self.env = dict(os.environ, PYTHONPATH=path, OMPI_ALLOW_RUN_AS_ROOT="1",
                        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")

    def build(self):
        code, _ = run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                      self.path, self.env, 1800, self.log)
        return code == 0

    def engine_unit_tests(self):
        code, _ = run(["make", "-s", "engine-unit-test"], self.path, self.env, 600, self.log)
        return code == 0

    def pytest(self, test, timeout, transports="mpi"):
        """Whether `test` (a node id, then maybe pytest options: "-k expr") passed."""
        code, _ = run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                       "--transports", transports, "-m", ""] + test.split(), self.path, self.env,
                      timeout, self.log)
        return code == 0


def apply(scratch, mutant):
    """Plants the mutant; returns the file's original text."""
    path = os.path.join(scratch, mutant["file"])
    with open(path) as f:
        original = f.read()
    text = original
    for old, new in mutant["edits"]:
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"mutant {mutant['id']}: its original occurs {count} times in "
                             f"{mutant['file']} (the code changed: update mutants.py)")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    return original


def restore(scratch, mutant, original):
    with open(os.path.join(scratch, mutant["file"]), "w") as f:
        f.write(original)


def check_mutant(s, mutant, timeout, every_test=False, failing_unmutated=()):
    """(verdict, the tests that caught it, seconds). Stops at the first test that
    fails, unless `every_test`: then all of them run, and all that fail are listed.
    Tests in `failing_unmutated` are skipped: their failure would say nothing; a mutant
    left with no test to run is UNPROVEN."""
    t0 = time.monotonic()
    cpp = mutant["file"].endswith((".cc", ".h"))
    original = apply(s.path, mutant)
    caught = []
    try:
        if cpp and not s.build():
            return "caught", ["the build (does not compile)"], time.monotonic() - t0
        checks = [("make engine-unit-test", s.engine_unit_tests)] if (
            cpp and mutant["file"].startswith("cpp_ops/engine/")) else []
        transports = mutant.get("transports", "mpi")
        checks += [(test, lambda test=test: s.pytest(test, timeout, transports))
                   for test in mutant["tests"] if test not in failing_unmutated]
        if not checks:
            return "UNPROVEN", [], time.monotonic() - t0
        for name, passes in checks:
            if not passes():
                caught.append(name)
                if not every_test:
                    break
        return ("caught" if caught else "SURVIVED"), caught, time.monotonic() - t0
    finally:
        restore(s.path, mutant, original)
        if cpp:
            s.build()


def shown(tests):
    """The catching tests as the report lists them."""
    return "; ".join(t.replace("tests/", "", 1) for t in tests)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="mutant ids to run (default: all)")
    parser.add_argument("--catalogue", default="mutants",
                        help="the module (in lab/mutation/) whose MUTANTS to run: "
                             "mutants (the catalogue) or a batch planted as a reviewer "
                             "would, e.g. fresh_batch")
    parser.add_argument("--scratch", default="/tmp/wagma-mutation")
    parser.add_argument("--report", default=os.path.join(ROOT, "build", "mutation_report.md"))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per pytest run")
    parser.add_argument("--skip-baseline", action="store_true",
                        help="do not first check that the tests pass unmutated")
    parser.add_argument("--baseline-after", action="store_true",
                        help="instead of every test first, run only the tests that caught "
                             "a mutant, unmutated, afterwards: a mutant whose catchers all "
                             "fail unmutated too is UNPROVEN (cheaper: the survivors' tests "
                             "need no baseline)")
    parser.add_argument("--every-test", action="store_true",
                        help="run all of a mutant's tests, not only up to the first "
                             "that fails, and list every one that caught it")
    args = parser.parse_args()
    MUTANTS = importlib.import_module(args.catalogue).MUTANTS
    mutants = [m for m in MUTANTS if not args.only or m["id"] in args.only]
    unknown = set(args.only or []) - {m["id"] for m in MUTANTS}
    if unknown:
        raise SystemExit(f"unknown mutants: {sorted(unknown)}")
    copy_tree(args.scratch)
    log = os.path.join(args.scratch, "mutation.log")
    s = Scratch(args.scratch, log)
    print(f"scratch copy: {args.scratch}; log: {log}", flush=True)
    if not s.build():
        raise SystemExit(f"the unmutated copy does not build: see {log}")
    # Each mutant's target must be read as "caught by its tests", not "its tests were
    # already failing". A test that fails unmutated does not stop the run (on 2 cores a
    # timing test may fail under load): it is listed and no mutant's run counts on it.
    failing = set()
    if not args.skip_baseline and not args.baseline_after:
        tests = list(dict.fromkeys((t, m.get("transports", "mpi"))
                                   for m in mutants for t in m["tests"]))
        failing = {t for t, tr in tests if not s.pytest(t, args.timeout, tr)}
        if not s.engine_unit_tests():
            raise SystemExit(f"unmutated, the engine unit tests fail (see {log})")
        print(f"baseline: {len(tests) - len(failing)} of {len(tests)} test selections pass "
              f"unmutated" + (f"; failing: {sorted(failing)}" if failing else ""), flush=True)
    rows = []
    for m in mutants:
        verdict, by, seconds = check_mutant(s, m, args.timeout, args.every_test, failing)
        rows.append((m, verdict, by, seconds))
        print(f"{m['id']:34s} {verdict:8s} {seconds:6.0f}s  {shown(by)}", flush=True)
    if args.baseline_after:
        transports = {t: m.get("transports", "mpi") for m, _, _, _ in rows for t in m["tests"]}
        catchers = {t for m, v, by, _ in rows if v == "caught" for t in by if t in transports}
        failing = {t for t in sorted(catchers) if not s.pytest(t, args.timeout, transports[t])}
        if not s.engine_unit_tests():
            raise SystemExit(f"unmutated, the engine unit tests fail (see {log})")
        print(f"baseline after: {len(catchers) - len(failing)} of {len(catchers)} catching "
              f"test selections pass unmutated" +
              (f"; failing: {sorted(failing)}" if failing else ""), flush=True)
        rows = [(m, "UNPROVEN" if v == "caught" and by and all(t in failing for t in by)
                 else v, by, sec) for m, v, by, sec in rows]
    caught = sum(v == "caught" for _, v, _, _ in rows)
    lines = [f"Mutants caught: {caught} of {len(rows)} ({100.0 * caught / len(rows):.0f}%)",
             "", "| mutant | file | bug | verdict | caught by | s |", "|---|---|---|---|---|---|"]
    for m, verdict, by, seconds in rows:
        lines.append(f"| {m['id']} | {m['file']} | {m['bug']} | {verdict} | {shown(by)} | "
                     f"{seconds:.0f} |")
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w") as f:
        f.write(report)
    print("\n" + report)
    return 0 if caught == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
