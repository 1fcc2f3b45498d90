"""Where the app binaries and the demo model are (shared by the CLI tests)."""
import os

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
