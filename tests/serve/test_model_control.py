"""Who may change what is served (--model-control-mode, Triton's meanings) and the ports a
server takes: none (the default) refuses load and unload with 403 and says how to enable them
and does not list folders planted after start; poll reloads the folder on its own; folders or
files others may write are named at load; a second server on a port in use exits 1 naming it."""
import os
import shutil
import socket
import subprocess
import time

import pytest

from _server import Server, add_model, fixture_root, require_module, serve_binary


@pytest.fixture
def mlp_repo(tmp_path):
    require_module("requests")
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(fixture_root(), "mlp", "deploy_factory.so")})
    return repo


def test_control_off_by_default(mlp_repo):
    import requests
    with Server(mlp_repo) as s:
        add_model(mlp_repo, "planted", {"deploy_factory.so": os.path.join(fixture_root(), "mlp", "deploy_factory.so")})
        for action, model in (("load", "planted"), ("unload", "mlp"), ("load", "mlp")):
            r = requests.post(s.url + "/v2/repository/models/%s/%s" % (model, action), timeout=30)
            assert r.status_code == 403, (action, r.status_code, r.text)
            msg = r.json()["error"]
            assert "--model-control-mode explicit" in msg and action in msg and model in msg, msg
        # The index answers, without the planted folder (the folder is not read after start).
        index = requests.post(s.url + "/v2/repository/index", timeout=30).json()
        assert index == [{"name": "mlp", "version": "1", "state": "READY", "reason": ""}]
        assert requests.get(s.url + "/v2/models/mlp/ready", timeout=30).status_code == 200
        assert requests.get(s.url + "/v2/models/planted/ready", timeout=30).status_code == 404
        assert s.stop() == 0


def test_poll_mode_follows_the_folder(mlp_repo):
    import requests
    with Server(mlp_repo, "--model-control-mode", "poll", "--repository-poll-secs", "1") as s:
        r = requests.post(s.url + "/v2/repository/models/mlp/unload", timeout=30)
        assert r.status_code == 403 and "poll" in r.json()["error"]
        add_model(mlp_repo, "added", {"deploy_factory.so": os.path.join(fixture_root(), "mlp", "deploy_factory.so")})
        deadline = time.monotonic() + 20
        while requests.get(s.url + "/v2/models/added/ready", timeout=30).status_code != 200:
            assert time.monotonic() < deadline, "a folder added under poll was not loaded"
            time.sleep(0.2)
        shutil.rmtree(os.path.join(mlp_repo, "added"))
        while requests.get(s.url + "/v2/models/added/ready", timeout=30).status_code == 200:
            assert time.monotonic() < deadline, "a removed folder still serves under poll"
            time.sleep(0.2)
        assert requests.get(s.url + "/v2/health/ready", timeout=30).status_code == 200
        assert s.stop() == 0
    assert any("polled: model 'added'" in l for l in s.stderr_text), s.stderr_text


def test_writable_by_others_warned(mlp_repo):
    vdir = os.path.join(mlp_repo, "mlp", "1")
    os.chmod(vdir, 0o777)
    with Server(mlp_repo) as s:
        assert s.stop() == 0
    warnings = [l for l in s.stderr_text if "writable by other users" in l]
    assert len(warnings) == 1 and vdir in warnings[0] and "'mlp'" in warnings[0], s.stderr_text
    os.chmod(vdir, 0o755)
    with Server(mlp_repo) as s:
        assert s.stop() == 0
    assert not any("writable by other users" in l for l in s.stderr_text), s.stderr_text


