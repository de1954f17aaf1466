#!/usr/bin/env python3
"""Checks the includes of src/ against the layers (docs/architecture.md, "## Layers").

  scripts/check-includes.py [SRC_DIR]      (default: the src/ beside this script)

Two checks, each an error per finding; exit 1 when there is any, 0 when there is none:

  layering  every `#include "FOLDER/..."` of a file under src/FOLDER/ names a folder that
            FOLDER may include (ALLOWED below), and no file of a layer that must not parse
            YAML includes a yaml-cpp header (<yaml-cpp/...>). A folder missing from ALLOWED
            is an error too, so that a new folder states its place.
  circles   no two components need each other: a component is a header and its .cc (one
            unit, as x.h and x.cc are one thing), and component A needs B when a file of A
            includes a file of B. A circle (A needs B needs ... needs A) is reported with
            the include line of each step.

Run by ctest as layering.includes; tests/layering/check_includes_test.sh checks that each
kind of finding is reported (the check can fail).
"""
import os
import re
import sys

# What each folder of src/ may include, besides itself. The model depends on nothing; the
# engine on the model; yaml (YAML in) and explain (an explanation's JSON and words) on the
# engine; sim on those; k8s (the API's objects, decoded into the model) on the model and
# yaml only; the daemon on everything but sim and cli; cli on all. dra (DRA's CEL selectors,
# upstream's Go library behind a C++ interface) on the model only, and no engine file on it.
ALLOWED = {
    "model": set(),
    "engine": {"model"},
    "yaml": {"model", "engine"},
    "explain": {"model", "engine"},
    "dra": {"model"},
    "sim": {"model", "engine", "yaml", "explain", "dra"},
    "k8s": {"model", "yaml", "dra"},
    "daemon": {"model", "engine", "yaml", "explain", "k8s", "dra"},
    "cli": {"model", "engine", "yaml", "explain", "sim", "k8s", "daemon", "dra"},
}
# Folders whose files may include yaml-cpp: YAML is read in yaml/ and by the readers of the
# formats built on it (scenarios, manifests, the daemon's configuration), never below.
YAML_CPP_ALLOWED = {"yaml", "sim", "k8s", "daemon", "cli"}

LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>")


def read_includes(path):
    """[(line number, kind, target)] where kind is "local" or "system"."""
    found = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = LOCAL_INCLUDE.match(line)
            if m:
                found.append((number, "local", m.group(1)))
                continue
            m = SYSTEM_INCLUDE.match(line)
            if m:
                found.append((number, "system", m.group(1)))
    return found


def source_files(src):
    files = {}
    for directory, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith((".h", ".cc")):
                path = os.path.join(directory, name)
                files[os.path.relpath(path, src)] = read_includes(path)
    return files


def layer_of(rel):
    return rel.split(os.sep, 1)[0] if os.sep in rel else ""


def check_layering(files):
    errors = []
    for rel, includes in sorted(files.items()):
        layer = layer_of(rel)
        if layer not in ALLOWED:
            errors.append(f"src/{rel}: folder {layer or '(top)'}/ has no place in the layers "
                          f"(add it to ALLOWED in scripts/check-includes.py and to "
                          f"docs/architecture.md)")
            continue
        for number, kind, target in includes:
            if kind == "system":
                if target.startswith("yaml-cpp/") and layer not in YAML_CPP_ALLOWED:
                    errors.append(f"src/{rel}:{number}: includes <{target}>: {layer}/ parses "
                                  f"no YAML (it receives parsed values; see src/yaml/)")
                continue
            target_layer = target.split("/", 1)[0] if "/" in target else ""
            if target_layer == layer or target_layer not in ALLOWED:
                continue  # its own folder, or not a file of src/ (a test helper, generated)
            if target_layer not in ALLOWED[layer]:
                may = ", ".join(sorted(ALLOWED[layer])) or "nothing else"
                errors.append(f"src/{rel}:{number}: includes \"{target}\": {layer}/ may "
                              f"include {may}")
    return errors


def component(rel):
    return os.path.splitext(rel)[0]


def check_circles(files):
    # needs[A][B] = (file, line, target) of the first include that makes A need B.
    needs = {}
    for rel, includes in sorted(files.items()):
        for number, kind, target in includes:
            if kind != "local" or target not in files:
                continue
            a, b = component(rel), component(target)
            if a != b:
                needs.setdefault(a, {}).setdefault(b, (rel, number, target))
    # Tarjan's strongly connected components, iteratively (no recursion limit).
    index, low, on_stack, stack, circles = {}, {}, set(), [], []
    counter = 0
    for start in sorted(needs):
        if start in index:
            continue
        work = [(start, iter(sorted(needs.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(needs.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    circles.append(sorted(members))
    errors = []
    for members in sorted(circles):
        inside = set(members)
        lines = []
        for a in members:
            for b, (rel, number, target) in sorted(needs.get(a, {}).items()):
                if b in inside:
                    lines.append(f"    src/{rel}:{number}: #include \"{target}\"")
        errors.append("include circle between " + ", ".join(members) +
                      " (a header and its .cc count as one):\n" + "\n".join(lines))
    return errors


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if not os.path.isdir(src):
        sys.exit(f"check-includes: {src} is not a folder")
    files = source_files(src)
    if not files:
        sys.exit(f"check-includes: no .h or .cc file under {src}")
    errors = check_layering(files) + check_circles(files)
    for error in errors:
        print(error)
    if errors:
        print(f"check-includes: {len(errors)} finding(s) in {len(files)} files")
        return 1
    print(f"check-includes: {len(files)} files, layers kept, no include circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
