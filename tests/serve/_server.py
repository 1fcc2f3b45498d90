"""Starting graphrt-serve for a test: a repository of fixture models built in a temporary folder,
the server on 127.0.0.1 with free ports (it prints them), stopped with SIGTERM (it must exit 0)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from _cases import fixtures_dir, fixtures_required  # noqa: E402


def require_module(name):
    """The module, or a skip saying which Debian package provides it."""
    try:
        return __import__(name)
    except ImportError:
        package = {"requests": "python3-requests", "grpc": "python3-grpcio",
                   "google.protobuf": "python3-protobuf"}.get(name, name)
        pytest.skip("python module %s missing (apt-get install %s; scripts/setup.sh installs it)" % (name, package))


def serve_binary():
    path = os.environ.get("GRAPHRT_SERVE") or os.path.join(REPO, "build", "apps", "graphrt-serve")
    if not os.path.isfile(path):
        pytest.skip("graphrt-serve not built (set GRAPHRT_SERVE; looked at %s)" % path)
    return path


def run_binary():
    d = os.environ.get("GRAPHRT_APPS_DIR") or os.path.join(REPO, "build", "apps")
    path = os.path.join(d, "graphrt-run")
    if not os.path.isfile(path):
        pytest.skip("graphrt-run not built (set GRAPHRT_APPS_DIR; looked in %s)" % d)
    return path


def fixture_root():
    d = fixtures_dir()
    if not d:
        why = "TVM fixtures not found (set GRAPHRT_FIXTURES)"
        if fixtures_required():
            pytest.fail(why + "; fixtures are required in CI", pytrace=False)
        pytest.skip(why)
    return d


def graph_cases():
    """(name, model file) of every CPU graph fixture: the one-file .so, or deploy.tar for .tar exports."""
    d = fixtures_dir()
    out = []
    if not d:
        return out
    for name in sorted(os.listdir(d)):
        case = os.path.join(d, name, "case.json")
        if not os.path.isfile(case):
            continue
        with open(case) as f:
            info = json.load(f)
        if "cuda" in info.get("target", "") or name.endswith("_cuda"):
            continue
        model = "deploy.tar" if "tar_members" in info else "deploy_factory.so"
        if os.path.isfile(os.path.join(d, name, model)):
            out.append((name, model))
    return out


def _cpu_relax_cases(root, prefix):
    out = []
    for n in os.listdir(root):
        path = os.path.join(root, n, "case.json")
        if os.path.isfile(path):
            with open(path) as f:
                info = json.load(f)
            if info.get("kind", "relax_vm") == "relax_vm" and info.get("device", "cpu") == "cpu":
                out.append(prefix + n)
    return out


def relax_cases():
    """The CPU Relax cases: fixtures/relax/<name> (TVM v0.20) and fixtures/relax-ffi/<folder> as
    "ffi_<folder>" (TVM v0.26, the tvm-ffi ABI)."""
    d = fixtures_dir()
    root = os.path.join(d, "relax") if d else None
    if not root or not os.path.isdir(root):
        return []
    names = _cpu_relax_cases(root, "")
    if os.path.isdir(os.path.join(d, "relax-ffi")):
        names += _cpu_relax_cases(os.path.join(d, "relax-ffi"), "ffi_")
    return sorted(names)


def relax_case_dir(name):
    """The folder of relax_cases()'s case `name`."""
    if name.startswith("ffi_"):
        return os.path.join(fixtures_dir(), "relax-ffi", name[len("ffi_"):])
    return os.path.join(fixtures_dir(), "relax", name)


def add_model(repo, name, files, version="1", config=None):
    """DIR/<name>/<version>/ with `files` ({name in folder: source path}) linked in."""
    vdir = os.path.join(repo, name, version)
    os.makedirs(vdir, exist_ok=True)
    for dst, src in files.items():
        os.symlink(src, os.path.join(vdir, dst))
    if config is not None:
        with open(os.path.join(repo, name, "config.json"), "w") as f:
            json.dump(config, f)


def relax_config(info):
    """config.json for a Relax case: the function, and the parameter types and shapes the
    executable does not record (a dimension that varies across input sets is -1)."""
    order = info.get("input_order") or list(info["inputs"])
    inputs = []
    for k in order:
        shape = list(info["inputs"][k]["shape"])
        if "dynamic" in info.get("name", ""):
            shape[0] = -1
        inputs.append({"name": k, "datatype": DTYPES[info["inputs"][k]["dtype"]], "shape": shape})
    outputs = [{"datatype": DTYPES[o["dtype"]]} for o in info["outputs"]]
    return {"function": info.get("entry", "main"), "input": inputs, "output": outputs}


def relax_dynamic_batch():
    """(model files, config.json, folder) of the relax_dynamic_batch fixture, a Relax executable
    with a symbolic batch; skips when the fixture is missing."""
    d = os.path.join(fixture_root(), "relax", "relax_dynamic_batch")
    if not os.path.isdir(d):
        pytest.skip("relax_dynamic_batch fixture missing")
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    return {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, relax_config(info), d


DTYPES = {"float32": "FP32", "float64": "FP64", "float16": "FP16", "int32": "INT32", "int64": "INT64",
          "int8": "INT8", "uint8": "UINT8", "bool": "BOOL", "int16": "INT16", "uint16": "UINT16",
          "uint32": "UINT32", "uint64": "UINT64"}


class Server:
    """graphrt-serve over `repo`; use as a context manager. `stop()` returns its exit status."""

    def __init__(self, repo, *extra, timeout=120):
        self.args = [serve_binary(), "--model-repository", repo, "--host", "127.0.0.1", "--http-port", "0",
                     "--grpc-port", "0", "--metrics-port", "0"] + list(extra)
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout_lines = []
        self.stderr_text = []
        line = self._read_line(timeout)
        if not line or "listening:" not in line:
            self.proc.kill()
            out, err = self.proc.communicate(timeout=30)
            raise AssertionError("graphrt-serve did not start: %r\nstdout: %s\nstderr: %s" % (line, out, err))
        parts = line.split()
        self.http_port = int(parts[parts.index("http") + 1])
        self.metrics_port = int(parts[parts.index("metrics") + 1])
        self.grpc_port = int(parts[parts.index("grpc") + 1])
        self.url = "http://127.0.0.1:%d" % self.http_port
        self._err_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._err_thread.start()

    def _read_line(self, timeout):
        result = []
        t = threading.Thread(target=lambda: result.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        return result[0] if result else None

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_text.append(line)

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise AssertionError("graphrt-serve did not stop within %ds of SIGTERM" % timeout)
        self.stdout_lines = out.splitlines()
        # communicate() read what the stderr thread had not yet: all of it is in stderr_text.
        self._err_thread.join(10)
        self.stderr_text.extend((err or "").splitlines(True))
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.stop()
