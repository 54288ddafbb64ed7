#!/usr/bin/env bash
# make test-pip-env: README's recipe for an environment that already has PyTorch and
# Horovod, tried in a second virtual environment with no TensorFlow:
#  1. a venv with PyTorch and Horovod only (Horovod built for PyTorch alone, cached by
#     scripts/build_horovod.sh);
#  2. a wheel of this package built against them (pip wheel --no-build-isolation);
#  3. the wheel installed, then a 4-rank WAGMA check over MPI and over Gloo
#     (scripts/wagma_smoke.py), and `import horovod_wagma.keras` failing with an
#     error that names TensorFlow.
# Usage: scripts/check_pip_env.sh [ENV_DIR (default build/pip-env)]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
env_dir="$(realpath -m "${1:-build/pip-env}")"
py="$env_dir/bin/python"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1

step() { echo "[pip-env] $*"; }
trap 'echo "[pip-env] failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
source scripts/second_env.sh
second_env_create "$env_dir" "$(grep -E '^torch==' requirements.txt)"
second_env_install_wheel "$env_dir"

cd "$env_dir"   # away from the source tree: the installed package must be the one used
site="$(second_env_site "$env_dir")"
step "4 ranks over MPI"
timeout 300 mpirun -np 4 --oversubscribe --bind-to none "$py" "$root/scripts/wagma_smoke.py" --prefix "$site"
step "4 ranks over Gloo"
timeout 300 "$env_dir/bin/horovodrun" --gloo -np 4 -H localhost:4 \
  "$py" "$root/scripts/wagma_smoke.py" --prefix "$site"
step "import horovod_wagma.keras without TensorFlow"
if out="$("$py" -c 'import horovod_wagma.keras' 2>&1)"; then
  echo "import horovod_wagma.keras succeeded without TensorFlow" >&2; exit 1
fi
grep -q "ImportError: horovod_wagma.keras needs tensorflow, tf-keras" <<<"$out" \
  || { echo "unexpected error: $out" >&2; exit 1; }
echo "[pip-env] ok: wheel $(basename "$env_dir"/wheels/*.whl) in an environment without TensorFlow"
