"""Shared fixtures: launch real ranks, with a timeout, and collect each rank's JSON
result file (workers/common.py: emit).

Modules marked `ranks` run once per transport (the `transport` parameter): under
mpirun (the engine on MPI) and under horovodrun --gloo (the engine on Gloo, no MPI in
the job). `--transports mpi` (or `gloo`) narrows the suite to one; tests that need MPI
itself are marked `mpi_only`."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

import resident
from horovodrun_launcher import command as horovodrun_command

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = os.path.join(HERE, "workers")

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    # More ranks than cores: MPI must yield when idle (docs/launching.md).
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_MCA_btl": "self,vader,tcp",
    "PYTHONUNBUFFERED": "1",
}


# Every launch the suite starts goes through mpi_command; the totals are printed at the
# end of the run, since launches (Python and framework imports on every rank) are most
# of the suite's time.
LAUNCHES = {"mpi": 0, "gloo": 0, "jobs": 0}  # jobs: elastic and multi-host
TRANSPORTS = ("mpi", "gloo")
CURRENT = {"transport": "mpi"}  # set by the `transport` fixture


def pytest_addoption(parser):
    parser.addoption("--transports", default=",".join(TRANSPORTS),
                     help="comma-separated engine transports that `ranks` modules run "
                          "over (mpi, gloo)")
    parser.addoption("--gloo-heavy", action="store_true",
                     help="also run the launches marked gloo_heavy on Gloo")


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("ranks") is None:
        return
    chosen = [t for t in metafunc.config.getoption("--transports").split(",") if t]
    unknown = set(chosen) - set(TRANSPORTS)
    if unknown:
        raise pytest.UsageError(f"--transports: unknown {sorted(unknown)}")
    if metafunc.definition.get_closest_marker("mpi_only") is not None:
        chosen = [t for t in chosen if t == "mpi"]
    metafunc.parametrize("transport", chosen, indirect=True, scope="module")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Without --gloo-heavy, the Gloo runs of gloo_heavy launches are deselected. The
    modules left with a selected test put their items in the resident launches."""
    if not config.getoption("--gloo-heavy"):
        keep, drop = [], []
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            heavy = item.get_closest_marker("gloo_heavy") is not None
            (drop if heavy and params.get("transport") == "gloo" else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    resident.SELECTED_MODULES.update(item.module.__name__ for item in items)
    resident.SELECTED_EXTENDED.update(item.module.__name__ for item in items
                                      if item.get_closest_marker("extended") is not None)


def pytest_itemcollected(item):
    """`extended_when(name=value, ...)`: the test is `extended` (make test-all only) in
    the cases whose parameters match, e.g. its TensorFlow run."""
    marker = item.get_closest_marker("extended_when")
    params = getattr(getattr(item, "callspec", None), "params", {})
    if marker is not None and all(params.get(k) == v for k, v in marker.kwargs.items()):
        item.add_marker(pytest.mark.extended)


@pytest.fixture(scope="module", autouse=True)
def transport(request):
    """The engine transport this module's launches use ("mpi" outside `ranks`)."""
    CURRENT["transport"] = getattr(request, "param", "mpi")
    yield CURRENT["transport"]
    CURRENT["transport"] = "mpi"


def launch_prefix(np_, transport=None):
    """(the launcher's command up to the program, the environment it adds): mpirun, or
    horovodrun --gloo (tests/horovodrun_launcher.py)."""
    transport = transport or CURRENT["transport"]
    if transport == "gloo":
        horovodrun, env = horovodrun_command()
        return horovodrun + ["--gloo", "-np", str(np_), "-H", f"localhost:{np_}"], env
    return ["mpirun", "-np", str(np_), "--oversubscribe", "--bind-to", "none"], {}


class MpiRun:
    def __init__(self, proc, results, elapsed, results_dir=None):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.results = results  # rank -> dict
        self.elapsed = elapsed
        self.results_dir = results_dir  # where the ranks wrote their results


def mpi_command(worker, np_, *args, env=None):
    """(command, environment, results directory) to run a worker on np_ ranks over
    the current transport."""
    LAUNCHES[CURRENT["transport"]] += 1
    prefix, launcher_env = launch_prefix(np_)
    cmd = prefix + [sys.executable, os.path.join(WORKERS, worker)] + [str(a) for a in args]
    results_dir = tempfile.mkdtemp(prefix="wagma_test_")
    full_env = dict(os.environ, **MPI_ENV, **launcher_env, WAGMA_TEST_RESULTS=results_dir,
                    **(env or {}))
    return cmd, full_env, results_dir


def read_results(results_dir):
    """rank -> the JSON each rank emitted."""
    results = {}
    for fname in os.listdir(results_dir):
        if fname.endswith(".json"):
            with open(os.path.join(results_dir, fname)) as f:
                d = json.load(f)
            results[d["rank"]] = d
    return results


def run_mpi(worker, np_, *args, timeout=180, env=None, check=True):
    """Runs tests/workers/<worker> on np_ ranks; returns MpiRun. Fails, never hangs."""
    import time
    cmd, full_env, results_dir = mpi_command(worker, np_, *args, env=env)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=full_env)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")
        err = (e.stderr or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
        subprocess.run(["pkill", "-f", os.path.join(WORKERS, worker)], check=False)
        pytest.fail(f"{worker} on {np_} ranks timed out after {timeout}s\n"
                    f"stdout:\n{out[-4000:]}\nstderr:\n{err[-4000:]}")
    elapsed = time.monotonic() - t0
    results = read_results(results_dir)
    if check:
        assert proc.returncode == 0, (
            f"{worker} failed with code {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
            f"stderr:\n{proc.stderr[-6000:]}")
        assert sorted(results) == list(range(np_)), (
            f"missing rank results: {sorted(results)}\nstdout:\n{proc.stdout[-4000:]}\n"
            f"stderr:\n{proc.stderr[-4000:]}")
    return MpiRun(proc, results, elapsed, results_dir)


class Launch:
    """One mpirun of a worker that ran several scenarios (workers/common.py:
    run_scenarios). Module-scoped fixtures hold one; each test reads its scenario."""

    def __init__(self, run):
        self.run = run
        self.stderr = run.stderr
        self.transport = CURRENT["transport"]

    def results(self, scenario):
        """rank -> the scenario's payload; fails the calling test if the scenario
        raised on any rank, or if the launch ran over another transport than the
        test's (a module-scoped fixture that does not take `transport` is built once
        and would hand a Gloo test the MPI launch's results)."""
        assert self.transport == CURRENT["transport"], (
            f"this launch ran over {self.transport}, the test over "
            f"{CURRENT['transport']}: its fixture must take the `transport` fixture")
        errors = {rank: res["errors"][scenario] for rank, res in self.run.results.items()
                  if scenario in res["errors"]}
        assert not errors, f"scenario {scenario!r} raised:\n" + "\n".join(
            f"rank {rank}:\n{tb}" for rank, tb in sorted(errors.items()))
        return {rank: res["scenarios"][scenario] for rank, res in self.run.results.items()}

    def seconds(self, scenario):
        """The longest any rank spent in the scenario."""
        return max(res["seconds"][scenario] for res in self.run.results.values())


def run_scenarios(worker, np_, scenarios, timeout, env=None):
    """Runs tests/workers/<worker>'s `scenarios` in order in one launch on np_ ranks."""
    return Launch(run_mpi(worker, np_, *scenarios, timeout=timeout, env=env))


@pytest.fixture
def mpi():
    return run_mpi


# TensorFlow launches cost about 10 s of imports per rank: marked, so that
# `pytest -m "not tf"` skips them.
FRAMEWORKS = ["torch", pytest.param("tensorflow", marks=pytest.mark.tf)]


@pytest.fixture(params=FRAMEWORKS)
def framework(request):
    """Runs a test once per frontend; workers read WAGMA_TEST_FRAMEWORK."""
    return request.param


def framework_env(framework):
    return {"WAGMA_TEST_FRAMEWORK": framework}


MODULE_SECONDS = {}  # test module -> seconds spent in its setup, calls and teardown


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::")[0]
    MODULE_SECONDS[module] = MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"launches: {sum(LAUNCHES.values())} ({LAUNCHES['mpi']} mpirun, "
        f"{LAUNCHES['gloo']} horovodrun --gloo, {LAUNCHES['jobs']} elastic or "
        f"multi-host jobs)")
    for module, seconds in sorted(MODULE_SECONDS.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}s  {module}")
    # A resident launch's time shows under the first module that needed it: its items.
    for (transport, np_, framework), launch in sorted(resident.STARTED.items()):
        terminalreporter.write_line(f"resident launch {transport}, {np_} ranks, {framework}: "
                                    f"{launch.elapsed:.1f}s (output: {launch.dir})")
        for name, seconds in launch.item_seconds().items():
            shown = "not finished" if seconds is None else f"{seconds:.1f}s"
            terminalreporter.write_line(f"    {shown:>12}  {name[:100]}")
