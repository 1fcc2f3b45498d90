#!/usr/bin/env python3
"""Runs every command shown in README.md, so that the README cannot drift from the code.

Every fenced block tagged ```sh (or ```bash) runs as one bash script with `set -euo pipefail`,
every ```python block with python3. A block fails the test when it exits non-zero.

Each block runs in a fresh empty directory that holds, as symlinks:
  - every top-level entry of the source tree (scripts/, examples/, python/, include/, ...),
  - build -> the build directory under test (so `build/apps/graphrt-run` works as written),
  - the files named by a `files` directive (below).
python blocks see PYTHONPATH=<source>/python, the one line README tells users to run the package
from the source tree with (GRAPHRT_LIBRARY_PATH=<libgraphrt> only when the build under test is not
<source>/build, where the package looks by itself); every block sees GRAPHRT_FIXTURES.

Directives: HTML comments (invisible on the rendered page) on the lines right above a fence,
one directive per comment:
  <!-- readme-test: files deploy.so=mlp/deploy_factory.so input.npy=mlp/input_data.npy -->
      makes each NAME in the block's directory a symlink to TARGET; TARGET is a path under the
      fixtures directory, or starts with {build}/ or {source}/ (a path there). NAME may hold
      '/' (a sub-directory is made).
  <!-- readme-test: setup cp {fixtures}/mlp/input_data.npy extra.npy -->
      a shell command run in the block's directory before the block ({fixtures}, {build},
      {source} substituted); not shown to readers, so keep setup to what a user has already.
  <!-- readme-test: skip needs a CUDA GPU -->
      the block is not run (the reason is printed). Use it only for what this machine cannot
      do (a GPU, a network, the commands that run this very test).
A block that runs build/bench/ programs is skipped when the build has no bench/ directory
(configured with GRAPHRT_BUILD_BENCH=OFF), and one that runs build/apps/graphrt-serve when
the build has no server (GRAPHRT_BUILD_SERVE=OFF).

Usage: readme_commands.py --build BUILD_DIR [--source SRC] [--fixtures DIR] [--library LIBGRAPHRT]
       [--readme FILE] [--list] [--only SUBSTRING]
CTest runs it as `readme_commands`; `tests/readme_commands.py --list` shows what it would run.
Exit 0 when every block passed, 1 when one failed, 77 (CTest skip) when fixtures are absent (1 in CI:
CI=true or GRAPHRT_REQUIRE_FIXTURES=1).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
FENCE = re.compile(r"^(\s*)```+\s*([A-Za-z0-9_+-]*)\s*$")
DIRECTIVE = re.compile(r"^\s*<!--\s*readme-test:\s*(\w+)\s*(.*?)\s*-->\s*$")
RUNNERS = {"sh": "bash", "bash": "bash", "shell": "bash", "python": "python", "py": "python"}
SKIP_RC = 77


class Block:
    def __init__(self, lang, line, text, directives):
        self.lang = lang
        self.line = line          # 1-based line of the opening fence
        self.text = text
        self.directives = directives

    def first_command(self):
        for l in self.text.splitlines():
            if l.strip() and not l.strip().startswith("#"):
                return l.strip()
        return ""


def parse_blocks(readme_text):
    """Fenced blocks with their directives; raises ValueError on a malformed directive."""
    lines = readme_text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(2).lower()
        start = i
        directives = []
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("<!--"):
            d = DIRECTIVE.match(lines[j])
            if not d:
                if "readme-test" in lines[j]:
                    raise ValueError("README line %d: malformed readme-test directive: %s" % (j + 1, lines[j]))
                break
            directives.insert(0, (d.group(1), d.group(2), j + 1))
            j -= 1
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        for name, _, at in directives:
            if name not in ("files", "setup", "skip"):
                raise ValueError("README line %d: unknown readme-test directive '%s'" % (at, name))
        blocks.append(Block(lang, start + 1, "\n".join(body) + "\n", directives))
    return blocks


def substitute(text, paths):
    for key, value in paths.items():
        text = text.replace("{%s}" % key, value)
    return text


def resolve_target(target, paths):
    for key in ("build", "source", "fixtures"):
        prefix = "{%s}" % key
        if target.startswith(prefix):
            return paths[key] + target[len(prefix):]
    return os.path.join(paths["fixtures"], target)


def prepare_dir(block, paths, work):
    for entry in os.listdir(paths["source"]):
        if entry.startswith(".") or entry == "build" or entry.startswith("build-"):
            continue
        os.symlink(os.path.join(paths["source"], entry), os.path.join(work, entry))
    os.symlink(paths["build"], os.path.join(work, "build"))
    for name, arg, at in block.directives:
        if name != "files":
            continue
        for spec in shlex.split(arg):
            if "=" not in spec:
                raise ValueError("README line %d: files expects NAME=TARGET, got '%s'" % (at, spec))
            dest, target = spec.split("=", 1)
            source = resolve_target(target, paths)
            if not os.path.exists(source):
                raise ValueError("README line %d: %s does not exist" % (at, source))
            dest_path = os.path.join(work, dest)
            os.makedirs(os.path.dirname(dest_path), exist_ok=True)
            if os.path.lexists(dest_path):
                os.unlink(dest_path)
            os.symlink(source, dest_path)


def run_block(block, paths, env, timeout):
    """Returns (ok, log)."""
    with tempfile.TemporaryDirectory(prefix="readme-block-") as work:
        prepare_dir(block, paths, work)
        for name, arg, _ in block.directives:
            if name == "setup":
                p = subprocess.run(["bash", "-euo", "pipefail", "-c", substitute(arg, paths)], cwd=work, env=env,
                                   capture_output=True, text=True, timeout=timeout)
                if p.returncode != 0:
                    return False, "setup `%s` failed (exit %d):\n%s%s" % (arg, p.returncode, p.stdout, p.stderr)
        if RUNNERS[block.lang] == "bash":
            argv = ["bash", "-euxo", "pipefail", "-c", block.text]
        else:
            argv = [sys.executable, "-c", block.text]
        try:
            p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, "timed out after %d s" % timeout
        log = p.stdout + p.stderr
        if p.returncode != 0:
            return False, "exit %d:\n%s" % (p.returncode, log)
        return True, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--source", default=SOURCE)
    ap.add_argument("--fixtures", default=os.environ.get("GRAPHRT_FIXTURES")
                    or os.path.join(SOURCE, "..", "shared", "fixtures"))
    ap.add_argument("--readme", default=None)
    ap.add_argument("--library", default=None, help="libgraphrt for python blocks (default BUILD/libgraphrt.so)")
    ap.add_argument("--list", action="store_true", help="list the blocks and what would run")
    ap.add_argument("--only", default=None, help="run only blocks whose text contains this")
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args()
    paths = {"build": os.path.abspath(a.build), "source": os.path.abspath(a.source),
             "fixtures": os.path.abspath(a.fixtures)}
    readme = a.readme or os.path.join(paths["source"], "README.md")
    with open(readme) as f:
        blocks = [b for b in parse_blocks(f.read()) if b.lang in RUNNERS]
    if a.only:
        blocks = [b for b in blocks if a.only in b.text]
    if a.list:
        for b in blocks:
            skip = [arg for name, arg, _ in b.directives if name == "skip"]
            print("line %d %s%s: %s" % (b.line, b.lang, " (skip: %s)" % skip[0] if skip else "", b.first_command()))
        return 0
    if not os.path.isdir(paths["fixtures"]):
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_FIXTURES") == "1":
            print("FAIL: fixtures not found at %s and they are required in CI" % paths["fixtures"])
            return 1
        print("SKIP: fixtures not found at %s (set GRAPHRT_FIXTURES)" % paths["fixtures"])
        return SKIP_RC
    lib = os.path.abspath(a.library) if a.library else os.path.join(paths["build"], "libgraphrt.so")
    env = dict(os.environ)
    env["GRAPHRT_FIXTURES"] = paths["fixtures"]
    # The README tells users one line, PYTHONPATH=<source>/python, and the package finds
    # <source>/build/libgraphrt.so by itself: so the blocks run that way, and are told where the
    # library is only when the build under test is elsewhere.
    if os.path.realpath(lib) != os.path.realpath(os.path.join(paths["source"], "build", "libgraphrt.so")):
        env["GRAPHRT_LIBRARY_PATH"] = lib
    else:
        env.pop("GRAPHRT_LIBRARY_PATH", None)
    env["PYTHONPATH"] = os.path.join(paths["source"], "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    failed = 0
    for b in blocks:
        skip = [arg for name, arg, _ in b.directives if name == "skip"]
        # A build configured with GRAPHRT_BUILD_BENCH=OFF has no benchmarks to run;
        # that is the build's choice, not README drift.
        if not skip and "build/bench/" in b.text and not os.path.isdir(os.path.join(paths["build"], "bench")):
            skip = ["this build has no benchmarks (GRAPHRT_BUILD_BENCH=OFF)"]
        # Likewise a build without the inference server (GRAPHRT_BUILD_SERVE=OFF).
        if not skip and "build/apps/serve/" in b.text and \
                not os.path.isfile(os.path.join(paths["build"], "apps", "graphrt-serve")):
            skip = ["this build has no graphrt-serve (GRAPHRT_BUILD_SERVE=OFF)"]
        where = "README.md:%d (%s) %s" % (b.line, b.lang, b.first_command())
        if skip:
            print("skip %s -- %s" % (where, skip[0]))
            continue
        ok, log = run_block(b, paths, env, a.timeout)
        print("%s %s" % ("ok  " if ok else "FAIL", where))
        if not ok:
            failed += 1
            print("    " + log.replace("\n", "\n    "))
    print("%d block(s) failed" % failed if failed else "all README blocks ran")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
