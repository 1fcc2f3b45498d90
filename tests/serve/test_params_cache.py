"""--params-cache: replicas started together with one cache folder write each model's cache file
once, both map that same file (their /proc/PID/maps name it), and both answer bit-identically to
graphrt-run (which decodes its own params). A later start maps the files as they are. A Relax
executable's tensor constants go through the same cache."""
import json
import os
import time
import threading

import numpy as np
import pytest

from _client import assert_bit_identical, binary_request, decode_response, json_request, reference_outputs
from _server import Server, add_model, fixture_root, relax_config, require_module

MODELS = {  # model name in the repository: (fixture, files linked into its version folder)
    "squeezenet": ("squeezenet1.1", ("deploy_factory.so",)),
    "mlp_three_file": ("mlp", ("deploy_lib.so", "deploy_graph.json", "deploy_params.params")),
    "mlp_tar": ("mlp_tar", ("deploy.tar",)),  # linked in-process by the elf-object loader
}
CACHE_FILES = ["mlp_tar-1.params-cache", "mlp_three_file-1.params-cache", "squeezenet-1.params-cache"]


def start_together(n, *args):
    """n servers started at the same moment (each constructor waits for its listening line)."""
    servers = [None] * n
    errors = []
    barrier = threading.Barrier(n)

    def start(i):
        barrier.wait()
        try:
            servers[i] = Server(*args)
        except Exception as e:  # reported below, after the others are stopped
            errors.append(e)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    if errors:
        for s in servers:
            if s:
                s.stop()
        raise errors[0]
    return servers


def mapped_files(pid):
    with open("/proc/%d/maps" % pid) as f:
        return {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}


def infer(server, model, inputs):
    import requests
    body, headers = binary_request(inputs)
    r = requests.post("%s/v2/models/%s/infer" % (server.url, model), data=body, headers=headers, timeout=120)
    assert r.status_code == 200, r.text
    _, arrays = decode_response(r)
    return [arrays["output_%d" % i] for i in range(len(arrays))]


@pytest.fixture
def repo(tmp_path):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path / "repo")
    for name, (fixture, files) in MODELS.items():
        add_model(repo, name, {f: os.path.join(root, fixture, f) for f in files})
    return repo


def test_two_replicas_map_one_cache_file(repo, tmp_path):
    root = fixture_root()
    cache = str(tmp_path / "cache")  # the server creates it
    servers = start_together(2, repo, "--threads", "1", "--params-cache", cache)
    try:
        assert sorted(os.listdir(cache)) == CACHE_FILES
        for s in servers:
            maps = mapped_files(s.proc.pid)
            for f in CACHE_FILES:
                assert os.path.join(cache, f) in maps, "replica %d does not map %s" % (s.proc.pid, f)
        for name, (fixture, _) in MODELS.items():
            d = os.path.join(root, fixture)
            x = np.load(os.path.join(d, "input_data.npy"))
            want = reference_outputs(os.path.join(d, "deploy_factory.so"), {"data": os.path.join(d, "input_data.npy")},
                                     str(tmp_path / ("ref_" + name)))
            assert want
            for s in servers:
                got = infer(s, name, {"data": x})
                assert len(got) == len(want)
                for i, (g, w) in enumerate(zip(got, want)):
                    assert_bit_identical(g, w, "%s output %d (pid %d)" % (name, i, s.proc.pid))
    finally:
        codes = [s.stop() for s in servers]
    assert codes == [0, 0]
    for s in servers:
        s._err_thread.join(30)
    warnings = "".join("".join(s.stderr_text) for s in servers)
    assert "params cache" not in warnings, warnings

    # A later start maps the files as they are: not rewritten.
    before = {f: os.stat(os.path.join(cache, f)).st_ino for f in CACHE_FILES}
    with Server(repo, "--threads", "1", "--params-cache", cache) as s:
        infer(s, "squeezenet", {"data": np.load(os.path.join(root, "squeezenet1.1", "input_data.npy"))})
        assert s.stop() == 0
    assert {f: os.stat(os.path.join(cache, f)).st_ino for f in CACHE_FILES} == before


def test_damaged_cache_is_rewritten_with_a_warning(repo, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "squeezenet-1.params-cache").write_bytes(b"GRTPCACH" + b"\0" * 100)
    with Server(repo, "--threads", "1", "--params-cache", str(cache)) as s:
        x = np.load(os.path.join(fixture_root(), "squeezenet1.1", "input_data.npy"))
        infer(s, "squeezenet", {"data": x})
        assert s.stop() == 0
    s._err_thread.join(30)
    warnings = "".join(s.stderr_text)
    assert "warning: params cache" in warnings and "squeezenet-1.params-cache" in warnings, warnings
    assert sorted(os.listdir(str(cache))) == CACHE_FILES
    assert (cache / "squeezenet-1.params-cache").stat().st_size > 1000000


