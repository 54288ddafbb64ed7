"""Initialisation shared by the framework frontends.

``WagmaBasics(hvd)`` wraps one Horovod frontend module (``horovod.torch`` or
``horovod.tensorflow``): it initialises Horovod with MPI when needed, registers the
schedule's groups as Horovod process sets, starts the engine (eagerly in ``init``,
lazily on first use after a plain ``hvd.init()``) and holds the ``init`` defaults.
"""
import atexit
import inspect
import itertools
import os

from horovod_wagma.common.op import engine_lib, gloo_rendezvous

from horovod_wagma.common.elastic import membership
from horovod_wagma.common.op.config import WagmaConfig, validate_name
from horovod_wagma.common.op.errors import WagmaError
from horovod_wagma.common.elastic.join_both import join_engine_and_horovod
from horovod_wagma.common.op.schedule import groups


class WagmaBasics:
    def __init__(self, hvd, join_async=None):
        """``join_async(device)``: starts Horovod's join without blocking, returns
        (done(), result()); None where the frontend has none (join_both.py)."""
        self._hvd = hvd
        self._join_async = join_async
        self.config = WagmaConfig()
        self._group_sets = {}  # tuple(ranks) -> hvd.ProcessSet
        self._atexit_registered = False
        self._size = None  # world size, once the engine runs
        self._noname = itertools.count()

    # -- init -------------------------------------------------------------------------
    def init(self, comm=None, process_sets=None, group_size=None, sync_period=10,
             averaging="fresh", wait_avoiding=True, global_rounds="blocking",
             max_staleness=None):
        """Initialises Horovod (with MPI) if needed and the WAGMA engine.

        The WAGMA knobs set the defaults of every stream (calls and optimizers may
        override them): ``global_rounds="wait_avoiding"`` makes global rounds
        activate and join like group rounds, so fast ranks stop waiting for slow
        ones there too; ``max_staleness`` (default ``sync_period``) bounds how many
        rounds old a value an engine contributes for its app may be: an older one is
        left out of the average (never waited for).

        Every phase's groups for the default ``group_size`` are registered as static
        Horovod process sets when this call initialises Horovod on MPI, or dynamically
        when Horovod runs with dynamic process sets (on MPI or Gloo); see
        ``group_process_set``.
        """
        self.config = WagmaConfig(group_size, sync_period, averaging, wait_avoiding,
                                  global_rounds, max_staleness)
        hvd = self._hvd
        on_gloo = gloo_rendezvous.launched_on_gloo()
        if comm is not None:
            if on_gloo:
                raise ValueError("comm is an MPI communicator, but Horovod runs on Gloo "
                                 "here (horovodrun --gloo): pass comm=None")
            from mpi4py import MPI
            if not isinstance(comm, MPI.Comm) or comm.Compare(MPI.COMM_WORLD) == MPI.UNEQUAL:
                raise ValueError("horovod_wagma runs over MPI_COMM_WORLD; pass comm=None "
                                 "(or COMM_WORLD) and use Horovod process sets for subsets")
        if not hvd.is_initialized():
            self._check_horovod_built_for(on_gloo)
            dynamic = isinstance(process_sets, str) and process_sets.lower() == "dynamic"
            user_sets = [] if process_sets is None or dynamic else list(process_sets)
            if membership.elastic():
                # Ranks and size change on every reset, and Horovod's reset registers
                # no process sets: the groups are not registered.
                hvd.init(process_sets="dynamic" if dynamic else user_sets)
            elif on_gloo:
                # The groups are not registered: on Gloo, Horovod negotiates every
                # process set in every cycle, and the groups' sets made each of its
                # collectives several times slower (docs/api.md has the measurement).
                # group_process_set() needs dynamic process sets there.
                hvd.init(process_sets="dynamic" if dynamic else user_sets)
            else:
                from mpi4py import MPI  # initialises MPI with MPI_THREAD_MULTIPLE
                ours = [] if dynamic else self._new_group_sets(
                    MPI.COMM_WORLD.Get_size(), MPI.COMM_WORLD.Get_rank(), user_sets,
                    split=MPI.COMM_WORLD.Split)
                # Communicator-based process sets need Horovod's comm to be the mpi4py
                # world.
                hvd.init(comm=MPI.COMM_WORLD,
                         process_sets="dynamic" if dynamic else user_sets + ours)
            if dynamic:
                self._add_dynamic_group_sets()
        elif os.environ.get("HOROVOD_DYNAMIC_PROCESS_SETS", "0") not in ("", "0"):
            self._add_dynamic_group_sets()
        self.ensure_started()

    def _check_horovod_built_for(self, on_gloo):
        """A launch over a transport this Horovod was built without is named here, on
        every rank, before Horovod's own init fails less clearly. WAGMA's engine has
        both transports and follows Horovod's."""
        hvd = self._hvd
        if on_gloo and not hvd.gloo_built():
            raise WagmaError("launched with horovodrun --gloo, but this Horovod was built "
                             "without Gloo: launch with mpirun (or horovodrun --mpi), or "
                             "rebuild Horovod with HOROVOD_WITH_GLOO=1")
        if not on_gloo and not hvd.mpi_built():
            raise WagmaError("launched for MPI (mpirun, horovodrun --mpi or no launcher), but "
                             "this Horovod was built without MPI: launch with horovodrun "
                             "--gloo, or rebuild Horovod with HOROVOD_WITH_MPI=1")

    def _phase_groups(self, size):
        return groups(size, self.config.resolved_group_size(size))

    def _new_group_sets(self, size, rank, user_sets, split):
        """ProcessSets for every distinct group that is not the whole world.

        A phase whose groups are all new is split with one collective call of
        ``split`` (mpi4py's ``COMM_WORLD.Split``) that gives each rank its own group's
        communicator. Groups already registered (by the user, or in an earlier phase)
        are not registered twice; other new groups are given by their rank lists.
        """
        by_ranks = {tuple(ps.ranks): ps for ps in user_sets if ps.ranks is not None}
        self._group_sets.update(by_ranks)
        # Every rank must take the same decisions, so track all groups registered so
        # far, not only the ones this rank belongs to.
        registered = set(by_ranks)
        new = []
        for phase in self._phase_groups(size):
            fresh = [tuple(g) for g in phase if len(g) < size and tuple(g) not in registered]
            registered.update(fresh)
            if len(fresh) == len(phase):
                color = next(i for i, g in enumerate(phase) if rank in g)
                ps = self._hvd.ProcessSet(split(color, rank))
                self._group_sets[fresh[color]] = ps
                new.append(ps)
            else:
                for key in fresh:
                    ps = self._hvd.ProcessSet(list(key))
                    self._group_sets[key] = ps
                    new.append(ps)
        return new

    def _add_dynamic_group_sets(self):
        # add_process_set is collective; the schedule is identical on every rank, so
        # every rank adds the same sets in the same order.
        for phase in self._phase_groups(self._hvd.size()):
            for members in phase:
                key = tuple(members)
                if len(key) == self._hvd.size() or key in self._group_sets:
                    continue
                self._group_sets[key] = self._hvd.add_process_set(list(key))

    def group_process_set(self, phase):
        """This rank's Horovod ProcessSet in ``phase`` (of the ``init`` group size)."""
        hvd = self._require_horovod()
        phases = self._phase_groups(hvd.size())
        if not isinstance(phase, int) or not 0 <= phase < len(phases):
            raise ValueError(f"phase must be in [0, {len(phases)}), got {phase!r}")
        members = next(m for m in phases[phase] if hvd.rank() in m)
        if len(members) == hvd.size():
            return hvd.global_process_set
        ps = self._group_sets.get(tuple(members))
        if ps is None:
            raise WagmaError(
                "the WAGMA groups are not registered as Horovod process sets: initialise "
                "with horovod_wagma's init() instead of hvd.init(), or enable dynamic "
                "process sets (HOROVOD_DYNAMIC_PROCESS_SETS=1)")
        return ps

    # -- engine -----------------------------------------------------------------------
    def _require_horovod(self):
        if not self._hvd.is_initialized():
            raise WagmaError("horovod_wagma is not initialized: call hvd.init() or "
                             "horovod_wagma's init() before using group_allreduce")
        return self._hvd

    def ensure_started(self):
        """Starts the engine on first use, over the transport Horovod runs on: MPI
        (mpirun, horovodrun --mpi) or Gloo (horovodrun --gloo)."""
        if self._size is not None:
            return
        if engine_lib.started():
            self._size = self._hvd.size()
            return
        hvd = self._require_horovod()
        if hvd.mpi_enabled():
            engine_lib.start()
        elif hvd.gloo_enabled():
            prefix = membership.MEMBERSHIP.agree(hvd) if membership.elastic() else None
            engine_lib.start_gloo(**gloo_rendezvous.engine_spec(hvd.rank(), hvd.size(),
                                                                prefix))
            if prefix is not None:
                membership.MEMBERSHIP.record_on_timeline()
        else:
            raise WagmaError("horovod_wagma needs Horovod to run with MPI or Gloo: launch "
                             "with horovodrun (--gloo or --mpi) or mpirun")
        if not self._atexit_registered:
            # Registered after Horovod's own handler, so it runs first (LIFO): the
            # engine finishes its traffic before Horovod finalizes MPI (or Gloo).
            atexit.register(engine_lib.shutdown_at_exit)
            self._atexit_registered = True
        self._size = hvd.size()

    def restart(self):
        """Horovod elastic, after Horovod's reset: ends the engine of the old member set
        at once; the next ``ensure_started`` starts one over the new member set."""
        engine_lib.replace()
        self._size = None
        self._group_sets.clear()

    def stream_config(self, process_set=None, **knobs):
        """Validated per-call configuration; starts the engine if needed.

        ``knobs`` are per-call overrides (None keeps init's default). Returns
        (config, engine_fields, members): the engine's 6 config ints with S resolved
        for the process set's size, and its sorted world ranks ([] for the global
        set)."""
        config = self.config.override(**knobs)
        self.ensure_started()
        members = self.process_set_members(process_set)
        return config, config.engine_fields(self.num_ranks(process_set)), members

    def num_ranks(self, process_set=None):
        """The ranks a stream over ``process_set`` spans (the world for None); starts
        the engine if needed."""
        self.ensure_started()
        return len(self.process_set_members(process_set)) or self._size

    def prepare_call(self, dtype_supported, dtype_text, name, process_set, **knobs):
        """Checks one op call's arguments, the same way for every frontend.

        Returns (name, engine_fields, members); an unnamed call gets a name from a
        counter that every rank advances alike."""
        if not dtype_supported:
            raise TypeError("group_allreduce supports float32, float64, float16 and "
                            f"bfloat16 tensors, got {dtype_text}")
        validate_name(name)
        _, fields, members = self.stream_config(process_set, **knobs)
        if name is None:
            name = f"group_allreduce.noname.{next(self._noname)}"
        return name, fields, members

    def rank_in_set(self, process_set=None):
        """This rank's position among a stream's ranks (its world rank for None or
        the global set); Horovod's allgather over the set orders ranks alike."""
        members = self.process_set_members(process_set)
        return members.index(self._hvd.rank()) if members else self._hvd.rank()

    def process_set_members(self, process_set):
        """Sorted world ranks of a Horovod ProcessSet; [] for None or the global set."""
        if process_set is None or process_set.process_set_id == 0:
            return []
        ranks = process_set.ranks
        if ranks is None or process_set.process_set_id is None:
            raise ValueError("process_set is not registered with Horovod: pass it to "
                             "hvd.init(process_sets=...) or hvd.add_process_set() first")
        ranks = sorted(ranks)
        if self._hvd.rank() not in ranks:
            raise ValueError(f"rank {self._hvd.rank()} is not in process_set {ranks}")
        return ranks

    def join(self, device=-1):
        """Horovod's ``join`` for WAGMA: call it when this rank runs out of data.

        Until every rank has joined, this rank's engine keeps serving every WAGMA
        round with its final model (group rounds, and global rounds where it counts
        as present), and Horovod's own collectives are served by ``hvd.join``.
        Returns the last rank to join. Afterwards every rank continues from the
        furthest round any rank reached, so training may go on.
        """
        self.ensure_started()
        # Both joins at once, the first error raised (common/elastic/join_both.py).
        if "device" in inspect.signature(self._hvd.join).parameters:
            return join_engine_and_horovod(
                lambda: self._hvd.join(device),
                self._join_async and (lambda: self._join_async(device)))
        return join_engine_and_horovod(self._hvd.join)  # horovod.tensorflow's: no device

    def shutdown(self):
        engine_lib.shutdown()
        self._size = None
