#!/usr/bin/env python3
"""Checks the layers' link dependencies: no layer's objects reference a symbol
that only a layer above it (or a sibling back end) defines.

The include rules (layering_test.py) cannot see a function declared low and
defined high: the core declaring a hook that the composition unit defines
compiles and links, and is still an upward edge. This test reads the objects
themselves (`nm`): every undefined symbol of a layer's objects must be defined
by the layer itself, by a layer below it, or outside graphrt (libc, libstdc++,
zlib).

The build writes the layers, lowest first, into a file (tests/core/CMakeLists.txt,
file(GENERATE)); one line per layer:

  <rank> <target> <object> <object> ...

Layers of equal rank (the back ends) may not reference each other either.

Usage: link_layering_test.py LAYERS_FILE
"""
import subprocess
import sys


def read_layers(path):
    layers = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                layers.append((int(parts[0]), parts[1], parts[2:]))
    return layers


def symbols(objects):
    """(defined, undefined) symbol names of `objects`, mangled."""
    defined, undefined = set(), set()
    if not objects:
        return defined, undefined
    out = subprocess.run(["nm", "--format=posix"] + objects, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        # posix format: "name type [value size]"; object headers end with ':'.
        if len(parts) < 2 or parts[0].endswith(":") or line.endswith(":"):
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v") and len(parts) == 2:
            undefined.add(name)
        elif kind not in ("U",):
            defined.add(name)
    return defined, undefined


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def violations(layers):
    table = [(rank, name, *symbols(objects)) for rank, name, objects in layers]
    found = []
    for rank, name, defined, undefined in table:
        allowed = set(defined)
        for other_rank, other, other_defined, _ in table:
            if other_rank < rank:
                allowed |= other_defined
        for other_rank, other, other_defined, _ in table:
            if other == name or other_rank < rank:
                continue
            upward = sorted((undefined - allowed) & other_defined)
            if upward:
                where = "above it" if other_rank > rank else "beside it"
                for symbol, readable in zip(upward, demangle(upward)):
                    found.append("%s references %s, defined only in %s (%s)" % (name, readable, other, where))
    return found


def main():
    layers = read_layers(sys.argv[1])
    objects = sum(len(o) for _, _, o in layers)
    if len(layers) < 3 or objects < 50:
        print("link_layering_test: only %d layers, %d objects in %s" % (len(layers), objects, sys.argv[1]))
        return 1
    found = violations(layers)
    for v in found:
        print(v)
    print("link_layering_test: %d layers, %d objects, %d upward references" % (len(layers), objects, len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
