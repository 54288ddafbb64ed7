"""Resident launches: the workers of many test modules run in one launch per (world
size, framework, transport), in turn (workers/resident.py), since a launch's imports
and engine start (3.7 s at P=2 to 12 s at P=8 under mpirun, plus about 10 s of
TensorFlow imports per rank) were most of the suite's time.

A test module declares its items when it is imported, before any test runs:

    UNEVEN = resident.item("uneven.py", 4, "op", "optimizer", timeout=300)

and its test or fixture calls ``UNEVEN.run()`` (an ``MpiRun`` of that item alone) or
``UNEVEN.scenarios()`` (a ``Launch``, for workers that use ``common.run_scenarios``).
The first call for a (size, framework, transport) starts the launch of every item
declared for it by a module that has a selected test, so ``pytest -k`` runs only what
it needs.

Each item keeps its own timeout: while the launch runs, the ranks' progress files say
which item they are in, and an item that runs past its timeout ends the launch. Its
test fails naming it ("hung"); items after it fail as "not run", naming the hung one;
items before it keep their results.

Only workers that leave the engine and Horovod usable belong here: a worker that kills,
stops or isolates ranks, expects a failed launch, or needs its own engine settings
(environment variables read at engine start) keeps a launch of its own.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

ITEMS = []  # every declared item, in declaration order (module import order)
SELECTED_MODULES = set()  # modules with a selected test (conftest's collection hook)
SELECTED_EXTENDED = set()  # modules with a selected test marked `extended`
STARTED = {}  # (transport, np, framework) -> its ResidentLaunch


class Item:
    def __init__(self, worker, np_, args, framework, timeout, module, last, extended=False):
        self.worker, self.np, self.args = worker, np_, [str(a) for a in args]
        self.framework, self.timeout, self.module = framework, timeout, module
        self.last, self.extended = last, extended
        self.name = f"{module}:{worker} {' '.join(self.args)}".strip()

    def run(self):
        """This item's MpiRun; fails the calling test if the item hung, did not run,
        raised or exited with an error on any rank, or a rank left no result."""
        from conftest import CURRENT
        key = (CURRENT["transport"], self.np, self.framework)
        if key not in STARTED:
            STARTED[key] = ResidentLaunch(key)
        return STARTED[key].result(self)

    def scenarios(self):
        """This item as a conftest.Launch (workers that run common.run_scenarios)."""
        from conftest import Launch
        return Launch(self.run())


def item(worker, np_, *args, framework="torch", timeout=180, last=False, extended=False):
    """Declares that the calling test module runs tests/workers/<worker> with `args` on
    np_ ranks inside the resident launch for (np_, framework). `last`: after the items
    without it; for workers that leave many streams (failed ones included) in the
    engine, which slow the rounds of timing checks that would follow them.
    `extended`: only read by tests marked `extended`, so run only when one of the
    module's extended tests is selected (make test-all)."""
    module = sys._getframe(1).f_globals["__name__"]
    declared = Item(worker, np_, args, framework, timeout, module, last, extended)
    ITEMS.append(declared)
    return declared


