"""CLI tests: app binaries from GRAPHRT_APPS_DIR (else <repo>/build/apps), the demo model from
GRAPHRT_DEMO_DIR (else <dir of apps>/../examples/demo_mlp), fixtures from GRAPHRT_FIXTURES."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))  # Case helpers
sys.path.insert(0, os.path.join(REPO, "python"))

sys.path.insert(0, HERE)
from _apps import demo_dir  # noqa: E402
from _cases import Case, cpu_cases, fixtures_dir, tar_cases  # noqa: E402,F401  (tests/python/_cases.py)


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        names = cpu_cases()
        metafunc.parametrize("case", names if names else [None], ids=names if names else ["no-fixtures"],
                             indirect=True)
    if "tar_case" in metafunc.fixturenames:
        names = tar_cases()
        metafunc.parametrize("tar_case", names if names else [None], ids=names if names else ["no-fixtures"],
                             indirect=True)


@pytest.fixture
def tar_case(request):
    if request.param is None:
        pytest.skip("TVM .tar fixtures not found (set GRAPHRT_FIXTURES or provide ../shared/fixtures)")
    return Case(request.param)


@pytest.fixture
def case(request):
    if request.param is None:
        pytest.skip("TVM fixtures not found (set GRAPHRT_FIXTURES or provide ../shared/fixtures)")
    return Case(request.param)


@pytest.fixture
def mlp():
    d = fixtures_dir()
    if not d or not os.path.isdir(os.path.join(d, "mlp")):
        pytest.skip("mlp fixture not found (set GRAPHRT_FIXTURES)")
    return Case("mlp")


@pytest.fixture
def demo():
    d = demo_dir()
    if not os.path.isfile(os.path.join(d, "demo_mlp.so")):
        pytest.skip("demo_mlp.so not built (set GRAPHRT_DEMO_DIR; looked in %s)" % d)
    return d
