"""Shared fixtures of the Python tests: the graphrt package (from <repo>/python), libgraphrt
(GRAPHRT_LIBRARY_PATH or the build tree) and the TVM fixture cases (GRAPHRT_FIXTURES or
<repo>/../shared/fixtures). Everything skips with a message when absent."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import graphrt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cases import Case, cpu_cases, fixtures_dir, tar_cases  # noqa: E402,F401


@pytest.fixture(scope="session")
def lib_ok():
    try:
        graphrt.version()
    except graphrt.GraphrtError as e:
        pytest.skip("libgraphrt not available: %s" % e)
    return True


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        names = cpu_cases()
        metafunc.parametrize("case", names if names else [None], ids=names if names else ["no-fixtures"], indirect=True)
    if "tar_case" in metafunc.fixturenames:
        names = tar_cases()
        metafunc.parametrize("tar_case", names if names else [None], ids=names if names else ["no-fixtures"],
                             indirect=True)


@pytest.fixture
def tar_case(request, lib_ok):
    if request.param is None:
        pytest.skip("TVM .tar fixtures not found (set GRAPHRT_FIXTURES or provide ../shared/fixtures)")
    return Case(request.param)


@pytest.fixture
def case(request, lib_ok):
    if request.param is None:
        pytest.skip("TVM fixtures not found (set GRAPHRT_FIXTURES or provide ../shared/fixtures)")
    return Case(request.param)


@pytest.fixture
def mlp(lib_ok):
    d = fixtures_dir()
    if not d or not os.path.isdir(os.path.join(d, "mlp")):
        pytest.skip("mlp fixture not found (set GRAPHRT_FIXTURES)")
    return Case("mlp")
