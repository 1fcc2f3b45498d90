"""What a new user meets in Python: paths as written in README, and errors (not garbage) when a
step is missing."""
import os

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor


@pytest.fixture
def in_mlp_dir(mlp, monkeypatch):
    monkeypatch.chdir(mlp.dir)
    return mlp


# ---- item 1 ----
def test_load_module_bare_relative_path(in_mlp_dir):
    lib = graphrt.load_module("deploy_factory.so")
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input("data", np.load("input_data.npy"))
    gmod.run()
    in_mlp_dir.check(gmod.get_output(0).numpy(), 0)


def test_load_module_bare_relative_path_elf_loader(in_mlp_dir):
    lib = graphrt.load_module("deploy_lib.so", loader="elf")
    assert lib.type_key == "library"
