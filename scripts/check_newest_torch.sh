#!/usr/bin/env bash
# make test-newest-torch: Horovod and this package built against the newest PyTorch on
# the package index, then the PyTorch part of the quick loop run there.
#  1. a venv with TORCH_SPEC (default torch==2.15.0, the newest on PyPI on 2026-12-07:
#     a CUDA build, 5.4 GB with its nvidia libraries; it runs on the CPU), no
#     TensorFlow, and Horovod 0.28.1 built there for PyTorch alone (scripts/second_env.sh);
#  2. this package's wheel built and installed there, and 4 ranks of
#     scripts/wagma_smoke.py over MPI and over Gloo from it;
#  3. a copy of this tree (what git tracks or does not ignore) built in place there, and
#     pytest -m "not slow and not tf" in the copy, on both engine transports.
# Not part of make install or make test: it downloads PyTorch's CUDA build.
# Usage: scripts/check_newest_torch.sh [ENV_DIR (default build/torch-newest)] [TESTS...]
#   (TESTS: pytest paths or node ids instead of the whole tests/ folder)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
env_dir="$(realpath -m "${1:-build/torch-newest}")"
shift || true
py="$env_dir/bin/python"
torch_spec="${TORCH_SPEC:-torch==2.15.0}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1

step() { echo "[newest-torch] $*"; }
trap 'echo "[newest-torch] failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
source scripts/second_env.sh
second_env_create "$env_dir" "$torch_spec" \
  $(grep -E '^(pytest|hypothesis)==' requirements.txt) matplotlib  # matplotlib: the timeline's plots
second_env_install_wheel "$env_dir"
site="$(second_env_site "$env_dir")"
(cd "$env_dir"   # away from the source tree: the installed package must be the one used
 step "4 ranks over MPI, from the wheel"
 timeout 300 mpirun -np 4 --oversubscribe --bind-to none "$py" "$root/scripts/wagma_smoke.py" --prefix "$site"
 step "4 ranks over Gloo, from the wheel"
 timeout 300 "$env_dir/bin/horovodrun" --gloo -np 4 -H localhost:4 \
   "$py" "$root/scripts/wagma_smoke.py" --prefix "$site")

step "this tree, built in $env_dir/src"
"$py" -m pip uninstall -q -y horovod_wagma
rm -rf "$env_dir/src"
mkdir -p "$env_dir/src"
git ls-files -z --cached --others --exclude-standard \
  | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$env_dir/src"
cd "$env_dir/src"
"$py" -m pip install -q --no-build-isolation --no-deps -e .
step "$("$py" -c 'import horovod_wagma.torch, torch; print("horovod_wagma.torch imports on torch", torch.__version__)')"

step "the quick loop, PyTorch part"
"$py" -m pytest -q -m "not slow and not tf and not unstable and not multihost" \
  -p no:cacheprovider "${@:-tests}"
echo "[newest-torch] ok: $torch_spec"
