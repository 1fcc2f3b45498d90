"""CLI tests: app binaries from GRAPHRT_APPS_DIR (else <repo>/build/apps), the demo model from
GRAPHRT_DEMO_DIR (else <dir of apps>/../examples/demo_mlp), fixtures from GRAPHRT_FIXTURES (missing
ones fail instead of skipping in CI: CI=true or GRAPHRT_REQUIRE_FIXTURES=1)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))  # Case helpers
sys.path.insert(0, os.path.join(REPO, "python"))

sys.path.insert(0, HERE)
from _apps import demo_dir  # noqa: E402
from _case_fixtures import case, mlp, pytest_generate_tests, tar_case  # noqa: E402,F401  (tests/python)


@pytest.fixture
def case_prerequisites():
    return None


@pytest.fixture
def demo():
    d = demo_dir()
    if not os.path.isfile(os.path.join(d, "demo_mlp.so")):
        pytest.skip("demo_mlp.so not built (set GRAPHRT_DEMO_DIR; looked in %s)" % d)
    return d
