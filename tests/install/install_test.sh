#!/usr/bin/env bash
# The install test (ctest label `install`): `cmake --install` of this build tree into a fresh
# prefix, then what a user runs from there: P/bin/gantry --version, the kubectl plugin
# P/bin/kubectl-gantry (through kubectl itself where kubectl is installed), the default
# configuration (valid, as `gantry validate` reads it), deploy/ (CRDs, manifests, examples, the
# Grafana dashboard) byte for byte, and nothing else: no test, benchmark or fuzzer. Then a
# DESTDIR-staged install (as packagers and the Dockerfile do), whose link must still resolve.
#
#   tests/install/install_test.sh SOURCE_DIR BUILD_DIR VERSION [CMAKE]
set -euo pipefail

src=${1:?SOURCE_DIR}
build=${2:?BUILD_DIR}
version=${3:?VERSION}
cmake=${4:-cmake}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/p

fail=0
check() {  # what, got, want
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
  else
    echo "FAILED: $1: got '$2', want '$3'"
    fail=1
  fi
}

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAILED: cmake --install"; exit 1; }

check "P/bin/gantry --version" "$("$prefix/bin/gantry" --version 2>&1)" "gantry $version"
check "P/bin/kubectl-gantry is a relative link to gantry" \
  "$(readlink "$prefix/bin/kubectl-gantry" 2>&1)" "gantry"
# Run under its plugin name, gantry calls itself kubectl-gantry (its usage line says so).
check "P/bin/kubectl-gantry names itself" \
  "$("$prefix/bin/kubectl-gantry" --help 2>&1 | grep -c '^Usage: kubectl-gantry ')" "1"
if command -v kubectl >/dev/null; then
  # kubectl finds plugins on PATH by their kubectl- name and runs them with the arguments.
  check "kubectl gantry --version (plugin on PATH)" \
    "$(PATH="$prefix/bin:$PATH" kubectl gantry --version 2>&1)" "gantry $version"
else
  echo "note: kubectl is not installed; the plugin was not run through kubectl"
fi

check "P/etc/gantry/gantry-config.yaml is deploy/gantry-config.yaml" \
  "$(cmp "$src/deploy/gantry-config.yaml" "$prefix/etc/gantry/gantry-config.yaml" 2>&1 && echo same)" \
  "same"
check "the installed configuration is valid" \
  "$("$prefix/bin/gantry" validate "$prefix/etc/gantry/gantry-config.yaml" >/dev/null 2>&1 &&
     echo valid)" "valid"

# deploy/ byte for byte under share/gantry/deploy; the expected list is the source tree's.
expected=$tmp/expected
{
  echo bin/gantry
  echo bin/kubectl-gantry
  echo etc/gantry/gantry-config.yaml
  (cd "$src/deploy" && find . -type f | sed 's|^\./|share/gantry/deploy/|')
} | sort >"$expected"
for f in crds/scheduling.volcano.sh_podgroups.yaml crds/scheduling.volcano.sh_queues.yaml \
         crds/scheduling.x-k8s.io_podgroups.yaml rbac.yaml config.yaml deployment.yaml \
         grafana/gantry.json; do
  grep -qx "share/gantry/deploy/$f" "$expected" || { echo "FAILED: deploy/$f is missing"; fail=1; }
done
while read -r f; do
  case "$f" in share/gantry/deploy/*)
    cmp -s "$src/deploy/${f#share/gantry/deploy/}" "$prefix/$f" ||
      { echo "FAILED: P/$f differs from the source or is missing"; fail=1; } ;;
  esac
done <"$expected"
# Nothing more: no test, benchmark or fuzzer binaries, no build files.
(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$tmp/installed"
check "installed files (diff of want and got)" "$(diff "$expected" "$tmp/installed")" ""
check "install_manifest.txt lists them all" \
  "$(sed "s|^$prefix/||" "$build/install_manifest.txt" | sort | diff "$expected" -)" ""

# A staged install (DESTDIR): the tree moves, the link must still resolve.
DESTDIR=$tmp/stage "$cmake" --install "$build" --prefix /usr/local >"$tmp/stage.log" 2>&1 ||
  { cat "$tmp/stage.log"; echo "FAILED: DESTDIR=... cmake --install"; exit 1; }
check "DESTDIR install: kubectl-gantry --version" \
  "$("$tmp/stage/usr/local/bin/kubectl-gantry" --version 2>&1)" "gantry $version"

exit $fail
