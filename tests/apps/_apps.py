"""Where the app binaries and the demo model are (shared by the CLI tests)."""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def apps_dir():
    d = os.environ.get("GRAPHRT_APPS_DIR") or os.path.join(REPO, "build", "apps")
    return d


def app(name):
    path = os.path.join(apps_dir(), name)
    if not os.path.isfile(path):
        pytest.skip("%s not built (set GRAPHRT_APPS_DIR; looked in %s)" % (name, apps_dir()))
    return path


def demo_dir():
    return os.environ.get("GRAPHRT_DEMO_DIR") or os.path.join(os.path.dirname(apps_dir()), "examples", "demo_mlp")


def run(args, **kw):
    """Runs an app, capturing its output as text."""
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def one_line_error(p, prog):
    """The app failed with exactly one line, `PROG: error: ...`; returns it."""
    assert p.returncode != 0, p.stdout
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(prog + ": error:"), lines[0]
    return lines[0]
