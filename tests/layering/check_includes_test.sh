#!/usr/bin/env bash
# scripts/check-includes.py can fail: small trees with one fault each must be refused with
# the finding that names it, and a clean tree accepted.
#   tests/layering/check_includes_test.sh SOURCE_DIR
set -euo pipefail
checker="$1/scripts/check-includes.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# A clean tree: model <- engine <- yaml <- sim, a header and its .cc per component.
clean() {
  rm -rf "$work/src"
  mkdir -p "$work/src/model" "$work/src/engine" "$work/src/yaml" "$work/src/sim" "$work/src/daemon"
  printf '#pragma once\n' >"$work/src/model/a.h"
  printf '#include "model/a.h"\n' >"$work/src/model/a.cc"
  printf '#pragma once\n#include "model/a.h"\n' >"$work/src/engine/b.h"
  printf '#include "engine/b.h"\n#include <vector>\n' >"$work/src/engine/b.cc"
  printf '#pragma once\n#include <yaml-cpp/yaml.h>\n#include "engine/b.h"\n' >"$work/src/yaml/c.h"
  printf '#pragma once\n#include "yaml/c.h"\n' >"$work/src/sim/d.h"
  printf '#pragma once\n#include "engine/b.h"\n' >"$work/src/daemon/e.h"
}

# expect NAME STATUS TEXT: the checker exits STATUS on $work/src and its output has TEXT.
expect() {
  local name="$1" status="$2" text="$3" out got=0
  out=$(python3 "$checker" "$work/src" 2>&1) || got=$?
  if [[ "$got" != "$status" ]] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL $name: exit $got (want $status), output:"
    echo "$out" | sed 's/^/    /'
    echo "    (wanted \"$text\")"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

clean
expect clean 0 "layers kept, no include circle"

clean
printf '#include <yaml-cpp/yaml.h>\n' >>"$work/src/engine/b.cc"
expect engine-includes-yaml-cpp 1 'src/engine/b.cc:3: includes <yaml-cpp/yaml.h>: engine/ parses no YAML'

clean
printf '#include "yaml/c.h"\n' >>"$work/src/engine/b.cc"
expect engine-includes-yaml 1 'src/engine/b.cc:3: includes "yaml/c.h": engine/ may include model'

clean
printf '#include "engine/b.h"\n' >>"$work/src/model/a.cc"
expect model-includes-engine 1 'src/model/a.cc:2: includes "engine/b.h": model/ may include nothing else'

clean
printf '#include "sim/d.h"\n' >>"$work/src/daemon/e.h"
expect daemon-includes-sim 1 'src/daemon/e.h:3: includes "sim/d.h": daemon/ may include'

clean
mkdir -p "$work/src/extra"
printf '#pragma once\n' >"$work/src/extra/f.h"
expect unknown-folder 1 'folder extra/ has no place in the layers'

clean
# engine/b.cc needs engine/g.h, and engine/g.cc needs engine/b.h: a circle of components,
# though no header includes itself.
printf '#pragma once\n' >"$work/src/engine/g.h"
printf '#include "engine/g.h"\n#include "engine/b.h"\n' >"$work/src/engine/g.cc"
printf '#include "engine/g.h"\n' >>"$work/src/engine/b.cc"
expect circle 1 'include circle between engine/b, engine/g'
expect circle-names-the-line 1 'src/engine/g.cc:2: #include "engine/b.h"'

if ((failures > 0)); then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
