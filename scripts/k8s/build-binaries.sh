#!/usr/bin/env bash
# Builds the pinned Kubernetes control-plane binaries that Gantry's integration tests run
# (kube-apiserver, kube-scheduler as a baseline, kube-controller-manager for its PV
# controller, etcd, and optionally kwok) from their Go modules through the Go module proxy,
# into a per-version cache directory.
#
#   BIN=$(scripts/k8s/build-binaries.sh | tail -1)
#
# Idempotent and cached: when every binary is already in the cache it prints the bin dir
# and exits without running go; a binary missing from it (one added to the list later) is
# built alone, the others kept. The Go module scaffolding is generated in the cache dir.
#
# Environment:
#   GANTRY_CACHE       cache root (default: $HOME/.cache/gantry)
#   GANTRY_K8S_KWOK    1 (default) builds kwok too; 0 skips it
#   GANTRY_K8S_JOBS    go build -p (default: number of CPUs)
# Progress goes to stderr; the only stdout line is the bin dir path.
set -euo pipefail

# ---- pinned versions -------------------------------------------------------------------
K8S_VERSION=1.37.2           # k8s.io/kubernetes (kube-apiserver, kube-scheduler)
K8S_STAGING_VERSION=0.37.2   # k8s.io/api, k8s.io/client-go, ... (staging modules)
ETCD_VERSION=3.6.16          # go.etcd.io/etcd/server/v3
KWOK_VERSION=0.8.0           # sigs.k8s.io/kwok (optional)
# Every module above declares `go 1.26.0`, which the installed Go 1.26.x satisfies. If a
# future pin asks for Go 1.27, export GOTOOLCHAIN=go1.27.3 here (it downloads through the
# module proxy as golang.org/toolchain).
# ----------------------------------------------------------------------------------------

KWOK=${GANTRY_K8S_KWOK:-1}
CACHE_ROOT=${GANTRY_CACHE:-$HOME/.cache/gantry}
VERSIONS="k8s-v${K8S_VERSION}_etcd-v${ETCD_VERSION}_kwok-v${KWOK_VERSION}"
DIR="$CACHE_ROOT/k8s/$VERSIONS"
BIN="$DIR/bin"
# kwok has no built-in stages: its "fast" node and pod stages, from the module, go here.
KWOK_STAGES="$DIR/share/kwok-stages.yaml"

BINARIES=(kube-apiserver kube-scheduler kube-controller-manager etcd)
[ "$KWOK" = 1 ] && BINARIES+=(kwok)

all_present() {
  local b
  for b in "${BINARIES[@]}"; do
    [ -x "$BIN/$b" ] || return 1
  done
  [ "$KWOK" != 1 ] || [ -f "$KWOK_STAGES" ]
}

# Fast path: nothing to do, no go invocation.
if all_present; then
  echo "$BIN"
  exit 0
fi

log() { echo "build-binaries: $*" >&2; }

command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$DIR" "$BIN"

# One build at a time per version (parallel test jobs may all call this script).
exec 9>"$DIR/.lock"
flock 9
if all_present; then
  echo "$BIN"
  exit 0
fi

export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
export CGO_ENABLED=0
JOBS=${GANTRY_K8S_JOBS:-$(nproc)}
START=$SECONDS

# ---- kube-apiserver, kube-scheduler ----------------------------------------------------
# `go install k8s.io/kubernetes/cmd/...@vX` fails because k/k's go.mod replaces its staging
# modules with ./staging/... paths; a module of our own requires k8s.io/kubernetes and pins
# each staging module to its published v0.X.Y with a replace of its own.

# -X flags that stamp Kubernetes' version into a binary, as its own build does.
k8s_version_ldflags() {
  local date pkg ld=""
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=${K8S_VERSION%%.*}"
    ld+=" -X $pkg.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
    ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  printf '%s' "$ld"
}

