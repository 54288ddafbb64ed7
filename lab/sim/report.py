"""The printout of one prediction (``--ranks P``): samples/s per method, the ratio to
Horovod, and the pattern's ideals without communication (harness.ideals)."""
from .common import LABELS


def print_prediction(res, scn, calib, elapsed):
    P = res["P"]
    out = [f"Predicted throughput, {res['network']} network, P={P}, S={res['S']}, "
           f"tau={res['tau']}, pattern {scn.pattern} ({pattern_text(scn, P)}), model "
           f"{scn.nbytes / 1024:.0f} KB, {res['steps']} steps ({elapsed:.1f} s to simulate)"]
    hv = res["methods"].get("horovod", {}).get("samples_per_s")
    for m, v in res["methods"].items():
        extra = ""
        if m == "wagma_wa":
            extra = (f"  (rounds skipped/step {v['rounds_skipped_per_step']:.2f}, "
                     f"staleness waits {v['stale_waits']})")
        out.append(f"  {LABELS[m]:<22} {v['samples_per_s']:12.0f} samples/s"
                   + (f"  {v['samples_per_s'] / hv:5.2f}x Horovod" if hv else "") + extra)
    for k in ("no_wait", "ideal", "lockstep"):
        out.append(f"  {LABELS.get(k, k):<22} {res['ideals'][k]:12.0f} samples/s  (ideal, "
                   "no communication)")
    line = ratio_line(res)
    if line:
        out.append("  " + line)
    print("\n".join(out))


def pattern_text(scn, P):
    if scn.pattern == "random":
        return (f"{1e3 * scn.step_time:g} ms + {1e3 * scn.delay:g} ms on {scn.num_delayed} "
                f"ranks/step, seed {scn.seed}")
    if scn.pattern == "straggler_host":
        return f"host 0's ranks {scn.slow_factor:g}x the {1e3 * scn.step_time:g} ms step"
    return f"{scn.slow_ranks} rank(s) {scn.slow_factor:g}x the {1e3 * scn.step_time:g} ms step"


def ratio_line(res):
    r = {m: v["samples_per_s"] for m, v in res["methods"].items()}
    parts = []
    for m in ("wagma", "wagma_wa"):
        if m in r and r.get("horovod"):
            parts.append(f"{LABELS[m]}/Horovod {r[m] / r['horovod']:.2f}x")
    return ", ".join(parts)
