"""What the command line's flags build for P ranks: the network (``--network``) and
the Scenario (pattern, WAGMA knobs, model bytes; ``--delayed-fraction`` F delays
max(1, round(F P)) ranks per step)."""
import os

from .common import load_json
from .network import datacenter, hosts_network, multihost_from_scenario, this_machine
from .run import Scenario


def network_for(args, P):
    if args.network == "this_machine":
        return this_machine(P)
    if args.network == "multihost":
        path = os.path.join(args.calibration_dir, "multihost_throughput.json")
        if os.path.exists(path):
            d = load_json(path)
            scn = d.get("scenarios", {}).get("slow_host") or next(iter(d["scenarios"].values()))
            return multihost_from_scenario(scn, P, cpu="per_host")
        # The cluster multihost_throughput.py builds (fast links), not yet measured.
        return hosts_network("multihost", P, 2, 1e-3, 1000e6 / 8, cpu="per_host")
    return datacenter(P, args.latency_us, args.bandwidth_gbit, args.ranks_per_host,
                      overhead_us=args.overhead_us)


def scenario_for(args, P, **over):
    nd = args.num_delayed
    if args.delayed_fraction is not None:
        nd = max(1, round(args.delayed_fraction * P))
    kw = dict(pattern=args.pattern, step_time=args.step_time, delay=args.delay,
              num_delayed=nd, slow_ranks=args.slow_ranks, slow_factor=args.slow_factor,
              seed=args.seed, group_size=args.group_size, sync_period=args.sync_period,
              steps=args.steps, max_staleness=args.max_staleness, nbytes=args.model_bytes)
    kw.update(over)
    return Scenario(**kw)