class ResidentLaunch:
    """One launch of workers/resident.py running the selected items of one key."""

    def __init__(self, key, items=None):
        """`items`: these instead of the declared ones (the harness's own test)."""
        import json

        from conftest import framework_env, mpi_command
        transport, np_, framework = key
        if items is None:
            items = [it for it in ITEMS if (it.np, it.framework) == (np_, framework)
                     and it.module in SELECTED_MODULES
                     and (not it.extended or it.module in SELECTED_EXTENDED)]
        self.items = sorted(items, key=lambda it: it.last)
        names = [it.name for it in self.items]
        assert len(set(names)) == len(names), f"two items of one launch share a name: {names}"
        plan_file = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="wagma_plan_",
                                                delete=False)
        self.item_dirs = {}
        cmd, env, self.dir = mpi_command("resident.py", np_, plan_file.name,
                                         env=framework_env(framework))
        plan = []
        for i, it in enumerate(self.items):
            self.item_dirs[it.name] = os.path.join(self.dir, f"item{i}")
            os.mkdir(self.item_dirs[it.name])
            plan.append(dict(name=it.name, worker=it.worker, args=it.args,
                             results=self.item_dirs[it.name]))
        json.dump(plan, plan_file)
        plan_file.close()
        self.np = np_
        self.hung = None  # the item that ran past its timeout
        self._run(cmd, env, plan_file.name)

    def _progress(self):
        """The item the most advanced rank is in, or None before the first."""
        names = [it.name for it in self.items]
        at = []
        for r in range(self.np):
            path = os.path.join(self.dir, f"progress.rank{r}")
            if os.path.exists(path):
                with open(path) as f:
                    name = f.read()
                if name in names:
                    at.append(names.index(name))
        return self.items[max(at)] if at else None

    def _run(self, cmd, env, plan_path):
        # Kept in the launch's directory (the summary prints it): a passing item that
        # took far longer than usual can still be read up afterwards (stall warnings).
        out = open(os.path.join(self.dir, "launch.stdout"), "w+")
        err = open(os.path.join(self.dir, "launch.stderr"), "w+")
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env,
                                start_new_session=True)
        # The launch's start (imports, engine) counts against the first item.
        current, since = None, t0
        while proc.poll() is None:
            time.sleep(0.5)
            now_in = self._progress()
            if now_in is not current and now_in is not None:
                current, since = now_in, time.monotonic()
            item_ = current or (self.items[0] if self.items else None)
            if item_ is not None and time.monotonic() - since > item_.timeout:
                self.hung = item_
                os.killpg(proc.pid, signal.SIGKILL)
                subprocess.run(["pkill", "-9", "-f", plan_path], check=False)
                proc.wait()
                break
        self.elapsed = time.monotonic() - t0
        self.returncode = proc.returncode
        out.seek(0)
        err.seek(0)
        self.stdout, self.stderr = out.read(), err.read()
        out.close()
        err.close()

    def item_seconds(self):
        """item name -> the longest any rank spent in it (None if not finished)."""
        out = {}
        for it in self.items:
            seconds = []
            for r in range(self.np):
                path = os.path.join(self.item_dirs[it.name], f"done.rank{r}")
                if os.path.exists(path):
                    with open(path) as f:
                        seconds.append(float(f.read()))
            out[it.name] = max(seconds) if len(seconds) == self.np else None
        return out

    def _done(self, it):
        d = self.item_dirs[it.name]
        return all(os.path.exists(os.path.join(d, f"done.rank{r}")) for r in range(self.np))

    def result(self, it):
        from conftest import MpiRun, read_results
        tail = f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-5000:]}"
        if it.name not in self.item_dirs:
            pytest.fail(f"{it.name}: not in this resident launch (its module was not "
                        f"selected when the launch started)")
        if not self._done(it):
            if self.hung is it:
                pytest.fail(f"{it.name}: hung, ended after its timeout of {it.timeout} s "
                            f"(resident launch on {self.np} ranks)\n{tail}")
            cause = (f"{self.hung.name} hung before it" if self.hung else
                     f"the launch ended with code {self.returncode} before it finished")
            pytest.fail(f"{it.name}: not run to its end: {cause}\n{tail}")
        d = self.item_dirs[it.name]
        errors = {}
        for r in range(self.np):
            path = os.path.join(d, f"error.rank{r}.txt")
            if os.path.exists(path):
                with open(path) as f:
                    errors[r] = f.read()
        assert not errors, f"{it.name} raised:\n" + "\n".join(
            f"rank {r}:\n{tb}" for r, tb in sorted(errors.items())) + "\n" + tail
        results = read_results(d)
        assert sorted(results) == list(range(self.np)), (
            f"{it.name}: missing rank results: {sorted(results)}\n{tail}")
        seconds = []
        for r in range(self.np):
            with open(os.path.join(d, f"done.rank{r}")) as f:
                seconds.append(float(f.read()))

        class _Proc:  # MpiRun's view of the launch, for this item
            returncode = 0
            stdout, stderr = self.stdout, self.stderr
        return MpiRun(_Proc, results, max(seconds), d)
