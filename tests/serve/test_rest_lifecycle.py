"""The server's life around inference: the repository extension (index, load, unload, reload
under load), models that fail to load, metrics (checked by promtool), the command line, and
a graceful stop on SIGTERM that answers the request in flight."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

from _client import decode_response, json_request
from _server import Server, add_model, fixture_root, require_module, serve_binary


@pytest.fixture
def mlp_repo(tmp_path):
    require_module("requests")
    root = fixture_root()
    repo = tmp_path / "repo"
    add_model(str(repo), "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    add_model(str(repo), "multi_io", {"deploy_factory.so": os.path.join(root, "multi_io", "deploy_factory.so")})
    return str(repo)


@pytest.fixture
def mlp_input():
    return np.load(os.path.join(fixture_root(), "mlp", "input_data.npy"))


def test_repository_index_load_unload(mlp_repo, mlp_input):
    import requests
    with Server(mlp_repo, "--model-control-mode", "explicit", "--load-model", "*") as s:
        index = requests.post(s.url + "/v2/repository/index").json()
        assert index == [{"name": "mlp", "version": "1", "state": "READY", "reason": ""},
                         {"name": "multi_io", "version": "1", "state": "READY", "reason": ""}]
        assert requests.post(s.url + "/v2/repository/models/mlp/unload").status_code == 200
        r = requests.post(s.url + "/v2/models/mlp/infer", data=json_request({"data": mlp_input}))
        assert r.status_code == 503 and "not ready" in r.json()["error"], r.text
        assert requests.get(s.url + "/v2/models/mlp/ready").status_code == 503
        index = requests.post(s.url + "/v2/repository/index", data=json.dumps({"ready": True})).json()
        assert [e["name"] for e in index] == ["multi_io"]
        index = requests.post(s.url + "/v2/repository/index", data=json.dumps({"ready": False})).json()
        assert {"name": "mlp", "state": "UNAVAILABLE", "reason": "unloaded"} in index
        # An unloaded model was asked for: the server as a whole stays ready.
        assert requests.get(s.url + "/v2/health/ready").status_code == 200
        assert requests.post(s.url + "/v2/repository/models/mlp/load").status_code == 200
        r = requests.post(s.url + "/v2/models/mlp/infer", data=json_request({"data": mlp_input}))
        assert r.status_code == 200, r.text
        # Unknown models, overrides the server does not do, and malformed bodies.
        r = requests.post(s.url + "/v2/repository/models/nope/load")
        assert r.status_code == 404 and "nope" in r.json()["error"]
        r = requests.post(s.url + "/v2/repository/models/nope/unload")
        assert r.status_code == 404
        r = requests.post(s.url + "/v2/repository/models/mlp/load", data=json.dumps({"parameters": {"config": "{}"}}))
        assert r.status_code == 400 and "config" in r.json()["error"]
        r = requests.post(s.url + "/v2/repository/index", data="{nope")
        assert r.status_code == 400
        # A model folder added after start is listed and loads; a broken one reports why.
        shutil.copytree(os.path.join(mlp_repo, "mlp"), os.path.join(mlp_repo, "mlp_copy"), symlinks=True)
        listed = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index").json()}
        assert listed["mlp_copy"]["state"] == "UNAVAILABLE", listed
        assert listed["mlp_copy"]["reason"].startswith("not loaded (explicit model control: POST "
                                                       "/v2/repository/models/mlp_copy/load"), listed
        assert requests.post(s.url + "/v2/repository/models/mlp_copy/load").status_code == 200
        os.makedirs(os.path.join(mlp_repo, "broken", "1"))
        with open(os.path.join(mlp_repo, "broken", "1", "model.so"), "w") as f:
            f.write("not a library")
        r = requests.post(s.url + "/v2/repository/models/broken/load")
        assert r.status_code in (400, 404) and "broken" in r.json()["error"], r.text
        assert requests.get(s.url + "/v2/health/ready").status_code == 200
        assert s.stop() == 0


def test_reload_under_load_drops_nothing(mlp_repo, mlp_input):
    import requests
    with Server(mlp_repo, "--model-control-mode", "explicit", "--load-model", "*") as s:
        body = json_request({"data": mlp_input})
        failures, done = [], []
        stop = threading.Event()

        def client():
            session = requests.Session()
            while not stop.is_set():
                r = session.post(s.url + "/v2/models/mlp/infer", data=body)
                (done if r.status_code == 200 else failures).append(r.status_code)

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for _ in range(5):
                assert requests.post(s.url + "/v2/repository/models/mlp/load").status_code == 200
                time.sleep(0.05)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        assert not failures, failures[:5]
        assert len(done) > 10
        assert s.stop() == 0


def test_model_that_fails_to_load(mlp_repo):
    import requests
    os.makedirs(os.path.join(mlp_repo, "broken", "1"))
    with open(os.path.join(mlp_repo, "broken", "1", "model.so"), "w") as f:
        f.write("not a library")
    os.makedirs(os.path.join(mlp_repo, "empty"))
    with Server(mlp_repo) as s:
        assert requests.get(s.url + "/v2/health/live").status_code == 200
        r = requests.get(s.url + "/v2/health/ready")
        assert r.status_code == 503 and r.json() == {"ready": False}
        r = requests.post(s.url + "/v2/models/broken/infer", data="{}")
        assert r.status_code == 503 and "broken" in r.json()["error"]
        index = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index").json()}
        assert index["broken"]["state"] == "UNAVAILABLE" and index["broken"]["reason"]
        assert "no version folder" in index["empty"]["reason"]
        assert index["mlp"]["state"] == "READY"
        assert s.stop() == 0
    assert any("broken" in l for l in s.stderr_text)


def test_metrics_count_and_pass_promtool(mlp_repo, mlp_input):
    import requests
    with Server(mlp_repo) as s:
        for _ in range(3):
            assert requests.post(s.url + "/v2/models/mlp/infer", data=json_request({"data": mlp_input})).ok
        for _ in range(2):
            assert requests.post(s.url + "/v2/models/mlp/infer", data="{bad").status_code == 400
        page = requests.get("http://127.0.0.1:%d/metrics" % s.metrics_port)
        assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/plain")
        values = {}
        for line in page.text.splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                values[key] = float(value)
        label = '{model="mlp",version="1"}'
        assert values["graphrt_inference_request_success_total" + label] == 3
        assert values["graphrt_inference_request_failure_total" + label] == 2
        assert values["graphrt_inference_count_total" + label] == 3
        assert values["graphrt_inference_exec_count_total" + label] == 3
        assert values["graphrt_inference_compute_infer_duration_seconds_total" + label] > 0
        assert values["graphrt_inference_request_duration_seconds_total" + label] >= \
            values["graphrt_inference_compute_infer_duration_seconds_total" + label]
        assert values['graphrt_inference_request_success_total{model="multi_io",version="1"}'] == 0
        promtool = shutil.which("promtool")
        if promtool is None:
            pytest.skip("promtool missing (apt-get install prometheus; scripts/setup.sh installs it)")
        p = subprocess.run([promtool, "check", "metrics"], input=page.text, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr
        assert s.stop() == 0


def test_sigterm_answers_the_request_in_flight(mlp_repo, mlp_input):
    with Server(mlp_repo) as s:
        body = json_request({"data": mlp_input}, id="last")
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        sock.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
        sock.sendall(body[:1000])
        time.sleep(0.3)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert s.proc.poll() is None, "exited with a request in flight"
        sock.sendall(body[1000:])
        data = b""
        while b'"id":"last"' not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data[:200]
        sock.close()
        assert s.stop() == 0
        out = "\n".join(s.stdout_lines)
        assert "draining" in out and "stopped" in out


def test_command_line(tmp_path):
    exe = serve_binary()
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "--model-repository" in p.stdout and "--metrics-port" in p.stdout
    assert "--params-cache DIR" in p.stdout
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.startswith("graphrt-serve ")
    p = subprocess.run([exe], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--model-repository" in p.stderr
    p = subprocess.run([exe, "--model-repository", str(tmp_path), "--http-port", "70000"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2 and "--http-port" in p.stderr
    p = subprocess.run([exe, "--model-repository", str(tmp_path / "missing"), "--http-port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "missing" in p.stderr
    # A port already taken is one error line, not a hang.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    p = subprocess.run([exe, "--model-repository", str(tmp_path), "--host", "127.0.0.1", "--http-port", str(port)],
                       capture_output=True, text=True, timeout=30)
    busy.close()
    assert p.returncode == 1 and "port" in p.stderr, p.stderr
