#!/usr/bin/env bash
# Builds the pinned third-party operators that Gantry's operator integration tests run
# (KubeRay's ray-operator, Kueue's controller manager, and Karpenter with its kwok cloud
# provider) from their Go modules through the Go module proxy, into a per-version cache
# directory, with the CRDs each module ships.
#
#   DIR=$(scripts/k8s/build-operators.sh | tail -1)
#   # $DIR/bin/ray-operator, $DIR/bin/kueue
#   # $DIR/share/crds/kuberay/*.yaml, $DIR/share/crds/kueue/*.yaml
#   # $DIR/bin/karpenter-kwok, $DIR/share/crds/karpenter/*.yaml (NodePool, NodeClaim,
#   #   KWOKNodeClass): links into $DIR/karpenter-v<version>/
#
# Idempotent and cached: when everything is in the cache it prints the dir and exits without
# running go; a missing piece is built alone. One build at a time per version (flock).
#
# Environment:
#   GANTRY_CACHE       cache root (default: $HOME/.cache/gantry)
#   GANTRY_K8S_JOBS    go build -p (default: number of CPUs)
# Progress goes to stderr; the only stdout line is the cache dir path.
set -euo pipefail

# ---- pinned versions -------------------------------------------------------------------
KUBERAY_VERSION=1.5.0   # github.com/ray-project/kuberay/ray-operator (go 1.24.0)
KUEUE_VERSION=0.17.0    # sigs.k8s.io/kueue (go 1.25.0)
KARPENTER_VERSION=1.15.0  # sigs.k8s.io/karpenter, its kwok provider (go 1.26.9)
# No module has replace directives, so `go install module@version` builds each with
# exactly the dependency versions its own go.mod pins. Karpenter's go.mod asks for a newer Go
# than the machine's 1.26.8: its build alone takes the approved toolchain from the module
# proxy (KARPENTER_TOOLCHAIN).
KARPENTER_TOOLCHAIN=go1.27.3
# ----------------------------------------------------------------------------------------

CACHE_ROOT=${GANTRY_CACHE:-$HOME/.cache/gantry}
DIR="$CACHE_ROOT/operators/kuberay-v${KUBERAY_VERSION}_kueue-v${KUEUE_VERSION}"
BIN="$DIR/bin"
CRDS="$DIR/share/crds"
# Karpenter came later: a folder of its own inside DIR, so that adding it did not rebuild the
# other two.
KARPENTER="$DIR/karpenter-v${KARPENTER_VERSION}"

kuberay_present() { [ -x "$BIN/ray-operator" ] && [ -f "$CRDS/kuberay/.ready" ]; }
kueue_present() { [ -x "$BIN/kueue" ] && [ -f "$CRDS/kueue/.ready" ]; }
karpenter_present() {
  [ -x "$KARPENTER/bin/karpenter-kwok" ] && [ -f "$KARPENTER/crds/.ready" ] &&
    [ "$(readlink "$BIN/karpenter-kwok")" = "$KARPENTER/bin/karpenter-kwok" ] &&
    [ "$(readlink "$CRDS/karpenter")" = "$KARPENTER/crds" ]
}
all_present() { kuberay_present && kueue_present && karpenter_present; }

# Fast path: nothing to do, no go invocation.
if all_present; then
  echo "$DIR"
  exit 0
fi

log() { echo "build-operators: $*" >&2; }

command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$DIR" "$BIN" "$CRDS"

exec 9>"$DIR/.lock"
flock 9
if all_present; then
  echo "$DIR"
  exit 0
fi

export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
export CGO_ENABLED=0
JOBS=${GANTRY_K8S_JOBS:-$(nproc)}
START=$SECONDS

# module_dir MODULE VERSION: the module's extracted source in the module cache.
module_dir() {
  local d
  d=$(cd "$DIR" && go mod download -json "$1@v$2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -d "$d" ] || { log "cannot download $1@v$2"; exit 1; }
  printf '%s' "$d"
}

# copy_crds DEST_DIR SRC_DIR...: the modules' CRD manifests (kustomize bases, not overlays).
copy_crds() {
  local dest=$1 src f n=0
  shift
  rm -rf "$dest"
  mkdir -p "$dest"
  for src in "$@"; do
    for f in "$src"/*.yaml; do
      cp "$f" "$dest/"
      n=$((n + 1))
    done
  done
  [ "$n" -gt 0 ] || { log "no CRDs in $*"; exit 1; }
  touch "$dest/.ready"
}

# go_install PACKAGE@VERSION NAME [DEST]: builds into $DIR/out, then moves NAME to DEST
# (default bin/NAME).
go_install() {
  mkdir -p "$DIR/out"
  (cd "$DIR" && GOBIN="$DIR/out" go install -p "$JOBS" -trimpath -ldflags "-s -w" "$1" >&2)
  mv -f "$DIR/out/$2" "${3:-$BIN/$2}"
}

build_kuberay() {
  local mod=github.com/ray-project/kuberay/ray-operator src
  log "building ray-operator v$KUBERAY_VERSION (slow the first time)"
  src=$(module_dir "$mod" "$KUBERAY_VERSION")
  [ -x "$BIN/ray-operator" ] || go_install "$mod@v$KUBERAY_VERSION" ray-operator
  copy_crds "$CRDS/kuberay" "$src/config/crd/bases"
}

build_kueue() {
  local mod=sigs.k8s.io/kueue src
  log "building kueue v$KUEUE_VERSION (slow the first time)"
  src=$(module_dir "$mod" "$KUEUE_VERSION")
  [ -x "$BIN/kueue" ] || go_install "$mod/cmd/kueue@v$KUEUE_VERSION" kueue
  copy_crds "$CRDS/kueue" "$src/config/components/crd/bases"
}

# Karpenter's kwok provider: Karpenter's controllers with a cloud provider that creates kwok
# Nodes for NodeClaims, from instance types in a JSON file (INSTANCE_TYPES_FILE_PATH).
build_karpenter() {
  local mod=sigs.k8s.io/karpenter src
  log "building karpenter (kwok provider) v$KARPENTER_VERSION with $KARPENTER_TOOLCHAIN"
  export GOTOOLCHAIN=$KARPENTER_TOOLCHAIN
  src=$(module_dir "$mod" "$KARPENTER_VERSION")
  mkdir -p "$KARPENTER/bin"
  [ -x "$KARPENTER/bin/karpenter-kwok" ] ||
    go_install "$mod/kwok@v$KARPENTER_VERSION" kwok "$KARPENTER/bin/karpenter-kwok"
  # The kwok chart's copies of the NodePool and NodeClaim CRDs: they allow its instance labels.
  copy_crds "$KARPENTER/crds" "$src/kwok/charts/crds" "$src/kwok/apis/crds"
  ln -sfn "$KARPENTER/bin/karpenter-kwok" "$BIN/karpenter-kwok"
  ln -sfn "$KARPENTER/crds" "$CRDS/karpenter"
  unset GOTOOLCHAIN
}

kuberay_present || build_kuberay
kueue_present || build_kueue
karpenter_present || build_karpenter

all_present || { log "some operators are missing in $DIR"; exit 1; }
log "done in $((SECONDS - START))s"
echo "$DIR"
