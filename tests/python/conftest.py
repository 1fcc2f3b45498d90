"""Shared fixtures of the Python tests: the graphrt package (from <repo>/python), libgraphrt
(GRAPHRT_LIBRARY_PATH or the build tree) and the TVM fixture cases (GRAPHRT_FIXTURES or
<repo>/../shared/fixtures). Everything skips with a message when absent; missing fixtures fail
instead in CI (CI=true or GRAPHRT_REQUIRE_FIXTURES=1)."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import graphrt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _case_fixtures import case, mlp, pytest_generate_tests, tar_case  # noqa: E402,F401
from _cases import fixtures_dir, skip_without_fixtures  # noqa: E402


@pytest.fixture(scope="session")
def lib_ok():
    try:
        graphrt.version()
    except graphrt.GraphrtError as e:
        pytest.skip("libgraphrt not available: %s" % e)
    return True


@pytest.fixture
def case_prerequisites(lib_ok):
    return lib_ok


@pytest.fixture(scope="module")
def mlc_package(lib_ok):
    """The MLC-LLM model folder fixture mlc/tiny_gpt2_chat: (its folder, its case.json)."""
    folder = os.path.join(fixtures_dir() or "", "mlc", "tiny_gpt2_chat")
    if not fixtures_dir() or not os.path.isfile(os.path.join(folder, "case.json")):
        skip_without_fixtures("mlc/tiny_gpt2_chat")
    with open(os.path.join(folder, "case.json")) as f:
        return folder, json.load(f)
