#!/usr/bin/env bash
# make test-ray: WAGMA under Horovod on Ray (horovod.ray.RayExecutor), in a second
# virtual environment, as a Ray user's would be:
#  1. a venv with PyTorch (requirements.txt's), Ray (RAY_SPEC, default ray==2.60.0,
#     the newest on PyPI on 2026-12-07), Horovod built for PyTorch alone, and this
#     package's wheel (scripts/second_env.sh);
#  2. scripts/ray_check.py: a local Ray cluster of two nodes on 127.0.0.1, 4 workers,
#     scripts/wagma_smoke.py's job run three times in one RayExecutor;
#  3. the same job with the exact knobs under horovodrun --gloo, whose model must equal
#     the Ray run's.
# Ray is never part of make install or make test.
# Usage: scripts/check_ray.sh [ENV_DIR (default build/ray-env)]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
env_dir="$(realpath -m "${1:-build/ray-env}")"
py="$env_dir/bin/python"
ray_spec="${RAY_SPEC:-ray==2.60.0}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
# Ray binds its nodes to the machine's outward address unless it believes it is on one
# machine only; this setting (named for macOS and Windows, where that is the default)
# keeps the head, the second node and every worker on 127.0.0.1.
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0

step() { echo "[ray] $*"; }
trap 'echo "[ray] failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
source scripts/second_env.sh
second_env_create "$env_dir" "$(grep -E '^torch==' requirements.txt)" "$ray_spec"
second_env_install_wheel "$env_dir"
site="$(second_env_site "$env_dir")"

cd "$env_dir"   # away from the source tree: the installed package must be the one used
step "$("$py" -c 'import ray; print("Ray", ray.__version__)'): 4 workers under RayExecutor"
timeout 600 "$py" "$root/scripts/ray_check.py" --prefix "$site" --json "$env_dir/ray_exact.json"
step "the same job under horovodrun --gloo"
timeout 300 "$env_dir/bin/horovodrun" --gloo -np 4 -H localhost:4 \
  "$py" "$root/scripts/wagma_smoke.py" --prefix "$site" --knobs exact \
  --json "$env_dir/horovodrun_exact.json"
"$py" - "$env_dir/ray_exact.json" "$env_dir/horovodrun_exact.json" <<'PY'
import json, sys
ray_run, launcher_run = (json.load(open(path)) for path in sys.argv[1:])
assert ray_run["losses"] == launcher_run["losses"], "the losses differ"
assert ray_run["model"] == launcher_run["model"], "the models differ"
print(f"[ray] the exact run under Ray equals horovodrun's: {len(ray_run['losses'])} "
      f"losses and {len(ray_run['model'])} parameters, number for number")
PY
echo "[ray] ok: $ray_spec with horovod $("$py" -c 'import horovod; print(horovod.__version__)')"
