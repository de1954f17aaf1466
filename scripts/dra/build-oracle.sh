#!/usr/bin/env bash
# Builds dra-oracle (tests/dra/oracle/): upstream's structured DRA allocator
# (k8s.io/dynamic-resource-allocation/structured v0.37.2, as kube-scheduler 1.37 runs it)
# behind a small command line, the oracle of Gantry's differential DRA test (issue 29).
#
#   BIN=$(scripts/dra/build-oracle.sh)              # the cached binary's path
#   scripts/dra/build-oracle.sh --copy-to BUILD/x   # and copies it there (what CMake runs)
#
# Idempotent and cached like scripts/dra/build-cel.sh: the cache dir is keyed by the pinned
# module version, the Go version and a hash of the oracle's sources (go.mod, go.sum, *.go
# but the tests), so an unchanged oracle is never built twice, whichever worktree or build
# folder asks. go.sum pins the modules and -mod=readonly keeps the build from moving any.
#
# Environment:
#   GANTRY_CACHE   cache root (default: $HOME/.cache/gantry)
#   GO             the go command (default: go from PATH, else /usr/local/go/bin/go)
# Progress goes to stderr; the only stdout line is the binary's path (the copy's with
# --copy-to).
set -euo pipefail

DRA_VERSION=0.37.2   # k8s.io/dynamic-resource-allocation, as pinned in tests/dra/oracle/go.mod

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRC="$ROOT/tests/dra/oracle"
COPY_TO=""
if [ "${1:-}" = "--copy-to" ] && [ -n "${2:-}" ]; then
  COPY_TO=$2
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--copy-to DIR]" >&2
  exit 2
fi

log() { echo "build-oracle: $*" >&2; }

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { log "go is not installed (Go >= 1.26 is needed; see README)"; exit 1; }
grep -q "k8s.io/dynamic-resource-allocation v$DRA_VERSION\$" "$SRC/go.mod" ||
  { log "$SRC/go.mod does not pin k8s.io/dynamic-resource-allocation v$DRA_VERSION"; exit 1; }

GO_VERSION=$("$GO" env GOVERSION)
# The sources in a fixed order; tests do not change the binary.
SOURCES_HASH=$(cd "$SRC" && ls go.mod go.sum *.go | grep -v '_test\.go$' | LC_ALL=C sort |
  xargs cat | sha256sum | cut -c1-12)
CACHE_ROOT=${GANTRY_CACHE:-$HOME/.cache/gantry}
DIR="$CACHE_ROOT/dra-oracle/v${DRA_VERSION}_${GO_VERSION}_${SOURCES_HASH}"
BIN=dra-oracle

copy_out() {
  if [ -n "$COPY_TO" ]; then
    mkdir -p "$COPY_TO"
    if ! cmp -s "$DIR/$BIN" "$COPY_TO/$BIN"; then
      cp -f "$DIR/$BIN" "$COPY_TO/$BIN.tmp$$"
      mv -f "$COPY_TO/$BIN.tmp$$" "$COPY_TO/$BIN"
    fi
    # The build system compares times: the copy is as new as this run.
    touch "$COPY_TO/$BIN"
    echo "$COPY_TO/$BIN"
  else
    echo "$DIR/$BIN"
  fi
}

# Fast path: nothing to build, no go invocation.
if [ -x "$DIR/$BIN" ]; then
  copy_out
  exit 0
fi

mkdir -p "$DIR"
# One build at a time per key (several build folders may ask at once).
exec 9>"$DIR/.lock"
flock 9
if [ -x "$DIR/$BIN" ]; then
  copy_out
  exit 0
fi

START=$SECONDS
log "building $BIN (k8s.io/dynamic-resource-allocation v$DRA_VERSION, $GO_VERSION)"
(cd "$SRC" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" "$GO" build \
  -trimpath -ldflags "-s -w" -o "$DIR/$BIN.tmp" . >&2)
mv -f "$DIR/$BIN.tmp" "$DIR/$BIN"
log "done in $((SECONDS - START))s"
copy_out
