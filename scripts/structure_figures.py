#!/usr/bin/env python3
"""Structure figures of a source tree (docs/structure-figures.md): calls by name per front door,
JSON readers, the ten largest source files, the exported-symbol list.

Usage: scripts/structure_figures.py TREE   (a checkout, or `git archive REV | tar -x -C TREE`)"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = (".cc", ".h", ".c", ".cpp", ".py")
PATTERNS = ["registry_get(", "require_function(", '.function("', "get_global_func"]

def files(folder):
    for d, _, names in os.walk(os.path.join(root, folder)):
        for n in sorted(names):
            if n.endswith(SRC):
                yield os.path.join(d, n)

def code_lines(path):
    py = path.endswith(".py")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if py:
                if s.startswith("#"): continue
                yield line.split(" #", 1)[0]
            else:
                if s.startswith(("//", "*", "/*")): continue
                yield line.split("//", 1)[0]

print("calls by name (code lines, comments left out):")
for folder in ("apps", "session", "include", "python"):
    counts = {p: 0 for p in PATTERNS}
    for path in files(folder):
        for line in code_lines(path):
            for p in PATTERNS:
                counts[p] += line.count(p)
    print("  %-8s total %3d  " % (folder + "/", sum(counts.values())) + "  ".join("%s %d" % (p, c) for p, c in counts.items()))

lib = ("src", "graph", "modules", "backends", "session", "llm", "apps", "include")
cursor = re.compile(r"^\s*(class|struct)\s+(JsonCursor|JsonReader)\b")
parse = re.compile(r"json::parse\(")
cursors, parses = [], []
for folder in lib:
    for path in files(folder):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if any(cursor.match(l) for l in text.splitlines()): cursors.append(rel)
        if parse.search(text): parses.append(rel)
print("hand-written JSON readers (class/struct JsonCursor or JsonReader): %d  %s" % (len(cursors), " ".join(cursors)))
print("files parsing JSON through nlohmann (json::parse): %d  %s" % (len(parses), " ".join(parses)))

sizes = []
for folder in ("src", "graph", "modules", "backends", "session", "llm", "apps", "include", "python", "tests", "bench", "fuzz"):
    for path in files(folder):
        with open(path, encoding="utf-8", errors="replace") as f:
            sizes.append((sum(1 for _ in f), os.path.relpath(path, root)))
sizes.sort(reverse=True)
print("ten largest source files (lines):")
for n, p in sizes[:10]:
    print("  %5d %s" % (n, p))
lst = os.path.join(root, "tests", "core", "exported_symbols.txt")
with open(lst) as f:
    names = [l for l in f if l.strip()]
print("exported symbols (tests/core/exported_symbols.txt): %d, vtables and typeinfo aside %d"
      % (len(names), sum(1 for l in names if not l.startswith(("vtable for ", "typeinfo")))))
