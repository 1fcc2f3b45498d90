#!/usr/bin/env python3
"""Checks every #include of the library and the apps against the layer rules.

The build gives only the core src/ as an include root, so most violations do not
compile; this test also catches what the shared project root would let through
("src/threading/thread_pool.h" from graph/, one back end including another, an app
including a layer's internals).

  src/                 public headers and the core's own files
  src/elf/             (the base's ELF reader and image loader) public headers
                       and its own files only: it is below the core
  src/base/<format>/   (the base's other formats: json/, the one JSON reader and
                       writer) public headers and its own files only, as src/elf/
  graph/               public headers, its own files, src/layer_api/, src/elf/, src/base/
  backends/<name>/     public headers, its own files, src/layer_api/, src/elf/, src/base/
                       (the base's readers of formats: TVM's device function table)
  backends/vm/host/    public headers and backends/vm/host/ only (the VM's values,
                       modules and contexts)
  backends/vm/bytecode/ public headers, backends/vm/host/ and backends/vm/bytecode/ (the
                       instruction set and what reads, writes or runs it)
  backends/vm/tvm_bridge/, backends/vm/register.cc  the rest of the back end and
                       src/layer_api/ (what makes the VM a graphrt back end)
  backends/register_all.cc public headers, src/layer_api/ and each layer's one
                       registration header (graph/register_graph_executor.h,
                       backends/<name>/register.h)
  llm/                 (the language-model library: tokenizers) public headers, its own
                       files (llm/...) and src/layer_api/
  session/             public headers, its own files and src/layer_api/c_api_guard.h (the
                       one C boundary guard, for its C functions)
  apps/                public headers and apps/common/ (and what protoc generates from an
                       app's own .proto, beside it)

Public headers are include/graphrt/, include/tvm/ and the system's (dlpack,
nlohmann, libc, the standard library).

One rule for calls by name: the front doors (apps/, session/, include/graphrt/,
python/graphrt/ but for TVM's compatibility faces in it, runtime/ and contrib/)
read a result's tuples and shapes through graphrt/value.h or the C API's
graphrt_value_* and never name TVM's accessors (runtime.ArraySize,
runtime.ArrayGetItem, runtime.GetShapeTupleSize, runtime.GetShapeTupleElem),
which the core registers for TVM's own front ends and libraries; and apps/,
session/ and include/graphrt/ make no call by name (registry_get(,
require_function(, .function(") outside CALLS_BY_NAME_ALLOWED, a short list of
TVM faces.

Three more rules of the build (docs/architecture.md): nothing includes
dmlc-core (unused on purpose); no back end's CMakeLists.txt looks for
../shared (the fixtures folder is GRAPHRT_FIXTURES_DIR, set at the top); and
the library's string literals name no command-line flag (the apps add those).

Usage: layering_test.py [repository root]   (default: two folders up)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
PUBLIC_PREFIXES = ("graphrt/", "tvm/")
SOURCE_SUFFIXES = (".cc", ".h", ".c", ".cpp")


def sources(folder):
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def is_repo_path(target):
    """True when `target` names something in this repository rather than a system header."""
    head = target.split("/", 1)[0]
    return head in ("src", "graph", "backends", "llm", "session", "apps", "tests", "bench", "fuzz", "python", "include")


def own_file(path, target):
    """True when the quoted `target` is a file next to `path` (or below its folder)."""
    return os.path.isfile(os.path.join(os.path.dirname(path), target))


def check_core(path, kind, target):
    if target.startswith(PUBLIC_PREFIXES):
        return None
    if kind == '"' and (own_file(path, target) or os.path.isfile(os.path.join(ROOT, "src", target))):
        return None
    if is_repo_path(target):
        return "the core includes only public headers and its own files"
    return None


def check_base_elf(path, kind, target):
    if target.startswith(PUBLIC_PREFIXES):
        return None
    if kind == '"' and own_file(path, target) and "/" not in target:
        return None
    if is_repo_path(target) or kind == '"':
        return "the base's ELF reader includes public headers and its own files only"
    return None


def check_base_folder(path, kind, target):
    if target.startswith(PUBLIC_PREFIXES):
        return None
    if kind == '"' and own_file(path, target) and "/" not in target:
        return None
    if is_repo_path(target) or kind == '"':
        return "the base (src/base/) includes public headers and its own files only"
    return None


def check_session(path, kind, target):
    """The session layer stands on the public API; of the core's offer to the layers above it,
    only the one C boundary guard, for its graphrt_model_* / graphrt_runner_* functions."""
    if target.startswith(PUBLIC_PREFIXES) or target == "src/layer_api/c_api_guard.h":
        return None
    if kind == '"' and own_file(path, target) and "/" not in target:
        return None
    if is_repo_path(target) or kind == '"':
        return "the session layer includes public headers, its own files and src/layer_api/c_api_guard.h only"
    return None


def check_upper_layer(path, kind, target, own_prefix):
    if target.startswith(PUBLIC_PREFIXES) or target.startswith(("src/layer_api/", "src/elf/", "src/base/")):
        return None
    if own_prefix and target.startswith(own_prefix):
        return None
    if kind == '"' and own_file(path, target) and "/" not in target:
        return None
    if is_repo_path(target) or kind == '"':
        return "a layer above the core includes public headers, src/layer_api/, the base's src/elf/ and src/base/ and its own files only"
    return None


# What each side of the VM may include of the VM (besides the public headers).
VM_SIDES = {
    "host": ("backends/vm/host/",),
    "bytecode": ("backends/vm/host/", "backends/vm/bytecode/"),
}


def check_vm_side(path, kind, target, side):
    why = check_upper_layer(path, kind, target, "backends/vm/")
    if why:
        return why
    if target.startswith("src/layer_api/"):
        return "only the VM's TVM bridge reaches the core"
    if target.startswith("backends/vm/") and not target.startswith(VM_SIDES[side]):
        return "the VM's %s side includes only %s of the VM" % (side, " and ".join(VM_SIDES[side]))
    return None


def check_registration(path, kind, target):
    if target == "graph/register_graph_executor.h" or re.match(r"backends/[a-z0-9_]+/register\.h$", target):
        return None
    return check_upper_layer(path, kind, target, None)


def generated_from_own_proto(path, target):
    """True for protoc's output (X.pb.h, X.grpc.pb.h) of an X.proto next to `path`, or in any folder
    of the app `path` belongs to (apps/<app>/...)."""
    for suffix in (".grpc.pb.h", ".pb.h"):
        if target.endswith(suffix) and "/" not in target:
            proto = target[:-len(suffix)] + ".proto"
            return own_file(path, proto) or own_app_proto(path, proto)
    return False


def own_app_proto(path, proto):
    parts = os.path.relpath(path, ROOT).split(os.sep)
    if len(parts) < 3 or parts[0] != "apps":
        return False
    return any(proto in files for _, _, files in os.walk(os.path.join(ROOT, "apps", parts[1])))


def own_app_file(path, target):
    """True when the quoted `target` is a file of the app `path` belongs to (apps/<app>/...: an app
    split into sub-folders includes its own files by their path from the app's folder)."""
    parts = os.path.relpath(path, ROOT).split(os.sep)
    if len(parts) < 3 or parts[0] != "apps":
        return False
    return os.path.isfile(os.path.join(ROOT, "apps", parts[1], target))


def check_app(path, kind, target):
    if target.startswith(PUBLIC_PREFIXES):
        return None
    if kind == '"' and (target.startswith("common/") or (own_file(path, target) and "/" not in target)):
        return None
    if kind == '"' and own_app_file(path, target):
        return None
    if kind == '"' and generated_from_own_proto(path, target):
        return None
    if is_repo_path(target) or kind == '"':
        return "apps use the public API only"
    return None


def rule_for(relpath):
    parts = relpath.split(os.sep)
    if parts[:2] == ["src", "elf"]:
        return check_base_elf
    if parts[:2] == ["src", "base"]:
        return check_base_folder
    if parts[0] == "src":
        return check_core
    if parts[0] == "graph":
        return lambda p, k, t: check_upper_layer(p, k, t, "graph/")
    if parts[0] == "backends" and len(parts) == 2:
        return check_registration
    if parts[:2] == ["backends", "vm"] and len(parts) > 3 and parts[2] in VM_SIDES:
        return lambda p, k, t: check_vm_side(p, k, t, parts[2])
    if parts[0] == "backends":
        return lambda p, k, t: check_upper_layer(p, k, t, "backends/%s/" % parts[1])
    if parts[0] == "llm":
        return lambda p, k, t: check_upper_layer(p, k, t, "llm/")
    if parts[0] == "session":
        return check_session
    if parts[0] == "apps":
        return check_app
    return None


FLAG_IN_TEXT = re.compile(r'(^|[\s(;,])--[a-z][a-z-]+')
STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def build_rule_violations():
    out = []
    for folder in ("src", "graph", "backends", "llm", "apps", "tests", "fuzz", "bench", "include", "examples"):
        for path in sources(folder):
            for number, _, target in includes(path):
                if target.startswith("dmlc/"):
                    out.append("%s:%d: includes %s: dmlc-core is not used" % (os.path.relpath(path, ROOT), number, target))
    for dirpath, _, files in os.walk(os.path.join(ROOT, "backends")):
        if "CMakeLists.txt" in files:
            path = os.path.join(dirpath, "CMakeLists.txt")
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if "../shared" in line.split("#", 1)[0]:
                        out.append("%s:%d: a back end looks for ../shared (use GRAPHRT_FIXTURES_DIR)" %
                                   (os.path.relpath(path, ROOT), number))
    for folder in ("src", "graph", "backends", "llm"):
        for path in sources(folder):
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    code = line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
                    for literal in STRING_LITERAL.findall(code):
                        if FLAG_IN_TEXT.search(literal):
                            out.append("%s:%d: a library message names a command-line flag (%s): the apps add "
                                       "their own hints" % (os.path.relpath(path, ROOT), number, literal.strip()))
    return out


# TVM's accessors of its Array and ShapeTuple, which graphrt's front doors do not call.
VALUE_ACCESSOR_NAMES = re.compile(r"runtime\.(ArraySize|ArrayGetItem|GetShapeTupleSize|GetShapeTupleElem)\b")
FRONT_DOORS = ("apps", "session", os.path.join("include", "graphrt"), os.path.join("python", "graphrt"))
# TVM's compatibility faces among them: what TVM's users call stays TVM's.
TVM_FACES = (os.path.join("python", "graphrt", "runtime") + os.sep, os.path.join("python", "graphrt", "contrib") + os.sep)


def value_accessor_violations():
    out = []
    for folder in FRONT_DOORS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES + (".py",)):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if rel.startswith(TVM_FACES):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = VALUE_ACCESSOR_NAMES.search(line)
                        if m:
                            out.append("%s:%d: names %s: a front door reads tuples and shapes through "
                                       "graphrt/value.h or graphrt_value_*, not by calling TVM's accessors by name"
                                       % (rel, number, m.group(0)))
    return out


