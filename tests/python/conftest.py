"""Shared fixtures of the Python tests: the graphrt package (from <repo>/python), libgraphrt
(GRAPHRT_LIBRARY_PATH or the build tree) and the TVM fixture cases (GRAPHRT_FIXTURES or
<repo>/../shared/fixtures). Everything skips with a message when absent."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import graphrt  # noqa: E402


def fixtures_dir():
    d = os.environ.get("GRAPHRT_FIXTURES") or os.path.join(os.path.dirname(REPO), "shared", "fixtures")
    return d if os.path.isdir(d) else None


def cpu_cases():
    d = fixtures_dir()
    if not d:
        return []
    out = []
    for name in sorted(os.listdir(d)):
        case = os.path.join(d, name, "case.json")
        if not os.path.isfile(case):
            continue
        with open(case) as f:
            info = json.load(f)
        if "cuda" in info.get("target", "") or name == "mlp_cuda":
            continue
        out.append(name)
    return out


@pytest.fixture(scope="session")
def lib_ok():
    try:
        graphrt.version()
    except graphrt.GraphrtError as e:
        pytest.skip("libgraphrt not available: %s" % e)
    return True


class Case:
    def __init__(self, name):
        self.name = name
        self.dir = os.path.join(fixtures_dir(), name)
        with open(os.path.join(self.dir, "case.json")) as f:
            self.info = json.load(f)
        self.tolerance = float(self.info.get("tolerance", 0.0))

    def path(self, f):
        return os.path.join(self.dir, f)

    def inputs(self):
        import numpy as np
        return {k: np.load(self.path("input_%s.npy" % k)) for k in self.info["inputs"]}

    def expected(self):
        import numpy as np
        return [np.load(self.path("output_%d.npy" % i)) for i in range(len(self.info["outputs"]))]

    def check(self, got, i):
        import numpy as np
        exp = self.expected()[i]
        assert got.shape == exp.shape and got.dtype == exp.dtype, (got.shape, got.dtype, exp.shape, exp.dtype)
        if self.tolerance == 0:
            assert np.array_equal(got, exp), "%s output %d differs" % (self.name, i)
        else:
            assert np.allclose(got, exp, rtol=self.tolerance, atol=self.tolerance)


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        names = cpu_cases()
        metafunc.parametrize("case", names if names else [None], ids=names if names else ["no-fixtures"], indirect=True)


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
