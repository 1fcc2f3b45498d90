"""gRPC: inference.GRPCInferenceService with grpcio clients generated from the server's .proto,
on every shared CPU graph fixture and Relax fixture (raw and typed contents; outputs
bit-identical to graphrt-run's), error codes from graphrt's error kinds, grpc.health.v1."""
import json
import os
import signal
import time

import numpy as np
import pytest

from _client import DTYPES, NP_OF, assert_bit_identical, reference_outputs
from _grpc_stubs import stubs
from _server import Server, add_model, fixture_root, fixtures_dir, graph_cases, relax_cases, relax_case_dir, relax_config, \
    relax_dynamic_batch, require_module


@pytest.fixture(scope="module")
def pb(tmp_path_factory):
    return stubs(str(tmp_path_factory.mktemp("stubs")))


@pytest.fixture(scope="module")
def served(tmp_path_factory, pb):
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    for name, model in graph_cases():
        add_model(repo, name, {model: os.path.join(root, name, model)})
    for name in relax_cases():
        d = relax_case_dir(name)
        with open(os.path.join(d, "case.json")) as f:
            info = json.load(f)
        add_model(repo, name, {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=relax_config(info))
    server = Server(repo, "--threads", "2")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def stub(served, pb):
    import grpc
    channel = grpc.insecure_channel("127.0.0.1:%d" % served.grpc_port)
    yield pb[1].GRPCInferenceServiceStub(channel)
    channel.close()


def infer_request(pb, model, inputs, raw=True, outputs=None, request_id=""):
    req = pb[0].ModelInferRequest(model_name=model, id=request_id)
    for name, arr in inputs.items():
        t = req.inputs.add(name=name, datatype=DTYPES[str(arr.dtype)], shape=list(arr.shape))
        if raw:
            req.raw_input_contents.append(np.ascontiguousarray(arr).tobytes())
        elif arr.dtype == np.float32:
            t.contents.fp32_contents.extend(arr.flatten().tolist())
        elif arr.dtype == np.int32:
            t.contents.int_contents.extend(arr.flatten().tolist())
        else:
            raise AssertionError("no typed field in this test for %s" % arr.dtype)
    for o in outputs or []:
        req.outputs.add(name=o)
    return req


def outputs_of(resp):
    out = {}
    for i, o in enumerate(resp.outputs):
        out[o.name] = np.frombuffer(resp.raw_output_contents[i], dtype=np.dtype(NP_OF[o.datatype])).reshape(
            list(o.shape))
    return out


def _case(d, suffix=""):
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    order = info.get("input_order") or list(info["inputs"])
    paths = {k: os.path.join(d, "input_%s%s.npy" % (k, suffix)) for k in order}
    return info, paths, {k: np.load(p) for k, p in paths.items()}


def _check(pb, stub, model, inputs, want):
    for raw in (True, False):
        resp = stub.ModelInfer(infer_request(pb, model, inputs, raw=raw, request_id="g1"), timeout=60)
        assert resp.model_name == model and resp.id == "g1"
        got = outputs_of(resp)
        assert list(got) == ["output_%d" % i for i in range(len(want))]
        for i, w in enumerate(want):
            assert_bit_identical(got["output_%d" % i], w, "%s gRPC %s output_%d" % (model, "raw" if raw else "typed", i))


@pytest.mark.parametrize("name", [n for n, _ in graph_cases()] or ["no-fixtures"])
def test_graph_fixture(pb, stub, name, tmp_path):
    if name == "no-fixtures":
        fixture_root()
    d = os.path.join(fixtures_dir(), name)
    info, paths, inputs = _case(d)
    want = reference_outputs(os.path.join(d, dict(graph_cases())[name]), paths, str(tmp_path))
    _check(pb, stub, name, inputs, want)


@pytest.mark.parametrize("name", relax_cases() or ["no-fixtures"])
def test_relax_fixture(pb, stub, name, tmp_path):
    if name == "no-fixtures":
        fixture_root()
    d = relax_case_dir(name)
    info, paths, inputs = _case(d)
    want = reference_outputs(os.path.join(d, "deploy_relax.so"), paths, str(tmp_path), info.get("entry"))
    _check(pb, stub, name, inputs, want)


def test_metadata_and_health(pb, stub, served):
    import grpc
    assert stub.ServerLive(pb[0].ServerLiveRequest()).live
    assert stub.ServerReady(pb[0].ServerReadyRequest()).ready
    meta = stub.ServerMetadata(pb[0].ServerMetadataRequest())
    assert meta.name == "graphrt-serve" and meta.version
    assert list(meta.extensions) == ["binary_tensor_data", "model_repository"]
    assert stub.ModelReady(pb[0].ModelReadyRequest(name="mlp")).ready
    m = stub.ModelMetadata(pb[0].ModelMetadataRequest(name="multi_io", version="1"))
    assert m.name == "multi_io" and list(m.versions) == ["1"] and m.platform == "tvm_graph"
    assert [(t.name, t.datatype) for t in m.inputs][1][1] == "INT32"
    assert [t.name for t in m.outputs] == ["output_0", "output_1", "output_2"]
    m = stub.ModelMetadata(pb[0].ModelMetadataRequest(name="mlp"))
    assert list(m.inputs[0].shape) == [1, 1, 28, 28]
    channel = grpc.insecure_channel("127.0.0.1:%d" % served.grpc_port)
    health = pb[3].HealthStub(channel)
    for service in ("", "inference.GRPCInferenceService"):
        assert health.Check(pb[2].HealthCheckRequest(service=service)).status == pb[2].HealthCheckResponse.SERVING
    code, msg = _code(lambda: health.Check(pb[2].HealthCheckRequest(service="nope")))
    assert code == grpc.StatusCode.NOT_FOUND and "nope" in msg
    # Watch: the status at once; an unknown service is SERVICE_UNKNOWN, and the call stays open.
    for service, want in (("", pb[2].HealthCheckResponse.SERVING),
                          ("nope", pb[2].HealthCheckResponse.SERVICE_UNKNOWN)):
        watch = health.Watch(pb[2].HealthCheckRequest(service=service), timeout=30)
        assert next(watch).status == want
        watch.cancel()
    channel.close()


def _code(call):
    import grpc
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


def test_error_codes(pb, stub):
    import grpc
    x = np.load(os.path.join(fixtures_dir(), "mlp", "input_data.npy"))
    code, msg = _code(lambda: stub.ModelInfer(infer_request(pb, "nope", {"data": x})))
    assert code == grpc.StatusCode.NOT_FOUND and "model: nope" in msg
    code, msg = _code(lambda: stub.ModelMetadata(pb[0].ModelMetadataRequest(name="mlp", version="9")))
    assert code == grpc.StatusCode.NOT_FOUND
    code, msg = _code(lambda: stub.ModelReady(pb[0].ModelReadyRequest(name="nope")))
    assert code == grpc.StatusCode.NOT_FOUND
    code, msg = _code(lambda: stub.ModelInfer(infer_request(pb, "mlp", {"data": x.reshape(1, 784)})))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "field: shape" in msg and "model: mlp" in msg, msg
    req = infer_request(pb, "mlp", {"data": x})
    req.raw_input_contents[0] = req.raw_input_contents[0][:-4]
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "field: data" in msg, msg
    req = infer_request(pb, "mlp", {"data": x})
    req.raw_input_contents.append(b"extra")
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "raw_input_contents" in msg, msg
    req = infer_request(pb, "mlp", {"data": x}, raw=False)
    req.inputs[0].contents.int_contents.append(1)
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "field: contents" in msg, msg
    req = infer_request(pb, "mlp", {"data": x})
    req.inputs[0].shape[0] = -1
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "negative" in msg, msg
    req = infer_request(pb, "mlp", {"data": x})
    req.inputs[0].shape[:] = [2 ** 62, 2 ** 62]
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "overflows" in msg, msg
    req = infer_request(pb, "mlp", {"data": x}, outputs=["output_7"])
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "output_7" in msg, msg
    req = pb[0].ModelInferRequest(model_name="mlp")
    req.inputs.add(name="data", datatype="FP16", shape=[1]).contents.fp32_contents.append(1.0)
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "raw_input_contents" in msg, msg
    req = infer_request(pb, "multi_io", {"x": np.zeros((1, 8), np.float32)})
    code, msg = _code(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, msg
    # The server still answers.
    assert stub.ModelInfer(infer_request(pb, "mlp", {"data": x})).model_name == "mlp"


def test_unavailable_and_not_serving(pb, tmp_path):
    import grpc
    require_module("requests")
    import requests
    root = fixture_root()
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    os.makedirs(os.path.join(repo, "broken", "1"))
    with open(os.path.join(repo, "broken", "1", "m.so"), "w") as f:
        f.write("junk")
    with Server(repo, "--model-control-mode", "explicit", "--load-model", "*") as s:
        channel = grpc.insecure_channel("127.0.0.1:%d" % s.grpc_port)
        stub = pb[1].GRPCInferenceServiceStub(channel)
        health = pb[3].HealthStub(channel)
        assert not stub.ServerReady(pb[0].ServerReadyRequest()).ready
        assert health.Check(pb[2].HealthCheckRequest()).status == pb[2].HealthCheckResponse.NOT_SERVING
        watch = health.Watch(pb[2].HealthCheckRequest(service="inference.GRPCInferenceService"), timeout=60)
        assert next(watch).status == pb[2].HealthCheckResponse.NOT_SERVING
        x = np.load(os.path.join(root, "mlp", "input_data.npy"))
        code, msg = _code(lambda: stub.ModelInfer(infer_request(pb, "broken", {"data": x})))
        assert code == grpc.StatusCode.UNAVAILABLE and "broken" in msg
        assert not stub.ModelReady(pb[0].ModelReadyRequest(name="broken")).ready
        # Unloading the broken model over REST makes the server ready; health follows.
        assert requests.post(s.url + "/v2/repository/models/broken/unload").status_code == 200
        for _ in range(50):
            if health.Check(pb[2].HealthCheckRequest()).status == pb[2].HealthCheckResponse.SERVING:
                break
            time.sleep(0.1)
        assert health.Check(pb[2].HealthCheckRequest()).status == pb[2].HealthCheckResponse.SERVING
        assert next(watch).status == pb[2].HealthCheckResponse.SERVING  # the change, on the open Watch
        # SIGTERM: the watcher sees NOT_SERVING, then its call ends; the open call does not hold
        # the shutdown back.
        started = time.monotonic()
        assert s.stop() == 0
        assert time.monotonic() - started < 10
        seen = []
        try:
            for m in watch:
                seen.append(m.status)
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        assert seen == [pb[2].HealthCheckResponse.NOT_SERVING]
        channel.close()


def test_sigterm_answers_the_call_in_flight(pb, tmp_path):
    """A call waiting in a batch when SIGTERM comes is answered, then the server exits 0."""
    import grpc
    model, config, d = relax_dynamic_batch()
    repo = str(tmp_path / "repo")
    add_model(repo, "slow", model, config=dict(config, max_batch_size=8, max_queue_delay_us=1500000))
    x = np.load(os.path.join(d, "input_x.npy"))[:1]
    with Server(repo) as s:
        channel = grpc.insecure_channel("127.0.0.1:%d" % s.grpc_port)
        stub = pb[1].GRPCInferenceServiceStub(channel)
        future = stub.ModelInfer.future(infer_request(pb, "slow", {"x": x}), timeout=60)
        time.sleep(0.5)  # the call waits for its batch (1.5 s)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert s.proc.poll() is None, "exited with a call in flight"
        assert future.result().model_name == "slow"
        channel.close()
        assert s.stop() == 0
