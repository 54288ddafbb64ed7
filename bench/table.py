"""The one table printer of the benchmarks, and the summaries and number formats they
share."""
import math
import statistics


def print_table(rows, notes=True):
    """Prints rows of cells (the first row is the header) aligned, with a rule under
    the header: the first column left-aligned, the others right-aligned; with
    ``notes`` the last column is free-form text, printed as is."""
    rows = [[str(c) for c in row] for row in rows]
    ncol = len(rows[0]) - (1 if notes else 0)
    widths = [max(len(row[i]) for row in rows) for i in range(ncol)]
    for i, row in enumerate(rows):
        cells = "  ".join(c.rjust(w) if j else c.ljust(w)
                          for j, (c, w) in enumerate(zip(row[:ncol], widths)))
        tail = row[ncol] if notes and row[ncol] else ""
        print(("  " + cells + ("  " + tail if tail else "")).rstrip())
        if i == 0:
            print("  " + "-" * (sum(widths) + 2 * (ncol - 1)))


def spread(values):
    """(median, min, max) of the values that are not None or NaN (inf counts as the
    largest); None when no value is left."""
    vals = sorted(v for v in values if v is not None and not math.isnan(v))
    return (statistics.median(vals), vals[0], vals[-1]) if vals else None


def fmt_time(t):
    return "inf" if t == math.inf else f"{t:.2f}"


def fmt_spread(s, unit=""):
    """'median [min-max]' of a (median, min, max) triple; '-' for None."""
    if s is None:
        return "-"
    med, lo, hi = s
    return f"{fmt_time(med)}{unit} [{fmt_time(lo)}-{fmt_time(hi)}]"
