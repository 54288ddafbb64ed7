"""The one plot module of the benchmarks: a bar chart and accuracy curves (PNG)."""
import os


def _figure(size):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size)
    return plt, fig, ax


def _save(plt, fig, path, dpi):
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def bars(path, bars, lines=(), ylabel="", title=""):
    """``bars``: [(label, value, colour, hatch or None, annotation)]; ``lines``:
    [(y, linestyle, legend label)] drawn across as dashed red lines."""
    plt, fig, ax = _figure((7.0, 4.2))
    drawn = ax.bar([b[0] for b in bars], [b[1] for b in bars],
                   color=[b[2] for b in bars], edgecolor="black")
    for bar, (_, _, _, hatch, text) in zip(drawn, bars):
        if hatch:
            bar.set_hatch(hatch)
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    for y, style, label in lines:
        ax.axhline(y, color="tab:red", linestyle=style, linewidth=1, label=label)
    ax.tick_params(axis="x", labelsize=8)   # method specs make long labels
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    if lines:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_ylim(0, 1.3 * max(b[1] for b in bars))
    _save(plt, fig, path, 120)


def curves(path, series, target, xlabel, ylabel, title, ylim):
    """``series``: [(colour index, [(x, y)], label or None, emphasised)]; a dotted
    line at ``target``."""
    plt, fig, ax = _figure((9, 5.5))
    colours = plt.cm.tab10.colors
    for colour, points, label, strong in series:
        ax.plot([p[0] for p in points], [p[1] for p in points],
                color=colours[colour % 10], lw=1.8 if strong else 0.8,
                alpha=1.0 if strong else 0.45, label=label)
    ax.axhline(target, color="red", ls=":", lw=1, label=f"target {target:g}%")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    _save(plt, fig, path, 110)
