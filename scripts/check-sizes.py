#!/usr/bin/env python3
"""Checks the sizes of src/ against the project's limits (docs/architecture.md, "Layers").

  scripts/check-sizes.py [SRC_DIR]      (default: the src/ beside this script)

Two checks, each an error per finding; exit 1 when there is any, 0 when there is none:

  files    no .h or .cc file is over MAX_FILE_LINES lines: a longer file usually holds
           two things;
  classes  no class or struct is declared in over MAX_CLASS_LINES lines (from the line
           that names it to its closing brace): a longer one usually does two jobs.

Folders in SKIPPED are not checked (see there why), and the declarations in KNOWN_LARGE
are allowed past the limit, each with the reason it still is; one that has come under the
limit is reported, so that the list only shrinks.

Run by ctest as layering.sizes; tests/layering/check_sizes_test.sh checks that each kind
of finding is reported (the check can fail).
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_CLASS_LINES = 250

# Folders not checked (none: src/daemon/ was, until ClusterCache was split into components).
SKIPPED = set()

# "FILE: NAME" -> why it is still over MAX_CLASS_LINES (none: ClusterState was, until its
# shape classes, dataset table, defragment memory, stamps, capacity totals and MIG/NUMA
# accounting became parts of their own, docs/architecture.md "The cluster model").
KNOWN_LARGE = {}


DECLARATION = re.compile(r"^\s*(?:template\s*<.*>\s*)?(?:class|struct)\s+(?:\[\[[^\]]*\]\]\s*)?"
                         r"([A-Za-z_]\w*)\b[^;(]*$")


def code_of(line, in_comment):
    """The line without comments, string and character literals; and whether a /* comment
    is still open after it."""
    out = []
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i = end + 2
            in_comment = False
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_comment = True
            i += 2
            continue
        if c in "\"'":
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_comment


def classes_in(lines):
    """[(name, first line, line count)] of every class or struct defined in `lines`."""
    code = []
    in_comment = False
    for line in lines:
        text, in_comment = code_of(line, in_comment)
        code.append(text)
    found = []
    for i, text in enumerate(code):
        m = DECLARATION.match(text)
        if not m:
            continue
        # The body opens on this line or a later one (a base list may run on), before any ';'.
        j = i
        while j < len(code) and "{" not in code[j] and ";" not in code[j]:
            j += 1
        if j >= len(code) or "{" not in code[j]:
            continue
        depth = 0
        for k in range(j, len(code)):
            start = code[k].index("{") if k == j else 0
            depth += code[k][start:].count("{") - code[k][start:].count("}")
            if depth <= 0:
                found.append((m.group(1), i + 1, k - i + 1))
                break
    return found


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if not os.path.isdir(src):
        sys.exit(f"check-sizes: {src} is not a folder")
    errors = []
    known_seen = set()
    checked = 0
    for directory, folders, names in os.walk(src):
        rel_dir = os.path.relpath(directory, src)
        if rel_dir.split(os.sep)[0] in SKIPPED:
            folders[:] = []
            continue
        for name in sorted(names):
            if not name.endswith((".h", ".cc")):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            checked += 1
            if len(lines) > MAX_FILE_LINES:
                errors.append(f"src/{rel}: {len(lines)} lines, over {MAX_FILE_LINES}: it "
                              f"likely holds two things; split it by what each part does")
            for cls, first, count in classes_in(lines):
                if count <= MAX_CLASS_LINES:
                    if f"{rel}: {cls}" in KNOWN_LARGE:
                        known_seen.add(f"{rel}: {cls}")
                        errors.append(f"src/{rel}:{first}: {cls} is {count} lines now: take it "
                                      f"out of KNOWN_LARGE in scripts/check-sizes.py")
                    continue
                key = f"{rel}: {cls}"
                if key in KNOWN_LARGE:
                    known_seen.add(key)
                    continue
                errors.append(f"src/{rel}:{first}: class {cls} is declared in {count} lines, "
                              f"over {MAX_CLASS_LINES}: it likely does two jobs; give one of "
                              f"them a class of its own")
    for key in sorted(set(KNOWN_LARGE) - known_seen):
        errors.append(f"KNOWN_LARGE names {key}, which is not there: take it out")
    for error in errors:
        print(error)
    if errors:
        print(f"check-sizes: {len(errors)} finding(s) in {checked} files")
        return 1
    print(f"check-sizes: {checked} files within {MAX_FILE_LINES} lines, classes within "
          f"{MAX_CLASS_LINES} ({len(KNOWN_LARGE)} known larger: see KNOWN_LARGE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
