"""CPU time of this process's threads, read from /proc (Linux), for the benchmarks
that report where CPU goes (the engine's thread is named "wagma-engine")."""
import os


def thread_cpu_seconds():
    """[(thread id, thread name, CPU seconds)] for every live thread of this process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        out.append((int(tid), name, (int(fields[11]) + int(fields[12])) / tick))
    return out
