#!/usr/bin/env bash
# Builds (or reuses from cache) a Horovod 0.28.1 wheel with MPI + Gloo, PyTorch and
# TensorFlow (PyTorch alone where the given Python has no TensorFlow), against the
# frameworks installed in the given Python, and installs it.
# No Horovod sources live in this repo: the sdist comes from PyPI.
# Usage: scripts/build_horovod.sh PYTHON
set -euo pipefail
py="$1"
here="$(cd "$(dirname "$0")" && pwd)"
HOROVOD_VERSION=0.28.1

# Everything that changes the binary goes into the cache key.
key_src="$(
  echo "horovod=$HOROVOD_VERSION"
  "$py" -c 'import sys, torch; print(sys.version); print(torch.__version__)'
  "$py" -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null || echo "no tensorflow"
  mpirun --version 2>/dev/null | head -1
  g++ --version | head -1
  cmake --version | head -1
  uname -m
  cat "$here/build_horovod.sh" "$here/cxx_std_wrapper.sh"
)"
if "$py" -c 'import tensorflow' >/dev/null 2>&1; then with_tf=1; else with_tf=0; fi
key="$(printf '%s' "$key_src" | sha256sum | cut -c1-16)"
cache="${HOROVOD_WAGMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/horovod-wagma}/horovod-$HOROVOD_VERSION-$key"
mkdir -p "$cache"

if ! ls "$cache"/horovod-*.whl >/dev/null 2>&1; then
  echo "[build_horovod] building Horovod $HOROVOD_VERSION (cache key $key); this takes minutes"
  # The C++ standard for Horovod's own sources (cxx_std_wrapper.sh): 17 unless the
  # installed PyTorch's headers need 20 (2.15 does). A syntax-only compile tells; 15 s.
  cxx_std=17
  torch_includes="$("$py" -c 'import sysconfig, torch.utils.cpp_extension as c
print(" ".join("-I" + p for p in c.include_paths() + [sysconfig.get_paths()["include"]]))' 2>/dev/null)"
  if ! echo '#include <torch/extension.h>' \
      | g++ -std=c++17 -fsyntax-only -x c++ - $torch_includes >/dev/null 2>&1; then
    cxx_std=20
  fi
  echo "[build_horovod] Horovod's sources as C++$cxx_std (what this PyTorch's headers need)"
  # A CUDA build of PyTorch (PyPI's default wheel) makes Horovod build its CUDA parts
  # wherever PyTorch finds a CUDA_HOME. PyTorch takes it from the first nvcc on PATH;
  # where that nvcc is a shim that runs the toolkit's (/usr/local/bin/nvcc here), its
  # folder's parent has no CUDA headers. Ask nvcc where its toolkit is (its TOP).
  if [ -z "${CUDA_HOME:-}" ] && command -v nvcc >/dev/null; then
    top="$(nvcc --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p')"
    if [ -n "$top" ]; then
      export CUDA_HOME="$(realpath "$top")" CUDAToolkit_ROOT="$(realpath "$top")"
      echo "[build_horovod] CUDA toolkit: $CUDA_HOME"
    fi
  fi
  # --no-cache-dir: pip's own wheel cache would hand back a wheel it built earlier for
  # other frameworks (it keys on the sdist alone); this script's cache keys on them.
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  env \
    CXX="$here/cxx_std_wrapper.sh" HOROVOD_WAGMA_CXX_STD="$cxx_std" \
    CMAKE_POLICY_VERSION_MINIMUM=3.5 \
    MAKEFLAGS="-j$(( $(nproc) + 1 ))" \
    HOROVOD_WITH_MPI=1 HOROVOD_WITH_GLOO=1 \
    HOROVOD_WITH_PYTORCH=1 \
    $([ "$with_tf" = 1 ] && echo HOROVOD_WITH_TENSORFLOW=1 || echo HOROVOD_WITHOUT_TENSORFLOW=1) \
    HOROVOD_WITHOUT_MXNET=1 HOROVOD_CPU_OPERATIONS=MPI \
    "$py" -m pip wheel --no-cache-dir --no-deps --no-build-isolation --no-binary horovod \
      -w "$work" "horovod==$HOROVOD_VERSION"
  cp "$work"/horovod-*.whl "$cache/"
else
  echo "[build_horovod] using cached wheel $cache"
fi
"$py" -m pip install --no-deps --force-reinstall "$cache"/horovod-*.whl
"$py" -m pip install cloudpickle psutil pyyaml packaging
