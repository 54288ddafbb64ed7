#!/usr/bin/env bash
# Compiler wrapper for building Horovod 0.28.1 against current frameworks
# (docs/troubleshooting.md, "Install and start-up"). Two fixes, applied per compiler call:
#  * Horovod compiles its own sources as C++14, older than the framework headers
#    allow: PyTorch >= 2.1 needs C++17, and PyTorch 2.15's c10 headers need C++20
#    (std::strong_ordering, std::bit_width). Rewrite -std=c++14 / gnu++14 to
#    HOROVOD_WAGMA_CXX_STD (17 unless scripts/build_horovod.sh found that the installed
#    PyTorch needs 20).
#  * TensorFlow 2.21's wheel lacks the XLA headers that xla_mpi_ops.cc needs; that
#    file only serves XLA GPU custom calls, so compile an empty unit in its place.
real="${HOROVOD_WAGMA_REAL_CXX:-g++}"
std="${HOROVOD_WAGMA_CXX_STD:-17}"
args=()
for a in "$@"; do
  case "$a" in
    -std=c++14) a="-std=c++$std" ;;
    -std=gnu++14) a="-std=gnu++$std" ;;
    */xla_mpi_ops.cc)
      empty="${TMPDIR:-/tmp}/horovod_wagma_empty_xla_mpi_ops.cc"
      : > "$empty"
      a="$empty" ;;
  esac
  args+=("$a")
done
exec "$real" "${args[@]}"
