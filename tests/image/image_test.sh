#!/usr/bin/env bash
# The image test (ctest label `image`): builds the Dockerfile's runtime stage with buildah,
# with this build tree's install in place of the build stage's (`cmake --install --strip`,
# staged with DESTDIR under /out as the build stage stages it; --build-context build=...),
# then checks the image: ENTRYPOINT and a numeric non-root USER as deploy/deployment.yaml
# expects, no compiler in it, `gantry --version` running inside it, and the rest of the
# install there (the kubectl-gantry link, the default configuration, valid).
#
#   tests/image/image_test.sh SOURCE_DIR BUILD_DIR VERSION [CMAKE]
#
# No container registry is reachable here, so when debian:bookworm and bookworm-slim are not
# in buildah's store and cannot be pulled, they are made once from Debian's packages with
# debootstrap (a minbase rootfs, kept in $GANTRY_IMAGE_CACHE) and committed under their
# Docker Hub names. buildah keeps its layers: a second run reuses them.
# Exit 77 (ctest: skipped) only when buildah or debootstrap is absent; scripts/setup.sh
# installs both. GANTRY_IMAGE_FULL=1 also builds the build stage (gantry compiled inside the
# image, tens of minutes cold on 2 cores).
set -euo pipefail

src=${1:?SOURCE_DIR}
build=${2:?BUILD_DIR}
version=${3:?VERSION}
cmake=${4:-cmake}
cache=${GANTRY_IMAGE_CACHE:-$HOME/.cache/gantry/image}
mirror=${GANTRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
release=bookworm

for tool in buildah debootstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is not installed (scripts/setup.sh installs it)"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: building images with buildah's chroot isolation needs root here"
  exit 77
fi

# vfs: no overlay mounts needed (none inside this sandbox); chroot: no user namespaces.
b() { buildah --storage-driver vfs "$@"; }
export BUILDAH_ISOLATION=chroot

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9  # one image build at a time (the store and the rootfs cache are shared)

base_image() {
  local name=docker.io/library/debian:$1
  b inspect --type image "$name" >/dev/null 2>&1 && return 0
  timeout 60 buildah --storage-driver vfs pull -q "$name" >/dev/null 2>&1 && return 0
  local tarball=$cache/$release-minbase.tar
  if [ ! -s "$tarball" ]; then
    echo "image: no registry has $name; making it with debootstrap from $mirror"
    local root
    root=$(mktemp -d)
    debootstrap --variant=minbase "$release" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -20 "$cache/debootstrap.log"; rm -rf "$root"; return 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  local ctr
  ctr=$(b from scratch)
  b add "$ctr" "$tarball" /
  b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd /bin/bash "$ctr"
  b commit -q "$ctr" "$name" >/dev/null
  b rm "$ctr" >/dev/null
}
base_image "$release"
base_image "$release-slim"

tag=localhost/gantry:test
context=$(mktemp -d)
ctr=""
cleanup() {
  [ -n "$ctr" ] && b rm "$ctr" >/dev/null 2>&1
  # The tagged image goes (each run makes a new top layer); the layers under it stay cached.
  b rmi -f "$tag" >/dev/null 2>&1 || true
  rm -rf "$context"
}
trap cleanup EXIT
# Stripped, as the build stage installs it (and a tenth of the size to copy into the layer).
if ! log=$(DESTDIR="$context/out" "$cmake" --install "$build" --prefix /usr/local --strip 2>&1); then
  echo "$log"
  echo "FAILED: cmake --install $build"
  exit 1
fi

if [ "${GANTRY_IMAGE_FULL:-0}" = 1 ]; then
  b bud --layers --force-rm --pull=never -f "$src/Dockerfile" -t "$tag" "$src"
else
  b bud --layers --force-rm --pull=never --build-context "build=$context" --target runtime \
    -f "$src/Dockerfile" -t "$tag" "$src"
fi

fail=0
check() {  # what, got, want
  if [ "$2" = "$3" ]; then
    echo "ok: $1: $2"
  else
    echo "FAILED: $1: got '$2', want '$3'"
    fail=1
  fi
}
check "entrypoint" "$(b inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$tag")" \
  "[/usr/local/bin/gantry]"
# The user the Deployment runs it as (runAsUser, runAsGroup) is the image's own.
deploy_uid=$(sed -n 's/^ *runAsUser: *\([0-9]*\).*/\1/p' "$src/deploy/deployment.yaml" | head -1)
deploy_gid=$(sed -n 's/^ *runAsGroup: *\([0-9]*\).*/\1/p' "$src/deploy/deployment.yaml" | head -1)
check "user" "$(b inspect --type image --format '{{.OCIv1.Config.User}}' "$tag")" \
  "${deploy_uid:-none}:${deploy_gid:-none}"
ctr=$(b from --pull=never "$tag")
check "gantry --version in the image" "$(b run "$ctr" -- /usr/local/bin/gantry --version)" \
  "gantry $version"
check "uid in the image" "$(b run "$ctr" -- sh -c 'id -u')" "65532"
check "kubectl-gantry in the image" "$(b run "$ctr" -- /usr/local/bin/kubectl-gantry --version)" \
  "gantry $version"
check "the default configuration in the image" \
  "$(b run "$ctr" -- sh -c '/usr/local/bin/gantry validate /usr/local/etc/gantry/gantry-config.yaml >/dev/null && echo valid')" \
  "valid"
check "no compiler in the image" "$(b run "$ctr" -- sh -c 'command -v c++ cc g++ || echo none')" \
  "none"
exit $fail
