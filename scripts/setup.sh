#!/usr/bin/env bash
# Installs the Debian packages that Gantry's build, tests and benchmarks need.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libcurl4-openssl-dev libcpp-httplib-dev libssl-dev openssl
  # RE2: Volcano HyperNodes' regexMatch members, matched as Go's regexp does (linear time).
  libre2-dev
  # The fuzz build (tests/fuzz/): clang with libFuzzer and the sanitizer runtimes, and
  # llvm-symbolizer for readable stacks in sanitizer reports.
  clang-16 libclang-rt-16-dev llvm
  # The live page's browser test (tests/integration/page_test.cc): headless Chromium.
  chromium
  # The image test (tests/image/): a daemonless image builder, and debootstrap for the
  # Debian base images where no container registry is reachable.
  buildah debootstrap
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