# Calls by name in the apps and the session layer: only these files make them, each a TVM face
# or an API that is global functions by design.
CALL_BY_NAME = re.compile(r'\bregistry_get\(|\brequire_function\(|\.function\("')
CALLS_BY_NAME_ALLOWED = {
    os.path.join("apps", "common", "packed_args.cc"): "the IREE-style VM's API, its graphrt.vm.* global functions",
    os.path.join("session", "graph_model.cc"): "the graph executor factory's TVM face (create_with_options)",
    os.path.join("session", "shared_params.cc"): "the factory's TVM face (remove_params)",
    os.path.join("session", "params_cache_use.cc"): "the root's TVM-style use_params_cache",
    os.path.join("session", "language_model.cc"): "the model library's own functions (embed, _metadata, ...)",
    os.path.join("session", "relax_vm.cc"): "the Relax VM's TVM face (vm_load_executable, vm_initialization, ...) "
                                            "behind graphrt::RelaxVM",
    # The public headers: the calls by name themselves (declared), and the IREE-style VM's API.
    os.path.join("include", "graphrt", "module.h"): "declares require_function",
    os.path.join("include", "graphrt", "registry.h"): "declares registry_get",
    os.path.join("include", "graphrt", "vm.h"): "the IREE-style VM's API, its graphrt.vm.* global functions",
}


