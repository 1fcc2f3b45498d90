"""Requests go to the worker that went idle last: a light load stays on one or two of the
--http-threads workers instead of waking each in turn, so the per-thread state a request leaves
(malloc arenas, kernels' workspace pools) exists for those few. Observed through the kernel's
count of each thread's runs on a CPU (/proc/PID/task/TID/schedstat): a thread that never wakes
does not run."""
import json
import os
import socket

import numpy as np

from _client import json_request
from _server import Server, add_model, fixture_root
from test_rest_slow_clients import read_response

HTTP_THREADS = 32
REQUESTS = 64


def runs_per_thread(pid):
    runs = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                runs[tid] = int(f.read().split()[2])
        except OSError:  # a thread that ended meanwhile
            pass
    return runs


def test_sequential_requests_wake_few_workers(tmp_path):
    root = fixture_root()
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    x = np.load(os.path.join(root, "mlp", "input_data.npy"))
    want = np.load(os.path.join(root, "mlp", "output_0.npy"))
    body = json_request({"data": x})
    body = body.encode() if isinstance(body, str) else body
    request = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    with Server(repo, "--http-threads", str(HTTP_THREADS)) as server:
        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
        s.sendall(request)  # the first request: whatever start-up work a thread has is done
        status, _, payload = read_response(s)
        assert status == 200, payload
        before = runs_per_thread(server.proc.pid)
        for _ in range(REQUESTS):
            s.sendall(request)
            status, _, payload = read_response(s)
            assert status == 200, payload
        after = runs_per_thread(server.proc.pid)
        s.close()
    got = np.array(json.loads(payload)["outputs"][0]["data"], dtype=np.float32).reshape(want.shape)
    np.testing.assert_array_equal(got, want)
    woken = sorted(after[t] - before[t] for t in before if t in after and after[t] > before[t])
    # The reactor and a few workers run for every request (a worker that has not yet gone idle
    # when the next request arrives, which a loaded machine makes likelier, leaves it to
    # another), the gRPC and metrics threads now and then: 6-8 here. Workers woken in turn would
    # add all HTTP_THREADS (32) of them.
    assert len(woken) <= 14, "threads that ran during %d sequential requests: %s" % (REQUESTS, woken)