def test_stale_temporary_of_a_dead_writer_is_removed(repo, tmp_path):
    """A writer killed mid-write leaves "<cache>.tmp.XXXXXX": the next writer (under the folder's
    lock) removes it when it is a minute old, and leaves a fresh one (a writer on a file system
    without locks may still own it)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    old = cache / "squeezenet-1.params-cache.tmp.ab12CD"
    old.write_bytes(b"\0" * 4096)
    os.utime(str(old), (time.time() - 120, time.time() - 120))
    fresh = cache / "mlp_tar-1.params-cache.tmp.ef34GH"
    fresh.write_bytes(b"\0" * 10)
    with Server(repo, "--threads", "1", "--params-cache", str(cache)) as s:
        assert s.stop() == 0
    warnings = "".join(s.stderr_text)
    assert "removed '%s'" % old in warnings, warnings
    assert not old.exists() and fresh.exists()
    assert sorted(os.listdir(str(cache))) == sorted(CACHE_FILES + [fresh.name])


def test_unusable_cache_folder_is_an_error(repo, tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    import subprocess
    from _server import serve_binary
    p = subprocess.run([serve_binary(), "--model-repository", repo, "--http-port", "0", "--params-cache",
                        str(not_a_folder)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "params cache" in p.stderr and str(not_a_folder) in p.stderr, p.stderr


RELAX_MODEL = "relax_mlp"  # its weights are tensor constants of the executable (860 kB of them)


def test_two_replicas_share_a_relax_executables_constants(tmp_path):
    """A Relax executable's tensor constants come from one cache file that both replicas map; the
    answers are bit-identical to graphrt-run's and to TVM's (the fixture's outputs, tolerance 0)."""
    require_module("requests")
    d = os.path.join(fixture_root(), "relax", RELAX_MODEL)
    if not os.path.isdir(d):
        pytest.fail("fixture relax/%s missing" % RELAX_MODEL, pytrace=False)
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    assert info["tolerance"] == 0.0
    repo = str(tmp_path / "repo")
    add_model(repo, RELAX_MODEL, {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=relax_config(info))
    cache = str(tmp_path / "cache")
    cache_file = os.path.join(cache, RELAX_MODEL + "-1.params-cache")
    order = info.get("input_order") or list(info["inputs"])
    paths = {k: os.path.join(d, "input_%s.npy" % k) for k in order}
    inputs = {k: np.load(p) for k, p in paths.items()}
    want = reference_outputs(os.path.join(d, "deploy_relax.so"), paths, str(tmp_path / "ref"), info.get("entry"))
    tvm = [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(len(info["outputs"]))]
    assert len(want) == len(tvm)
    for i, (w, t) in enumerate(zip(want, tvm)):
        assert_bit_identical(w, t, "graphrt-run output %d against TVM's" % i)

    servers = start_together(2, repo, "--threads", "1", "--params-cache", cache)
    try:
        assert os.listdir(cache) == [os.path.basename(cache_file)]
        # The constants' bytes are in the file: more than the executable's 860 kB of weights.
        assert os.path.getsize(cache_file) > 800000
        for s in servers:
            assert cache_file in mapped_files(s.proc.pid), "replica %d does not map %s" % (s.proc.pid, cache_file)
            for _ in range(2):  # the second run reuses the VM's storage over the same mapped constants
                got = infer(s, RELAX_MODEL, inputs)
                assert len(got) == len(want)
                for i, (g, w) in enumerate(zip(got, want)):
                    assert_bit_identical(g, w, "%s output %d (pid %d)" % (RELAX_MODEL, i, s.proc.pid))
    finally:
        codes = [s.stop() for s in servers]
    assert codes == [0, 0]
    for s in servers:
        s._err_thread.join(30)
    warnings = "".join("".join(s.stderr_text) for s in servers)
    assert "params cache" not in warnings, warnings

    # A cache whose key names another source file is stale: rewritten, with a warning.
    inode = os.stat(cache_file).st_ino
    with open(cache_file, "r+b") as f:
        f.seek(16)
        f.write(b"\xff" * 8)  # the key's source size
    with Server(repo, "--threads", "1", "--params-cache", cache) as s:
        got = infer(s, RELAX_MODEL, inputs)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_bit_identical(g, w, "%s output %d after the rewrite" % (RELAX_MODEL, i))
        assert s.stop() == 0
    s._err_thread.join(30)
    warnings = "".join(s.stderr_text)
    assert "warning: params cache" in warnings and "stale" in warnings, warnings
    assert os.stat(cache_file).st_ino != inode


@pytest.mark.parametrize("change", ["truncate", "rewrite"])
def test_cache_changed_under_the_server(tmp_path, change):
    """A params-cache file truncated (its mapped pages gone: SIGBUS killed the server) or rewritten
    in place (200s from other bytes) under a running server: the server survives, refuses the
    model's answers (503, readiness false, the index says why) while other models serve, and a
    load of the model rewrites the cache and serves again."""
    import requests
    root = fixture_root()
    repo = str(tmp_path / "repo")
    add_model(repo, "squeezenet", {"deploy_factory.so": os.path.join(root, "squeezenet1.1", "deploy_factory.so")})
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    cache = tmp_path / "cache"
    x = np.load(os.path.join(root, "squeezenet1.1", "input_data.npy"))
    mx = np.load(os.path.join(root, "mlp", "input_data.npy"))
    with Server(repo, "--threads", "1", "--params-cache", str(cache), "--model-control-mode", "explicit", "--load-model", "*") as s:
        want = infer(s, "squeezenet", {"data": x})
        path = cache / "squeezenet-1.params-cache"
        inode = path.stat().st_ino
        if change == "truncate":
            os.truncate(str(path), 4096)
        else:
            with open(str(path), "r+b") as f:  # same size, same inode, other bytes past the header
                f.seek(1 << 20)
                f.write(os.urandom(1 << 20))
        assert path.stat().st_ino == inode
        r = requests.post(s.url + "/v2/models/squeezenet/infer", data=json_request({"data": x}), timeout=60)
        assert r.status_code == 503 and "params cache changed under the server" in r.json()["error"], r.text
        assert s.proc.poll() is None
        assert requests.get(s.url + "/v2/health/ready", timeout=30).status_code == 503
        index = {e["name"]: e for e in requests.post(s.url + "/v2/repository/index", timeout=30).json()}
        assert index["squeezenet"]["state"] == "UNAVAILABLE" and "params cache" in index["squeezenet"]["reason"]
        infer(s, "mlp", {"data": mx})  # the other model serves
        assert requests.post(s.url + "/v2/repository/models/squeezenet/load", timeout=120).status_code == 200
        got = infer(s, "squeezenet", {"data": x})
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))
        assert requests.get(s.url + "/v2/health/ready", timeout=30).status_code == 200
        assert s.stop() == 0


