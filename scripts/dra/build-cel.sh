#!/usr/bin/env bash
# Builds libgantry_dracel.a and libgantry_dracel.h: Gantry's cgo bridge (src/dra/dracel/) to
# upstream's DRA CEL library k8s.io/dynamic-resource-allocation/cel, as a C archive that
# src/dra/device_selector.cc links (go build -buildmode=c-archive).
#
#   DIR=$(scripts/dra/build-cel.sh)              # the cache dir holding the two files
#   scripts/dra/build-cel.sh --copy-to BUILD/x   # and copies them there (what CMake runs)
#
# Idempotent and cached: the cache dir is keyed by the pinned module version, the Go version
# and a hash of the bridge's sources (go.mod, go.sum, *.go), so an unchanged bridge is never
# built twice, whichever worktree or build folder asks. The modules come through the Go
# module proxy (or the module cache); go.sum in the repo pins them, and -mod=readonly keeps
# the build from moving any version.
#
# Environment:
#   GANTRY_CACHE   cache root (default: $HOME/.cache/gantry)
#   GO             the go command (default: go from PATH, else /usr/local/go/bin/go)
# Progress goes to stderr; the only stdout line is the cache dir.
set -euo pipefail

DRA_VERSION=0.37.2   # k8s.io/dynamic-resource-allocation, as pinned in src/dra/dracel/go.mod

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRC="$ROOT/src/dra/dracel"
COPY_TO=""
if [ "${1:-}" = "--copy-to" ] && [ -n "${2:-}" ]; then
  COPY_TO=$2
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--copy-to DIR]" >&2
  exit 2
fi

log() { echo "build-cel: $*" >&2; }

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { log "go is not installed (Go >= 1.26 is needed; see README)"; exit 1; }
grep -q "k8s.io/dynamic-resource-allocation v$DRA_VERSION\$" "$SRC/go.mod" ||
  { log "$SRC/go.mod does not pin k8s.io/dynamic-resource-allocation v$DRA_VERSION"; exit 1; }

GO_VERSION=$("$GO" env GOVERSION)
SOURCES_HASH=$(cd "$SRC" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)
CACHE_ROOT=${GANTRY_CACHE:-$HOME/.cache/gantry}
DIR="$CACHE_ROOT/dra-cel/v${DRA_VERSION}_${GO_VERSION}_${SOURCES_HASH}"
LIB=libgantry_dracel.a
HEADER=libgantry_dracel.h

copy_out() {
  if [ -n "$COPY_TO" ]; then
    mkdir -p "$COPY_TO"
    local f
    for f in "$LIB" "$HEADER"; do
      cmp -s "$DIR/$f" "$COPY_TO/$f" || cp -f "$DIR/$f" "$COPY_TO/$f.tmp$$"
      [ ! -f "$COPY_TO/$f.tmp$$" ] || mv -f "$COPY_TO/$f.tmp$$" "$COPY_TO/$f"
    done
    # The build system compares times: the copies are as new as this run.
    touch "$COPY_TO/$LIB" "$COPY_TO/$HEADER"
  fi
  echo "$DIR"
}

present() { [ -f "$DIR/$LIB" ] && [ -f "$DIR/$HEADER" ]; }

# Fast path: nothing to build, no go invocation.
if present; then
  copy_out
  exit 0
fi

mkdir -p "$DIR"
# One build at a time per key (several build folders may ask at once).
exec 9>"$DIR/.lock"
flock 9
if present; then
  copy_out
  exit 0
fi

START=$SECONDS
log "building $LIB (k8s.io/dynamic-resource-allocation v$DRA_VERSION, $GO_VERSION; a minute or two the first time)"
rm -rf "$DIR/out"
mkdir -p "$DIR/out"
# netgo, osusergo: the pure-Go resolver and user lookups, so that the archive calls no libc
# lookups behind C++'s back. -s -w: no Go symbol table or DWARF (a third of the size).
(cd "$SRC" && CGO_ENABLED=1 GOFLAGS="-mod=readonly -buildvcs=false" "$GO" build \
  -buildmode=c-archive -trimpath -tags netgo,osusergo -ldflags "-s -w" \
  -o "$DIR/out/$LIB" . >&2)
mv -f "$DIR/out/$HEADER" "$DIR/$HEADER"
mv -f "$DIR/out/$LIB" "$DIR/$LIB"
rmdir "$DIR/out"
log "done in $((SECONDS - START))s"
copy_out