def test_bad_control_mode_is_a_usage_error(mlp_repo):
    p = subprocess.run([serve_binary(), "--model-repository", mlp_repo, "--model-control-mode", "open"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "none, explicit or poll" in p.stderr, p.stderr


@pytest.mark.parametrize("which", ["http", "grpc", "metrics"])
def test_port_in_use_exits_naming_it(mlp_repo, which):
    with Server(mlp_repo) as first:
        ports = {"http": "0", "grpc": "0", "metrics": "0"}
        ports[which] = str(getattr(first, which + "_port"))
        args = [serve_binary(), "--model-repository", mlp_repo, "--host", "127.0.0.1"]
        for k, v in ports.items():
            args += ["--%s-port" % k, v]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert ports[which] in p.stderr and which in p.stderr.lower() and "listening" not in p.stdout, p.stderr
        # The first server still has its port to itself.
        import requests
        assert requests.get(first.url + "/v2/health/live", timeout=30).status_code == 200
        assert first.stop() == 0


def test_device_key(tmp_path):
    """config.json's "device": a CUDA graph export runs on the GPU where the host has one (TVM's
    outputs); where it has none, the model is refused with one line naming the device and why."""
    import numpy as np
    import requests
    require_module("requests")
    from _client import decode_response, json_request
    root = fixture_root()
    d = os.path.join(root, "mlp_cuda")
    if not os.path.isdir(d):
        pytest.skip("mlp_cuda fixture missing")
    repo = str(tmp_path / "repo")
    add_model(repo, "on_cuda", {"deploy_factory.so": os.path.join(d, "deploy_factory.so")}, config={"device": "cuda"})
    add_model(repo, "cuda_on_cpu", {"deploy_factory.so": os.path.join(d, "deploy_factory.so")})
    add_model(repo, "bad_device", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")},
              config={"device": "tpu"})
    relax_dir = os.path.join(root, "relax-ffi", "relax_mlp_cuda")  # a TVM v0.26 Relax export for CUDA
    if os.path.isdir(relax_dir):
        add_model(repo, "relax_on_cuda", {"deploy_relax.so": os.path.join(relax_dir, "deploy_relax.so")},
                  config={"device": "cuda"})
    with Server(repo, "--model-control-mode", "explicit", "--load-model", "*") as s:
        index = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index", timeout=30).json()}
        assert "'tpu' is not one of cpu, cpu:0, cuda, cuda:N" in index["bad_device"]["reason"], index
        assert "field: device" in index["bad_device"]["reason"]
        # A CUDA export without the key: the server's advice, not the library's Python one.
        assert 'set "device": "cuda" in the model\'s config.json' in index["cuda_on_cpu"]["reason"], index
        if index["on_cuda"]["state"] == "READY":
            x = np.load(os.path.join(d, "input_data.npy"))
            r = requests.post(s.url + "/v2/models/on_cuda/infer", data=json_request({"data": x}), timeout=60)
            assert r.status_code == 200, r.text
            got = decode_response(r)[1]["output_0"]
            np.testing.assert_allclose(got, np.load(os.path.join(d, "output_0.npy")), rtol=1e-5, atol=1e-6)
            if "relax_on_cuda" in index:  # a Relax VM on the GPU: TVM's outputs within the case's 1e-3
                assert index["relax_on_cuda"]["state"] == "READY", index
                x = np.load(os.path.join(relax_dir, "input_x.npy"))
                r = requests.post(s.url + "/v2/models/relax_on_cuda/infer", data=json_request({"x": x}), timeout=60)
                assert r.status_code == 200, r.text
                np.testing.assert_allclose(decode_response(r)[1]["output_0"],
                                           np.load(os.path.join(relax_dir, "output_0.npy")), rtol=1e-3, atol=1e-3)
        else:
            for name in ("on_cuda", "relax_on_cuda") if "relax_on_cuda" in index else ("on_cuda",):
                reason = index[name]["reason"]
                assert "asks for device 'cuda', which this host cannot use: " in reason and "field: device" in reason, reason
                assert "\n" not in reason
        assert s.stop() == 0


def test_model_files_changed_under_the_server(tmp_path, monkeypatch):
    """Models load from a private copy: a model .so overwritten in place (same inode) does not
    reach the running code (it crashed the server), and `load` of a changed file serves the new
    file (dlopen of the same path returned the old library). The copies are unlinked once
    loaded, and their folder removed at exit."""
    import numpy as np
    import requests
    require_module("requests")
    from _client import json_request
    root = fixture_root()
    repo = tmp_path / "repo"
    (repo / "m" / "1").mkdir(parents=True)
    model = repo / "m" / "1" / "model.so"
    shutil.copyfile(os.path.join(root, "mlp", "deploy_factory.so"), str(model))
    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    x = np.load(os.path.join(root, "mlp", "input_data.npy"))
    with Server(str(repo), "--model-control-mode", "explicit", "--load-model", "*") as s:
        first = requests.post(s.url + "/v2/models/m/infer", data=json_request({"data": x}), timeout=60)
        assert first.status_code == 200, first.text
        folders = os.listdir(str(private))
        assert len(folders) == 1 and folders[0].startswith("graphrt-serve.")
        assert os.listdir(str(private / folders[0])) == []  # the copy is unlinked once loaded
        inode = model.stat().st_ino
        size = model.stat().st_size
        with open(str(model), "r+b") as f:  # in place: the same inode, every byte garbage
            f.write(os.urandom(size))
        assert model.stat().st_ino == inode
        again = requests.post(s.url + "/v2/models/m/infer", data=json_request({"data": x}), timeout=60)
        assert again.status_code == 200 and again.json()["outputs"] == first.json()["outputs"]
        # Another model written over the same path, then loaded: the new file serves.
        with open(str(model), "wb") as f:
            with open(os.path.join(root, "multi_io", "deploy_factory.so"), "rb") as g:
                f.write(g.read())
        assert requests.post(s.url + "/v2/repository/models/m/load", timeout=60).status_code == 200
        meta = requests.get(s.url + "/v2/models/m", timeout=30).json()
        assert [t["datatype"] for t in meta["inputs"]] == ["FP32", "INT32"], meta
        assert s.stop() == 0
    assert os.listdir(str(private)) == []


def test_explicit_mode_loads_what_load_model_names(tmp_path):
    """Triton's explicit mode: no model loads at start unless --load-model names it ('*': all);
    each version loaded is logged (name, version, kind, device, inputs); a Triton config.pbtxt is
    said to be unread, not silently ignored; --load-model outside explicit mode, or naming no
    folder, is a usage error."""
    import requests
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path / "repo")
    lib = os.path.join(root, "mlp", "deploy_factory.so")
    add_model(repo, "a", {"deploy_factory.so": lib})
    add_model(repo, "b", {"deploy_factory.so": lib})
    with open(os.path.join(repo, "b", "config.pbtxt"), "w") as f:
        f.write('name: "b"\nplatform: "tvm"\n')
    with Server(repo, "--model-control-mode", "explicit") as s:
        index = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index", timeout=30).json()}
        assert index["a"]["state"] != "READY" and index["b"]["state"] != "READY", index
        assert requests.get(s.url + "/v2/models/a/ready", timeout=30).status_code != 200
        assert requests.post(s.url + "/v2/repository/models/a/load", json={}, timeout=60).status_code == 200
        assert requests.get(s.url + "/v2/models/a/ready", timeout=30).status_code == 200
        assert s.stop() == 0
    log = "".join(s.stderr_text)
    assert "loaded model 'a' version 1: " in log and "on cpu; inputs: data FP32[1,1,28,28]" in log, log
    assert "model 'b' not loaded: not loaded (explicit model control: POST /v2/repository/models/b/load" in log, log
    with Server(repo, "--model-control-mode", "explicit", "--load-model", "b") as s:
        index = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index", timeout=30).json()}
        assert index["b"]["state"] == "READY" and index["a"]["state"] != "READY", index
        assert s.stop() == 0
    log = "".join(s.stderr_text)
    assert "model 'b': config.pbtxt (Triton's model configuration) is not read by graphrt-serve" in log, log
    assert "loaded model 'b' version 1" in log and "loaded model 'a'" not in log, log
    for extra, want in ((["--load-model", "a"], "--load-model applies to --model-control-mode explicit"),
                        (["--model-control-mode", "explicit", "--load-model", "zz"],
                         "--load-model 'zz': the repository has no model folder of that name")):
        p = subprocess.run([serve_binary(), "--model-repository", repo, "--http-port", "0", "--grpc-port", "-1",
                            "--metrics-port", "-1"] + extra, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and want in p.stderr, p.stderr
