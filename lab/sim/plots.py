"""The figures of ``--sweep`` and ``--defaults``: two panels side by side, each with
a log2 x axis (ranks P; group size S and sync period tau)."""
import contextlib

from .common import COLORS, LABELS, METHODS


@contextlib.contextmanager
def two_panels(path, title, height):
    """A figure of two panels side by side (yields their axes); titled and saved to
    ``path`` when the block ends."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, height))
    yield axes
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def finish(ax, xlabel, ylabel=None, logy=False):
    """A panel's scales, labels and legend, once its lines are drawn."""
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def method_lines(ax, xs, rows, methods):
    """One line per method: rows[i]["samples_per_s"][m] at xs[i]."""
    for m in methods:
        ax.plot(xs, [row["samples_per_s"][m] for row in rows], marker="o",
                label=LABELS[m], color=COLORS.get(m, "tab:purple"))


def plot_sweep(points, meta, path):
    Ps = [p["P"] for p in points]
    title = (f"simulated, {meta['network']} network, pattern {meta['pattern']}, "
             f"tau={meta['sync_period']}, model {meta['model_bytes'] / 1024:.0f} KB")
    with two_panels(path, title, 4.2) as (a1, a2):
        method_lines(a1, Ps, points, METHODS)
        a1.plot(Ps, [p["ideals"]["no_wait"] for p in points], "k--", label="no-wait ideal")
        finish(a1, "ranks P", "samples/s (sum over ranks)", logy=True)
        for m in ("wagma", "wagma_wa"):
            a2.plot(Ps, [p["samples_per_s"][m] / p["samples_per_s"]["horovod"]
                         for p in points],
                    "-", marker="o", color=COLORS[m], label=f"{LABELS[m]} / Horovod")
        for m in ("wagma", "wagma_wa"):
            a2.plot(Ps, [p["samples_per_s"][m] / max(p["samples_per_s"]["localsgd"],
                                                     p["samples_per_s"]["dpsgd"])
                         for p in points], "--", marker="s", color=COLORS[m],
                    label=f"{LABELS[m]} / best of local SGD, D-PSGD")
        a2.axhline(2.1, color="tab:red", linestyle=":", label="paper: 2.1x at 1,024 GPUs (RL)")
        finish(a2, "ranks P", "throughput ratio")


def plot_defaults(d, path):
    title = (f"simulated at P={d['P']}, {d['meta']['network']} network, pattern "
             f"{d['meta']['pattern']} (throughput only: mixing is not modelled)")
    with two_panels(path, title, 4) as (a1, a2):
        method_lines(a1, [x["S"] for x in d["group_size"]], d["group_size"],
                     ("wagma", "wagma_wa"))
        a1.axhline(d["horovod"], color=COLORS["horovod"], label="Horovod")
        a1.axvline(d["default_group_size"], color="k", linestyle=":", label="default S")
        finish(a1, "group size S", "samples/s")
        ts = [x["tau"] for x in d["sync_period"]]
        method_lines(a2, ts, d["sync_period"], ("localsgd", "wagma", "wagma_wa"))
        a2.plot(ts, [x["ideal"] for x in d["sync_period"]], "k--", label="ideal (global rounds)")
        a2.axvline(d["default_sync_period"], color="k", linestyle=":", label="default tau")
        finish(a2, "sync period tau")
