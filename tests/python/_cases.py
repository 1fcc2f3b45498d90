"""TVM fixture cases shared by tests/python and tests/apps."""
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fixtures_dir():
    d = os.environ.get("GRAPHRT_FIXTURES") or os.path.join(os.path.dirname(REPO), "shared", "fixtures")
    return d if os.path.isdir(d) else None


def fixtures_required():
    """In CI (CI=true, or GRAPHRT_REQUIRE_FIXTURES=1 set by the CMake option of that name) a missing
    fixture fails the test: a run without fixtures must not pass as a run with them."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_FIXTURES") == "1"


def skip_without_fixtures(what):
    """Skips the calling test (fails it where fixtures are required) because `what` is absent."""
    import pytest
    why = "%s not found (set GRAPHRT_FIXTURES or provide ../shared/fixtures)" % what
    if fixtures_required():
        pytest.fail(why + "; fixtures are required in CI", pytrace=False)
    pytest.skip(why)


def case_dir(name):
    """The fixture folder of case `name`; skips (fails in CI) when it is absent."""
    d = fixtures_dir()
    if not d or not os.path.isdir(os.path.join(d, name)):
        skip_without_fixtures("%s fixture" % name)
    return os.path.join(d, name)


def _case_infos():
    d = fixtures_dir()
    if not d:
        return []
    out = []
    for name in sorted(os.listdir(d)):
        case = os.path.join(d, name, "case.json")
        if not os.path.isfile(case):
            continue
        with open(case) as f:
            out.append((name, json.load(f)))
    return out


def cpu_cases():
    """CPU cases in the .so forms (one-file factory and three-file)."""
    return [name for name, info in _case_infos()
            if "cuda" not in info.get("target", "") and name != "mlp_cuda" and "tar_members" not in info]


def tar_cases():
    """Cases exported by TVM as deploy.tar (objects linked at load), with the .so of the same build."""
    return [name for name, info in _case_infos() if "tar_members" in info]


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
