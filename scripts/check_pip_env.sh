#!/usr/bin/env bash
# make test-pip-env: README's recipe for an environment that already has PyTorch and
# Horovod, tried in a second virtual environment with no TensorFlow:
#  1. a venv with PyTorch and Horovod only (Horovod built for PyTorch alone, cached by
#     scripts/build_horovod.sh);
#  2. a wheel of this package built against them (pip wheel --no-build-isolation);
#  3. the wheel installed, then a 4-rank WAGMA check over MPI and over Gloo
#     (scripts/pip_env_check.py), and `import horovod_wagma.keras` failing with an
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
step "venv $env_dir"
[ -x "$py" ] || python3 -m venv "$env_dir"
"$py" -m pip install -q -U "pip>=25"
# The versions of requirements.txt, less TensorFlow and the test tools.
grep -E '^(torch|mpi4py|numpy|setuptools|wheel|cloudpickle|psutil|pyyaml|packaging)\b' \
  requirements.txt > "$env_dir/requirements.txt"
"$py" -m pip install -q -r "$env_dir/requirements.txt"
step "Horovod for PyTorch alone"
if ! "$py" -c "import horovod.torch" >/dev/null 2>&1; then
  bash scripts/build_horovod.sh "$py"
fi

step "the wheel"
rm -rf "$env_dir/wheels"
"$py" -m pip wheel -q --no-build-isolation --no-deps . -w "$env_dir/wheels"
"$py" -m pip install -q --no-deps --force-reinstall "$env_dir"/wheels/horovod_wagma-*.whl

cd "$env_dir"   # away from the source tree: the installed package must be the one used
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
step "4 ranks over MPI"
timeout 300 mpirun -np 4 --oversubscribe --bind-to none "$py" "$root/scripts/pip_env_check.py" "$site"
step "4 ranks over Gloo"
timeout 300 "$env_dir/bin/horovodrun" --gloo -np 4 -H localhost:4 \
  "$py" "$root/scripts/pip_env_check.py" "$site"
step "import horovod_wagma.keras without TensorFlow"
if out="$("$py" -c 'import horovod_wagma.keras' 2>&1)"; then
  echo "import horovod_wagma.keras succeeded without TensorFlow" >&2; exit 1
fi
grep -q "ImportError: horovod_wagma.keras needs tensorflow, tf-keras" <<<"$out" \
  || { echo "unexpected error: $out" >&2; exit 1; }
echo "[pip-env] ok: wheel $(basename "$env_dir"/wheels/*.whl) in an environment without TensorFlow"
