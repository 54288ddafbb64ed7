"""Who is in the job, under Horovod elastic: the engine restarts for each member set.

Horovod elastic renumbers ranks on every reset (``hvd.shutdown(); hvd.init()``). The
engine's own connections (Gloo) are per member set, so each member set gets a
*generation*: after Horovod's init, every member gathers, by one named Horovod
allgather, who it is (host name and process id), the generation it last ran in and
the member list of that generation. The new generation is one more than the highest;
survivors are the members that ran in the previous one; joiners are the others. The
engine then starts over Gloo under a rendezvous prefix of its own generation.

A side that keeps half or fewer of the previous member set (without its rank 0) is
fenced (the majority rule, cpp_ops/engine/health/majority_rule.h): ``agree`` raises
``WagmaFenced``.

Each change is recorded for ``stats()``: its time, the new size P', this rank, the
ranks lost (by their rank in the previous generation) and the ranks added (by their
new rank).
"""
import os
import time

from horovod_wagma.common.op import engine_lib
from horovod_wagma.common.op.errors import WagmaFenced

_GATHER_NAME = "wagma.membership"


class Membership:
    def __init__(self):
        self.generation = 0          # 0: this process has not run in any member set
        self.members = []            # (host, pid) by rank, in this generation
        self.changes = []            # dicts, oldest first
        self.was_survivor = False    # held a replica of the previous member set
        # The latest generation whose replica this rank holds, and its members: set
        # when the state's sync() completes (mark_synced). A joiner whose first sync
        # never completed (Horovod reset again first) still holds its own initial model,
        # and a survivor whose sync failed still holds its older replica.
        self.replica_generation = 0
        self.replica_members = []

    @staticmethod
    def identity():
        return (os.environ.get("HOROVOD_HOSTNAME", "localhost"), os.getpid())

    def agree(self, hvd):
        """Collective over Horovod's current members: the new generation. Returns the
        rendezvous prefix of the engine's Gloo connections."""
        infos = hvd.allgather_object(
            {"id": self.identity(), "generation": self.generation,
             "replica": self.replica_generation, "members": self.replica_members},
            name=_GATHER_NAME)
        # The previous member set is that of the newest replica anyone holds.
        previous_gen = max(i["replica"] for i in infos)
        previous = [tuple(m) for m in
                    next(i["members"] for i in infos if i["replica"] == previous_gen)]
        current = [tuple(i["id"]) for i in infos]
        self.was_survivor = self.replica_generation == previous_gen > 0
        lost = [r for r, m in enumerate(previous) if m not in current]
        added = [r for r, i in enumerate(infos) if i["replica"] != previous_gen]
        if previous_gen > 0 and not engine_lib.may_go_on(len(previous), lost):
            # Survivors that reached the reset without their engine's verdict (e.g. from
            # a failed Horovod collective) are judged here by the same rule.
            raise WagmaFenced(
                f"fenced: ranks {', '.join(map(str, lost))} of the previous member set were "
                f"lost (Horovod re-formed the job without them); "
                f"{len(previous) - len(lost)} of {len(previous)} ranks remain on this side, "
                "not a majority (more than half, or half with rank 0), so this side stops "
                "rather than train alone")
        # Numbered past every generation any member has seen: the engine's rendezvous
        # prefix must be new, and the same on every rank.
        self.generation = max(i["generation"] for i in infos) + 1
        self.members = current
        if previous_gen > 0 and (lost or added):
            self.changes.append({"time": time.time(), "generation": self.generation,
                                 "size": len(current), "rank": hvd.rank(),
                                 "lost": lost, "added": added})
        # The engine about to start writes its own timeline file (engine_settings.cc).
        os.environ["WAGMA_TIMELINE_GENERATION"] = str(self.generation)
        return f"gen{self.generation}.{len(current)}."

    def mark_synced(self):
        """This rank now holds a replica of the current generation's model."""
        self.replica_generation = self.generation
        self.replica_members = list(self.members)

    def record_on_timeline(self):
        """After the engine of this generation started: its change, if any, on its
        timeline."""
        if self.changes and self.changes[-1]["generation"] == self.generation:
            engine_lib.membership_changed(self.changes[-1])

    def survivors(self, hvd):
        """Whether each current rank ran in the previous generation (collective)."""
        return hvd.allgather_object(self.was_survivor, name=_GATHER_NAME + ".survivors")


MEMBERSHIP = Membership()


def elastic():
    """True when Horovod runs elastic (horovodrun --min-np/--host-discovery-script)."""
    return os.environ.get("HOROVOD_ELASTIC", "0") == "1"


def membership_changes():
    """Horovod elastic: this rank's record of member-set changes, oldest first, each
    {"time", "generation", "size", "rank", "lost", "added"} (lost: ranks of the
    previous member set; added: ranks in the new one). Exported by both frameworks'
    modules."""
    return [dict(c) for c in MEMBERSHIP.changes]
