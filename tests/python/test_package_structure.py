"""The Python package's shape: its modules import in one direction (no circle, lazy imports
inside functions included) and none injects a hook into another (no `_lib.x = ...` from outside
_lib). The calling convention (packed.py) imports no layer above it."""
import ast
import os

import graphrt

PACKAGE = os.path.dirname(graphrt.__file__)


def _modules():
    """Dotted name (relative to the package) -> file, every .py file but the package's __init__ (the
    composition that imports everything)."""
    out = {}
    for root, _, files in os.walk(PACKAGE):
        for f in files:
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(root, f), PACKAGE)[:-3].replace(os.sep, ".")
            if rel == "__init__":
                continue
            out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(root, f)
    return out


def _imports(name, path, known):
    """The package modules `name` imports (anywhere in its file)."""
    is_package = path.endswith("__init__.py")
    parts = name.split(".")
    base = parts if is_package else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        anchor = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        target = anchor + (node.module.split(".") if node.module else [])
        for alias in node.names:
            candidate = ".".join(target + [alias.name])
            if candidate in known:
                found.add(candidate)
            elif target and ".".join(target) in known:
                found.add(".".join(target))
    found.discard(name)
    return found


def _graph():
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}, known


def _cycle(graph):
    state = {}

    def visit(n, stack):
        state[n] = 1
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m, stack + [m])
                if found:
                    return found
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return None


def test_no_import_circle():
    graph, _ = _graph()
    assert "packed" in graph and "python_function" in graph["python_function"] | {"python_function"}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_calling_convention_imports_no_layer_above_it():
    graph, _ = _graph()
    assert graph["packed"] <= {"_lib", "_raised", "benchmark", "device", "ndarray", "error", "_call_block", "_handle"}, (
        graph["packed"])
    assert not graph.get("_handle"), graph["_handle"]  # addresses and drops: ctypes alone
    assert graph["_call_block"] <= {"_lib"}, graph["_call_block"]  # the call blocks below it: ctypes over _lib only
    assert "packed" in graph["module"] and "packed" in graph["python_function"]


def test_no_module_sets_attributes_of_another():
    _, known = _graph()
    for name, path in known.items():
        for node in ast.walk(ast.parse(open(path).read())):
            if not isinstance(node, (ast.Assign, ast.AugAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id.lstrip("_") in (
                        "lib", "packed", "module", "raised"):
                    raise AssertionError("%s sets %s.%s (line %d)" % (name, t.value.id, t.attr, node.lineno))


def test_a_python_exception_still_comes_back_through_the_convention():
    def fails(x):
        raise KeyError("nope %d" % x)

    f = graphrt.function_from_python(fails)
    try:
        f(3)
    except KeyError as e:
        assert "nope 3" in str(e)
    else:
        raise AssertionError("the Python exception was not re-raised")