def test_cache_truncated_during_runs(tmp_path):
    """Truncated while runs read it: the runs that fault on its pages go on over zero pages (the
    SIGBUS handler) and are refused; the server lives. Rounds repeat until a run was caught in
    the middle (the refusal then says the pages were gone)."""
    import requests
    root = fixture_root()
    x = np.load(os.path.join(root, "squeezenet1.1", "input_data.npy"))
    body = json_request({"data": x})
    reasons = set()
    for attempt in range(5):
        repo = str(tmp_path / ("repo%d" % attempt))
        add_model(repo, "squeezenet", {"deploy_factory.so": os.path.join(root, "squeezenet1.1",
                                                                          "deploy_factory.so")},
                  config={"instance_count": 2})
        cache = tmp_path / ("cache%d" % attempt)
        with Server(repo, "--threads", "1", "--params-cache", str(cache)) as s:
            statuses = []
            stop = threading.Event()

            def client():
                while not stop.is_set():
                    r = requests.post(s.url + "/v2/models/squeezenet/infer", data=body, timeout=60)
                    statuses.append(r.status_code)
                    if r.status_code == 503:
                        reasons.add(r.json()["error"])
            threads = [threading.Thread(target=client) for _ in range(2)]
            for t in threads:
                t.start()
            time.sleep(0.3 + 0.05 * attempt)
            os.truncate(str(cache / "squeezenet-1.params-cache"), 0)
            time.sleep(0.5)
            stop.set()
            for t in threads:
                t.join(60)
            assert s.proc.poll() is None, "the server died"
            assert set(statuses) <= {200, 503} and 503 in statuses, statuses
            assert s.stop() == 0
        if any("pages are gone" in r for r in reasons):
            break
    assert any("pages are gone" in r for r in reasons), reasons
