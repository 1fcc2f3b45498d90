"""Hostile input, round 5 (the apps' side): error text from the file, and step files that lie.

A module kind (a blob record's type key) from a crafted library reaches the user's terminal
quoted, its control bytes escaped, and cut: an 800 kB kind is not a megabyte-long error line.
graphrt-run --steps refuses int64 token ids past int32 ({2^32 + t} is not token t), {"int": 0.5}
and {"shape": [5.9]}: one error naming the step and the field, exit 1, never a run on values the
file did not mean."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import _tvm_files as tf
from _apps import app
from _cases import case_dir

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "hostile", "kernels.c")
LIMIT_S = 30
STEPS_CASE = "relax-ffi/relax_tiny_llm_gqa"


def run_bytes(args):
    """An app run that must end within LIMIT_S seconds; its output as bytes (nothing decoded)."""
    return subprocess.run(args, capture_output=True, timeout=LIMIT_S)


def error_line_bytes(p, prog):
    assert p.returncode == 1, (p.returncode, p.stderr[:2000])
    lines = [l for l in p.stderr.split(b"\n") if l.strip()]
    assert len(lines) == 1, p.stderr[:2000]
    assert lines[0].startswith(prog.encode() + b": error:"), lines[0][:2000]
    return lines[0]


def blob_so(tmp_path, blob):
    """A library whose __tvm_dev_mblob is `blob` (included by the assembler: a blob of any size)."""
    (tmp_path / "blob.bin").write_bytes(blob)
    src = tmp_path / "blob.c"
    src.write_text('__asm__(".section .rodata\\n.globl __tvm_dev_mblob\\n.type __tvm_dev_mblob, @object\\n'
                   '.balign 8\\n__tvm_dev_mblob:\\n.incbin \\"%s\\"\\n.size __tvm_dev_mblob, %d\\n.text\\n");\n'
                   % (tmp_path / "blob.bin", len(blob)))
    so = tmp_path / "crafted.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(so), str(src), KERNELS], check=True)
    return str(so)


@pytest.mark.parametrize("tool", ["graphrt-run", "graphrt-inspect"])
def test_module_kind_from_the_file_is_quoted_and_cut(tmp_path, tool):
    kind = b"\x1b]0;owned\x07\x1b[2J\x1b[31m" + b"K" * 800000 + b"\r\n\x9b"
    so = blob_so(tmp_path, tf.module_blob([("_lib", b""), (kind, b"")], [0, 1, 1], [1]))
    args = [app(tool), so] + (["--random-inputs", "0"] if tool == "graphrt-run" else [])
    line = error_line_bytes(run_bytes(args), tool)
    assert len(line) < 8192, len(line)
    assert not any(b < 0x20 or b >= 0x7f for b in line), line[:400]
    assert b"no loader registered" in line, line[:400]
    assert b"'\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mKKK" in line, line[:400]
    assert b"(%d bytes)" % len(kind) in line, line[:400]


def _steps_case(tmp_path):
    out = tmp_path / "case"
    shutil.copytree(case_dir(STEPS_CASE), out)
    return out, json.loads((out / "case.json").read_text())


def _run_steps(out, case):
    (out / "case.json").write_text(json.dumps(case))
    p = subprocess.run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("graphrt-run: error:"), p.stderr
    assert "bit-exact" not in p.stdout, p.stdout
    return lines[0]


def test_int64_token_ids_past_int32_are_refused(tmp_path):
    out, case = _steps_case(tmp_path)
    ids = np.load(out / "input_ids_decode0.npy").astype(np.int64)
    np.save(out / "input_ids_decode0.npy", ids + (1 << 32))  # would narrow to the same ids
    line = _run_steps(out, case)
    assert "input_ids_decode0.npy" in line and "token id %d" % (int(ids.flat[0]) + (1 << 32)) in line, line
    assert "step: 6" in line, line


@pytest.mark.parametrize("step,arg,value,field", [
    (1, 1, {"int": 0.5}, "args[1].int"),
    (2, 2, {"shape": [5.9]}, "args[2].shape[0]"),
    (0, 1, {"shape": [64.0]}, "args[1].shape[0]"),
    (1, 1, {"int": 1 << 64}, "args[1].int"),
    (2, 1, {"shape": [-1]}, "args[1].shape[0]"),
])
def test_values_that_are_not_exact_integers_are_refused(tmp_path, step, arg, value, field):
    out, case = _steps_case(tmp_path)
    case["steps"][step]["args"][arg] = value
    line = _run_steps(out, case)
    assert "step: %d" % step in line and "field: " + field in line, line


def test_expect_int_that_is_a_fraction_is_refused(tmp_path):
    out, case = _steps_case(tmp_path)
    case["steps"][-1]["expect_int"] = 7.5
    line = _run_steps(out, case)
    assert "field: expect_int" in line and "step: %d" % (len(case["steps"]) - 1) in line, line
