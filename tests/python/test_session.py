"""graphrt.Session / Model / Runner (the session layer through graphrt_model_* and graphrt_runner_*):
metadata against the cases' own files (case.json, the .npy inputs), outputs against TVM's."""
import json
import os

import numpy as np
import pytest

import graphrt
from _cases import case_dir


def _case_json(d):
    with open(os.path.join(d, "case.json")) as f:
        return json.load(f)


def test_graph_one_and_three_file_forms(lib_ok):
    d = case_dir("mlp")
    x = np.load(os.path.join(d, "input_data.npy"))
    want = np.load(os.path.join(d, "output_0.npy"))
    params = graphrt.load_param_dict_from_file(os.path.join(d, "deploy_params.params"))
    session = graphrt.Session(graphrt.cpu(0))
    for model in (session.load(os.path.join(d, "deploy_factory.so")),
                  session.load(os.path.join(d, "deploy_lib.so"), graph_json=os.path.join(d, "deploy_graph.json"),
                               params=os.path.join(d, "deploy_params.params"))):
        assert model.kind == "graph" and model.functions == ["default"]
        (data,) = model.inputs()
        assert (data.name, data.dtype, data.shape, data.known, data.symbols) == \
            ("data", str(x.dtype), x.shape, True, None)
        (out,) = model.outputs()
        assert out.shape == want.shape and out.dtype == str(want.dtype)
        assert sorted(model.params) == sorted(params)
        runner = model.runner()
        y = runner(data=x)
        assert len(y) == 1 and np.array_equal(y[0].numpy(), want)
        second = model.runner()  # a new executor sharing the params
        second.set_input("data", x, zero_copy=True)
        second.run()
        assert np.array_equal(second.get_output(0).numpy(), want)


@pytest.mark.parametrize("abi", ["relax", "relax-ffi"])
def test_relax_inputs_are_what_the_code_checks(lib_ok, abi):
    d = case_dir(abi + "/relax_dynamic_batch")
    c = _case_json(d)
    x5, x1 = np.load(os.path.join(d, "input_x.npy")), np.load(os.path.join(d, "input_x_n1.npy"))
    model = graphrt.Session().load(os.path.join(d, "deploy_relax.so"))
    assert model.kind == "relax" and c["entry"] in model.functions
    (x,) = model.inputs(c["entry"])
    assert x.name == "x" and x.known and x.dtype == c["inputs"]["x"]["dtype"]
    assert x5.shape[0] != x1.shape[0]  # the batch varies between the case's sets: symbolic
    assert x.shape == (-1, x5.shape[1]) and x.symbols[0] >= 0 and x.symbols[1] == -1
    assert model.outputs() == []  # known after a run
    runner = model.runner()
    for inp, out in ((x5, "output_0.npy"), (x1, "output_0_n1.npy")):
        (y,) = runner(x=inp)
        assert np.array_equal(y.numpy(), np.load(os.path.join(d, out)))
    with pytest.raises(graphrt.NotFoundError, match=r"has no parameter 'y' \(parameters: x\)"):
        runner.set_input("y", x5)


def test_relax_weights_passed_as_arguments_are_not_known(lib_ok):
    d = case_dir("relax/relax_params_as_args")
    c = _case_json(d)
    inputs = graphrt.Session().load(os.path.join(d, "deploy_relax.so")).inputs()
    assert [i.name for i in inputs] == c["input_order"]
    known = {i.name: i for i in inputs if i.known}
    assert "x" in known and known["x"].shape == tuple(c["inputs"]["x"]["shape"])


def test_mistakes_keep_their_kind(lib_ok):
    d = case_dir("mlp")
    session = graphrt.Session()
    with pytest.raises(graphrt.InvalidArgumentError, match="params file"):
        session.load(os.path.join(d, "deploy_params.params"))
    model = session.load(os.path.join(d, "deploy_factory.so"))
    with pytest.raises(graphrt.NotFoundError, match="functions: default"):
        model.runner("main")
    runner = model.runner()
    with pytest.raises(graphrt.NotFoundError, match=r"unknown input 'nope' \(data inputs: data; params: p0"):
        runner.set_input("nope", np.zeros((1,), "float32"))
    with pytest.raises(graphrt.OutOfRangeError):
        runner.get_output(5)
