"""pytest fixtures over the TVM fixture cases, shared by the conftests of tests/python and
tests/apps (each imports them and defines `case_prerequisites`, what a case test needs first)."""
import pytest

from _cases import Case, case_dir, cpu_cases, skip_without_fixtures, tar_cases


def pytest_generate_tests(metafunc):
    for fixture, names in (("case", cpu_cases), ("tar_case", tar_cases)):
        if fixture in metafunc.fixturenames:
            found = names()
            metafunc.parametrize(fixture, found if found else [None], ids=found if found else ["no-fixtures"],
                                 indirect=True)


@pytest.fixture
def case(request, case_prerequisites):
    if request.param is None:
        skip_without_fixtures("TVM fixtures")
    return Case(request.param)


@pytest.fixture
def tar_case(request, case_prerequisites):
    if request.param is None:
        skip_without_fixtures("TVM .tar fixtures")
    return Case(request.param)


@pytest.fixture
def mlp(case_prerequisites):
    case_dir("mlp")
    return Case("mlp")
