#!/usr/bin/env bash
# Builds (or reuses from cache) a static, position-independent Gloo from the copy that
# ships in the Horovod 0.28.1 sdist (third_party/gloo): the library Horovod's own Gloo
# controller uses. The engine's Gloo transport (cpp_ops/engine/transport/gloo_transport.h) links
# it into libwagma.so with its symbols kept local, so it never clashes with the Gloo
# inside PyTorch or Horovod. About 25 s on 2 cores; prints the install prefix last.
# Usage: scripts/build_gloo.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HOROVOD_VERSION=0.28.1
py="${PYTHON:-python3}"
key_src="$(
  echo "horovod=$HOROVOD_VERSION"
  g++ --version | head -1
  cmake --version | head -1
  uname -m
  cat "$here/build_gloo.sh"
)"
key="$(printf '%s' "$key_src" | sha256sum | cut -c1-16)"
root="${HOROVOD_WAGMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/horovod-wagma}"
prefix="$root/gloo-$key"
if [ ! -f "$prefix/lib/libgloo.a" ]; then
  echo "[build_gloo] building Gloo from the Horovod $HOROVOD_VERSION sdist (cache key $key)" >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  sdist="$root/horovod-$HOROVOD_VERSION.tar.gz"
  if [ ! -f "$sdist" ]; then
    mkdir -p "$root"
    "$py" -m pip download -q --no-deps --no-binary :all: -d "$work/dl" "horovod==$HOROVOD_VERSION" >&2
    cp "$work"/dl/horovod-*.tar.gz "$sdist"
  fi
  tar xzf "$sdist" -C "$work" "horovod-$HOROVOD_VERSION/third_party/gloo"
  mkdir -p "$work/build"
  (cd "$work/build" && cmake "$work/horovod-$HOROVOD_VERSION/third_party/gloo" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
      -DBUILD_SHARED_LIBS=OFF -DUSE_REDIS=OFF -DUSE_IBVERBS=OFF -DUSE_MPI=OFF \
      -DUSE_LIBUV=OFF -DCMAKE_INSTALL_PREFIX="$work/prefix" \
      -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >&2 \
   && make -j"$(( $(nproc) + 1 ))" gloo >&2 && make install >/dev/null)
  # `make install` leaves out headers the TCP transport's own headers include.
  (cd "$work/horovod-$HOROVOD_VERSION/third_party/gloo" && find gloo -name '*.h' -exec cp --parents {} "$work/prefix/include/" \;)
  rm -rf "$prefix"
  mv "$work/prefix" "$prefix"
fi
echo "$prefix"
