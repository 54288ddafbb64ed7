"""Who is in the job, under Horovod elastic: the engine restarts for each member set.

Horovod elastic renumbers ranks on every reset (``hvd.shutdown(); hvd.init()``). The
engine's own connections (Gloo) are per member set, so each member set gets a
*generation*: after Horovod's init, every member gathers, by one named Horovod
allgather, who it is (host name and process id), the generation it last ran in and
the member list of that generation. The new generation is one more than the highest;
survivors are the members that ran in the previous one; joiners are the others. The
engine then starts over Gloo under a rendezvous prefix of its own generation.

Each change is recorded for ``stats()``: its time, the new size P', this rank, the
ranks lost (by their rank in the previous generation) and the ranks added (by their
new rank).
"""
import os
import time

_GATHER_NAME = "wagma.membership"


class Membership:
    def __init__(self):
        self.generation = 0          # 0: this process has not run in any member set
        self.members = []            # (host, pid) by rank, in this generation
        self.changes = []            # dicts, oldest first
        self.was_survivor = False    # ran in the previous generation of the job

    @staticmethod
    def identity():
        return (os.environ.get("HOROVOD_HOSTNAME", "localhost"), os.getpid())

    def agree(self, hvd):
        """Collective over Horovod's current members: the new generation. Returns the
        rendezvous prefix of the engine's Gloo connections."""
        me = self.identity()
        infos = hvd.allgather_object(
            {"id": me, "generation": self.generation, "members": self.members},
            name=_GATHER_NAME)
        previous_gen = max(i["generation"] for i in infos)
        previous = next(i["members"] for i in infos if i["generation"] == previous_gen)
        current = [tuple(i["id"]) for i in infos]
        previous = [tuple(m) for m in previous]
        self.was_survivor = self.generation == previous_gen and previous_gen > 0
        lost = [r for r, m in enumerate(previous) if m not in current]
        added = [r for r, i in enumerate(infos) if i["generation"] != previous_gen]
        self.generation = previous_gen + 1
        self.members = current
        if previous_gen > 0 and (lost or added):
            self.changes.append({"time": time.time(), "generation": self.generation,
                                 "size": len(current), "rank": hvd.rank(),
                                 "lost": lost, "added": added})
        return f"gen{self.generation}.{len(current)}."

    def survivors(self, hvd):
        """Whether each current rank ran in the previous generation (collective)."""
        return hvd.allgather_object(self.was_survivor, name=_GATHER_NAME + ".survivors")


MEMBERSHIP = Membership()


def elastic():
    """True when Horovod runs elastic (horovodrun --min-np/--host-discovery-script)."""
    return os.environ.get("HOROVOD_ELASTIC", "0") == "1"
