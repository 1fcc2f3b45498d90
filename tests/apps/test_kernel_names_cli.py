"""A data file names only functions its own kernels library defines: a graph JSON naming `exit` or
`abort`, or a Relax executable whose function table names `realloc`, reached libc's through the
library's dependencies (dlsym on a dlopen handle searches them): the process exited with a
pointer as its status, or glibc aborted. Now graphrt-run refuses them with one line naming the
node or function and the symbol, exit 1."""
import json
import os

import pytest

from _apps import app, one_line_error, run
from _cases import case_dir


@pytest.mark.parametrize("symbol", ["exit", "abort"])
@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_graph_naming_libc(tmp_path, symbol, loader):
    d = case_dir("mlp")
    with open(os.path.join(d, "deploy_graph.json")) as f:
        graph = json.load(f)
    node = next(n for n in graph["nodes"] if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop")
    node["attrs"]["func_name"] = symbol
    crafted = tmp_path / "graph.json"
    crafted.write_text(json.dumps(graph))
    p = run([app("graphrt-run"), os.path.join(d, "deploy_lib.so"), "--graph", str(crafted), "--params",
             os.path.join(d, "deploy_params.params"), "--input", "data=%s" % os.path.join(d, "input_data.npy"),
             "--loader", loader])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1, (p.returncode, line)
    assert "calls function '%s', which the library does not have" % symbol in line, line
    assert "node: %s" % node["name"] in line and "symbol: %s" % symbol in line, line


def test_relax_executable_naming_libc(tmp_path):
    d = os.path.join(case_dir("relax"), "relax_mlp")
    with open(os.path.join(d, "deploy_relax.so"), "rb") as f:
        data = bytearray(f.read())
    # The function table's entry (a length-prefixed string in the executable's blob), not the
    # library's own symbol of that name: a libc function of the same length.
    entry = b"\x07\x00\x00\x00\x00\x00\x00\x00softmax"
    at = data.find(entry)
    assert at > 0 and data.find(entry, at + 1) < 0
    data[at + 8:at + 15] = b"realloc"
    crafted = tmp_path / "relax_realloc.so"
    crafted.write_bytes(bytes(data))
    p = run([app("graphrt-run"), str(crafted), "--input", "x=%s" % os.path.join(d, "input_x.npy")])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1, (p.returncode, line)
    assert "calls 'realloc', which neither its library nor graphrt's registry provides" in line, line