build_k8s() {
  local src="$DIR/src/k8s"
  mkdir -p "$src"
  cd "$src"
  if [ ! -f go.sum ] || [ ! -f .ready ]; then
    rm -f go.mod go.sum .ready
    go mod init gantry.local/k8sbins >/dev/null 2>&1
    local gomod
    gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
      sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    [ -f "$gomod" ] || { log "cannot download k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
    # Staging modules that k/k requires as v0.0.0 and replaces with ./staging/src/...
    local m edits=()
    for m in $(sed -n 's|^\s*\(k8s.io/[a-z0-9-]*\) => \./staging/.*|\1|p' "$gomod"); do
      if grep -qE "^\s*$m v0\.0\.0\s*$" "$gomod"; then
        edits+=("-replace=$m=$m@v$K8S_STAGING_VERSION")
      fi
    done
    [ ${#edits[@]} -gt 0 ] || { log "no staging modules found in $gomod"; exit 1; }
    go mod edit "${edits[@]}"
    cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOF
    log "resolving k8s.io/kubernetes@v$K8S_VERSION dependencies"
    go get "k8s.io/kubernetes@v$K8S_VERSION" >&2
    go mod tidy >&2
    touch .ready
  fi
  local ld
  ld=$(k8s_version_ldflags)
  log "building kube-apiserver and kube-scheduler v$K8S_VERSION (slow the first time)"
  mkdir -p "$DIR/out"
  go build -p "$JOBS" -trimpath -ldflags "-s -w$ld" -o "$DIR/out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler >&2
  mv -f "$DIR/out/kube-apiserver" "$DIR/out/kube-scheduler" "$BIN/"
}

# ---- kube-controller-manager -----------------------------------------------------------
# Built in a module of its own, started from kube-apiserver's (the same pins), so that the
# cached kube-apiserver and kube-scheduler are neither rebuilt nor moved to other versions.
build_kcm() {
  local src="$DIR/src/kcm"
  mkdir -p "$src"
  cd "$src"
  if [ ! -f go.sum ] || [ ! -f .ready ]; then
    [ -f "$DIR/src/k8s/.ready" ] || { log "kube-apiserver's module is not ready"; exit 1; }
    rm -f go.mod go.sum .ready
    cp "$DIR/src/k8s/go.mod" "$DIR/src/k8s/go.sum" .
    go mod edit -module=gantry.local/kcmbin
    cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
EOF
    log "resolving kube-controller-manager v$K8S_VERSION dependencies"
    go mod tidy >&2
    touch .ready
  fi
  local ld
  ld=$(k8s_version_ldflags)
  log "building kube-controller-manager v$K8S_VERSION"
  mkdir -p "$DIR/out"
  go build -p "$JOBS" -trimpath -ldflags "-s -w$ld" -o "$DIR/out/" \
    k8s.io/kubernetes/cmd/kube-controller-manager >&2
  mv -f "$DIR/out/kube-controller-manager" "$BIN/"
}

# ---- etcd ------------------------------------------------------------------------------
# go.etcd.io/etcd/server/v3 carries relative replaces too; build it from a tiny main in its
# own module so its dependency versions do not move kube-apiserver's.
build_etcd() {
  local src="$DIR/src/etcd"
  mkdir -p "$src"
  cd "$src"
  if [ ! -f go.sum ] || [ ! -f .ready ]; then
    rm -f go.mod go.sum .ready
    go mod init gantry.local/etcd >/dev/null 2>&1
    cat >main.go <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
    log "resolving go.etcd.io/etcd/server/v3@v$ETCD_VERSION dependencies"
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
    go mod tidy >&2
    touch .ready
  fi
  log "building etcd v$ETCD_VERSION"
  mkdir -p "$DIR/out"
  go build -p "$JOBS" -trimpath -ldflags "-s -w" -o "$DIR/out/etcd" . >&2
  mv -f "$DIR/out/etcd" "$BIN/etcd"
}

# ---- kwok (optional) -------------------------------------------------------------------
build_kwok() {
  log "building kwok v$KWOK_VERSION"
  mkdir -p "$DIR/out"
  # go install honours GOBIN; sigs.k8s.io/kwok has no replace lines.
  (cd "$DIR" && GOBIN="$DIR/out" go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" >&2)
  local src f
  src=$(cd "$DIR" && go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" |
    sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p "$DIR/share"
  for f in "$src"/kustomize/stage/node/fast/node-initialize.yaml \
    "$src"/kustomize/stage/pod/fast/pod-{ready,complete,delete}.yaml; do
    [ -f "$f" ] || { log "kwok stage $f not found"; exit 1; }
    echo "---"
    cat "$f"
  done >"$KWOK_STAGES.tmp"
  mv -f "$KWOK_STAGES.tmp" "$KWOK_STAGES"
  mv -f "$DIR/out/kwok" "$BIN/kwok"
}

[ -x "$BIN/etcd" ] || build_etcd
if [ ! -x "$BIN/kube-apiserver" ] || [ ! -x "$BIN/kube-scheduler" ]; then build_k8s; fi
[ -x "$BIN/kube-controller-manager" ] || build_kcm
if [ "$KWOK" = 1 ] && { [ ! -x "$BIN/kwok" ] || [ ! -f "$KWOK_STAGES" ]; }; then build_kwok; fi

all_present || { log "some binaries are missing in $BIN"; exit 1; }
log "done in $((SECONDS - START))s"
echo "$BIN"
