"""What a new user meets at the command line: paths as written in README, and the advice given
when something is missing or wrong. Every error is one line that says what to do."""
import os
import subprocess

from _apps import app


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def one_line_error(p, prog):
    assert p.returncode != 0, p.stdout
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(prog + ": error:"), lines[0]
    return lines[0]


# ---- item 1: a path without '/' is the file in the current directory ----
def test_bare_relative_model_path(mlp):
    p = run([app("graphrt-run"), "deploy_factory.so", "--input", "data=input_data.npy"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "output 0: (1, 10) float32" in p.stdout


def test_bare_relative_three_file_paths(mlp):
    p = run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_graph.json", "--params",
             "deploy_params.params", "--random-inputs", "0"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr


def test_bare_relative_path_inspect(mlp):
    p = run([app("graphrt-inspect"), "deploy_factory.so"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "GraphExecutorFactory" in p.stdout
