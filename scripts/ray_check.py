"""make test-ray's driver: WAGMA under horovod.ray.RayExecutor on a local Ray cluster
it starts itself (a head and one more node, each with 2 CPUs, on 127.0.0.1), 4
workers, PyTorch, Horovod's Gloo rendezvous (the only one RayExecutor sets up).

It runs scripts/wagma_smoke.py's job three times in one executor, as a user calling
``executor.run`` again would: the defaults, then the exact knobs, then the defaults
again. Each run must train, get Horovod's own allreduce right mid-run, and end with
one model. The exact run's model is written to --json, for scripts/check_ray.sh to
compare with the same job under horovodrun.

Usage: python scripts/ray_check.py --prefix SITE_PACKAGES --json FILE
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    # Ray's worker processes inherit the environment of the nodes started below: they
    # can then import wagma_smoke by name.
    os.environ["PYTHONPATH"] = HERE + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, HERE)
    import ray
    from ray.cluster_utils import Cluster
    from horovod.ray import RayExecutor

    import wagma_smoke

    # On 127.0.0.1 with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (scripts/check_ray.sh).
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 2, "include_dashboard": False})
    cluster.add_node(num_cpus=2)
    ray.init(address=cluster.address)
    assert cluster.address.startswith("127.0.0.1:"), cluster.address
    nodes = [n for n in ray.nodes() if n["Alive"]]
    print(f"[ray] Ray {ray.__version__}, {len(nodes)} nodes, "
          f"{int(ray.cluster_resources()['CPU'])} CPUs")
    try:
        executor = RayExecutor(RayExecutor.create_settings(timeout_s=120),
                               num_workers=args.workers, cpus_per_worker=1, use_gpu=False)
        executor.start()
        outcome = {}
        for name, knobs in (("default", "default"), ("exact", "exact"),
                            ("default again", "default")):
            t0 = time.monotonic()
            results = executor.run(wagma_smoke.train,
                                   kwargs=dict(knobs=knobs, prefix=args.prefix))
            for result in results:
                wagma_smoke.check(result)
            assert sorted(r["rank"] for r in results) == list(range(args.workers)), results
            assert all(r["size"] == args.workers for r in results)
            first = results[0]
            print(f"[ray] run '{name}': {args.workers} workers, {first['rounds']} rounds, "
                  f"one model after sync(), loss {first['losses'][0]:.3f} -> "
                  f"{first['losses'][-1]:.3f}, {time.monotonic() - t0:.1f} s")
            outcome[name] = results[0]
        executor.shutdown()
    finally:
        ray.shutdown()
        cluster.shutdown()
    with open(args.json, "w") as f:
        json.dump(outcome["exact"], f)
    print(f"[ray] ok: horovod_wagma from {outcome['exact']['module']}")


if __name__ == "__main__":
    main()
