"""TVM .tar exports load with no toolchain (objects linked in-process) and run bit-exact."""
import io
import tarfile

import pytest

import graphrt
from graphrt import graph_executor


def _outputs(lib, case):
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input(**case.inputs())
    gmod.run()
    return [gmod.get_output(i).numpy() for i in range(gmod.get_num_outputs())]


@pytest.mark.parametrize("threads", [1, 2])
def test_tar_matches_tvm_and_the_so(tar_case, threads):
    graphrt.set_num_threads(threads)
    try:
        got = _outputs(graphrt.load_module(tar_case.path("deploy.tar")), tar_case)
        ref = _outputs(graphrt.load_module(tar_case.path("deploy_factory.so")), tar_case)
    finally:
        graphrt.set_num_threads(0)
    assert len(got) == len(ref)
    for i, out in enumerate(got):
        tar_case.check(out, i)
        assert out.tobytes() == ref[i].tobytes()


def test_tar_from_memory(tar_case):
    with open(tar_case.path("deploy.tar"), "rb") as f:
        data = f.read()
    for i, out in enumerate(_outputs(graphrt.load_module_from_memory(data), tar_case)):
        tar_case.check(out, i)


def test_source_member_is_refused_by_name(tar_case):
    buf = io.BytesIO()
    with tarfile.open(tar_case.path("deploy.tar")) as src, tarfile.open(fileobj=buf, mode="w") as dst:
        for m in src.getmembers():
            dst.addfile(m, src.extractfile(m))
        info = tarfile.TarInfo("lib1.cc")
        body = b"int f(void) { return 0; }\n"
        info.size = len(body)
        dst.addfile(info, io.BytesIO(body))
    with pytest.raises(graphrt.GraphrtError, match=r"member 'lib1.cc' is source code"):
        graphrt.load_module_from_memory(buf.getvalue())
