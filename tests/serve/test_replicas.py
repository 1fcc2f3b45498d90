"""Scale-out with existing engines, on loopback and bounded in time: three graphrt-serve
replicas behind HAProxy (REST, health checks on /v2/health/ready) under wrk load, one replica
killed mid-run: after the health-check interval no request fails, and each replica's metrics
show its share. gRPC through nginx's grpc_pass to the same replicas, before and after a kill.
The configurations are apps/serve/deploy/haproxy.cfg and nginx.conf, with ports filled in."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import numpy as np
import pytest

from _client import assert_bit_identical, json_request
from _grpc_stubs import stubs
from _server import REPO, Server, add_model, fixture_root, require_module

DEPLOY = os.path.join(REPO, "apps", "serve", "deploy")


def tool(name, package):
    path = shutil.which(name) or (os.path.join("/usr/sbin", name) if os.path.isfile(os.path.join("/usr/sbin", name))
                                  else None)
    if not path:
        pytest.skip("%s missing (apt-get install %s; scripts/setup.sh installs it)" % (name, package))
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fill(template, out_path, values):
    with open(os.path.join(DEPLOY, template)) as f:
        text = f.read()
    for k, v in values.items():
        text = text.replace("@%s@" % k, str(v))
    assert "@" not in re.sub(r"#.*", "", text), "unfilled placeholder in " + template
    with open(out_path, "w") as f:
        f.write(text)


def wait_port(port, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("nothing listens on %d" % port)


def metric(port, name, model="mlp"):
    import requests
    text = requests.get("http://127.0.0.1:%d/metrics" % port, timeout=10).text
    m = re.search(r'^%s\{model="%s",version="1"\} (\S+)$' % (name, model), text, re.M)
    return float(m.group(1))


def wrk(wrk_path, port, script, seconds, connections=8):
    """(requests, failed) of a wrk run: non-2xx answers plus socket errors."""
    p = subprocess.run([wrk_path, "-t2", "-c%d" % connections, "-d%ds" % seconds, "-s", script,
                        "http://127.0.0.1:%d/v2/models/mlp/infer" % port],
                       capture_output=True, text=True, timeout=seconds + 60)
    assert p.returncode == 0, p.stderr
    total = int(re.search(r"(\d+) requests in", p.stdout).group(1))
    failed = 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", p.stdout)
    if m:
        failed += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", p.stdout)
    if m:
        failed += sum(int(g) for g in m.groups())
    return total, failed, p.stdout


@pytest.fixture
def replicas(tmp_path):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    servers = [Server(repo, "--threads", "1", "--http-threads", "16") for _ in range(3)]
    yield servers
    for s in servers:
        if s.proc.poll() is None:
            s.stop()


def test_haproxy_in_front_of_three_replicas(replicas, tmp_path):
    haproxy = tool("haproxy", "haproxy")
    wrk_path = tool("wrk", "wrk")
    x = np.load(os.path.join(fixture_root(), "mlp", "input_data.npy"))
    body = tmp_path / "request.json"
    body.write_bytes(json_request({"data": x}))
    script = tmp_path / "post.lua"
    script.write_text('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                      'local f = io.open("%s", "rb")\nwrk.body = f:read("*a")\nf:close()\n' % body)
    front = free_port()
    cfg = str(tmp_path / "haproxy.cfg")
    fill("haproxy.cfg", cfg, {"FRONT_PORT": front, "HTTP_PORT_1": replicas[0].http_port,
                              "HTTP_PORT_2": replicas[1].http_port, "HTTP_PORT_3": replicas[2].http_port})
    proxy = subprocess.Popen([haproxy, "-f", cfg, "-db"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_port(front)
        time.sleep(1.0)  # two health checks pass (rise 2, inter 200ms) on every replica
        total, failed, out = wrk(wrk_path, front, str(script), 2)
        assert total > 0 and failed == 0, out
        shares = [metric(s.metrics_port, "graphrt_inference_request_success_total") for s in replicas]
        assert all(v > 0 for v in shares), shares
        assert sum(shares) >= total, (shares, total)
        # Kill one replica without warning, under load.
        victim = replicas[1]
        killer = subprocess.Popen(["sh", "-c", "sleep 1; kill -KILL %d" % victim.proc.pid])
        total_a, failed_a, out_a = wrk(wrk_path, front, str(script), 3)
        killer.wait(10)
        assert victim.proc.wait(10) == -signal.SIGKILL
        # After the health-check interval (fall 2 x inter 200ms) no request may fail.
        time.sleep(0.5)
        before = [metric(s.metrics_port, "graphrt_inference_request_success_total") for s in (replicas[0], replicas[2])]
        total_b, failed_b, out_b = wrk(wrk_path, front, str(script), 3)
        assert total_b > 0 and failed_b == 0, out_b
        after = [metric(s.metrics_port, "graphrt_inference_request_success_total") for s in (replicas[0], replicas[2])]
        gained = [a - b for a, b in zip(after, before)]
        assert all(g > 0 for g in gained) and sum(gained) >= total_b, (gained, total_b)
        print("haproxy: before kill %d requests; during kill %d (%d failed); after %d, shares %s"
              % (total, total_a, failed_a, total_b, gained))
    finally:
        proxy.terminate()
        proxy.wait(10)


def test_grpc_through_nginx(replicas, tmp_path):
    nginx = tool("nginx", "nginx")
    import grpc
    pb = stubs(str(tmp_path / "stubs"))
    d = os.path.join(fixture_root(), "mlp")
    x = np.load(os.path.join(d, "input_data.npy"))
    want = np.load(os.path.join(d, "output_0.npy"))
    front = free_port()
    ndir = tmp_path / "nginx"
    ndir.mkdir()
    cfg = str(ndir / "nginx.conf")
    fill("nginx.conf", cfg, {"DIR": str(ndir), "FRONT_PORT": front, "GRPC_PORT_1": replicas[0].grpc_port,
                             "GRPC_PORT_2": replicas[1].grpc_port, "GRPC_PORT_3": replicas[2].grpc_port})
    proxy = subprocess.Popen([nginx, "-c", cfg, "-p", str(ndir)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        wait_port(front)
        channel = grpc.insecure_channel("127.0.0.1:%d" % front)
        stub = pb[1].GRPCInferenceServiceStub(channel)

        def infer():
            req = pb[0].ModelInferRequest(model_name="mlp")
            req.inputs.add(name="data", datatype="FP32", shape=list(x.shape))
            req.raw_input_contents.append(x.tobytes())
            resp = stub.ModelInfer(req, timeout=30)
            return np.frombuffer(resp.raw_output_contents[0], np.float32).reshape(list(resp.outputs[0].shape))

        for _ in range(30):
            assert_bit_identical(infer(), want, "mlp through nginx")
        shares = [metric(s.metrics_port, "graphrt_inference_request_success_total") for s in replicas]
        assert all(v > 0 for v in shares), shares
        replicas[2].proc.kill()
        replicas[2].proc.wait(10)
        for _ in range(30):
            assert_bit_identical(infer(), want, "mlp through nginx, one replica killed")
        assert stub.ServerReady(pb[0].ServerReadyRequest(), timeout=30).ready
        channel.close()
    finally:
        proxy.terminate()
        proxy.wait(10)
