#!/usr/bin/env bash
# make install: everything a fresh Debian machine needs, idempotent.
#  1. Debian packages: Open MPI (runtime + headers), compilers.
#  2. A virtualenv at .venv with pinned frameworks.
#  3. Horovod 0.28.1 built from the PyPI sdist (cached wheel, see build_horovod.sh).
#  4. This package with its C++ engine and PyTorch extension.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv
PY=$VENV/bin/python

need_apt=()
# iproute2: ip netns and tc for the emulated hosts of make multihost (tests/test_multihost.py).
for pkg in openmpi-bin libopenmpi-dev g++ make cmake iproute2; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "[install] apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
fi

[ -x "$PY" ] || python3 -m venv "$VENV"
"$PY" -m pip install -q -U "pip>=25"
"$PY" -m pip install -q -r requirements.txt

if ! "$PY" -c "import horovod, horovod.torch, horovod.tensorflow" >/dev/null 2>&1 \
   || [ "$("$PY" -c 'import horovod; print(horovod.__version__)')" != "0.28.1" ]; then
  bash scripts/build_horovod.sh "$PY"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$VENV/bin/horovodrun" --check-build | tee /tmp/horovod_check_build.txt
grep -q "\[X\] PyTorch" /tmp/horovod_check_build.txt
grep -q "\[X\] MPI" /tmp/horovod_check_build.txt

"$PY" -m pip install -q --no-build-isolation --no-deps -e .
"$PY" -c "import horovod_wagma.torch"
echo "[install] done"