def call_by_name_violations():
    out = []
    for folder in ("apps", "session", os.path.join("include", "graphrt")):
        for path in sources(folder):
            rel = os.path.relpath(path, ROOT)
            if rel in CALLS_BY_NAME_ALLOWED:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    code = line.split("//", 1)[0]
                    m = CALL_BY_NAME.search(code)
                    if m:
                        out.append("%s:%d: a call by name (%s): the apps, the session layer and the public "
                                   "headers use typed APIs "
                                   "(graphrt/session.h, graphrt/value.h, ...), calls by name stay in the "
                                   "allow-listed TVM faces" % (rel, number, m.group(0)))
    return out


def main():
    violations = build_rule_violations() + value_accessor_violations() + call_by_name_violations()
    checked = 0
    for folder in ("src", "graph", "backends", "llm", "session", "apps"):
        for path in sources(folder):
            rel = os.path.relpath(path, ROOT)
            rule = rule_for(rel)
            if rule is None:
                continue
            checked += 1
            for number, kind, target in includes(path):
                why = rule(path, kind, target)
                if why:
                    violations.append("%s:%d: #include %s%s%s: %s" % (rel, number, kind, target,
                                                                     '"' if kind == '"' else ">", why))
    if checked < 50:
        print("layering_test: only %d files found under %s; wrong root?" % (checked, ROOT))
        return 1
    for v in violations:
        print(v)
    print("layering_test: %d files, %d violations" % (checked, len(violations)))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
