"""Python stubs for graphrt-serve's gRPC service, generated at test time from the server's own
.proto with protoc and grpc_python_plugin (Debian's protobuf-compiler-grpc), so that the tests
speak exactly the wire format the server was built from."""
import os
import shutil
import subprocess
import sys

import pytest

from _server import REPO, require_module

_cache = {}


def stubs(tmp_dir):
    """(inference pb2, inference pb2_grpc, health pb2, health pb2_grpc); skips without the tools."""
    if _cache:
        return _cache["mods"]
    require_module("grpc")
    require_module("google.protobuf")
    os.makedirs(tmp_dir, exist_ok=True)
    protoc = shutil.which("protoc")
    plugin = shutil.which("grpc_python_plugin")
    if not protoc or not plugin:
        pytest.skip("protoc or grpc_python_plugin missing (apt-get install protobuf-compiler-grpc; "
                    "scripts/setup.sh installs it)")
    folder = os.path.join(REPO, "apps", "serve", "protocol")
    for proto in ("grpc_service.proto", "health.proto"):
        p = subprocess.run([protoc, "-I", folder, "--python_out", tmp_dir, "--grpc_python_out", tmp_dir,
                            "--plugin=protoc-gen-grpc_python=" + plugin, os.path.join(folder, proto)],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
    sys.path.insert(0, tmp_dir)
    import grpc_service_pb2
    import grpc_service_pb2_grpc
    import health_pb2
    import health_pb2_grpc
    _cache["mods"] = (grpc_service_pb2, grpc_service_pb2_grpc, health_pb2, health_pb2_grpc)
    return _cache["mods"]
