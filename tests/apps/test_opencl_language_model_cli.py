"""graphrt-run on an MLC-LLM model folder with --device opencl (mlc/tiny_gpt2_chat, its
tiny_gpt2_chat-opencl.so: weights and KV cache on the device): --generate and --chat print the text
of case.json's greedy completions and chat answer, as on the CPU; the C API's program (graphrt_c_lm)
on opencl gives the same text; a folder without the device's library, or a --model-lib that is not
there, is one error line naming the file; --device vulkan (no Vulkan library ships) refuses cleanly.
Skips without an OpenCL device (fails in CI, where scripts/setup.sh installs PoCL)."""
import json
import os

import pytest

from _apps import app, one_line_error
from _apps import run as run_app
from _cases import fixtures_dir, skip_without_fixtures


@pytest.fixture(scope="module")
def package():
    folder = os.path.join(fixtures_dir() or "", "mlc", "tiny_gpt2_chat")
    if not fixtures_dir() or not os.path.isfile(os.path.join(folder, "tiny_gpt2_chat-opencl.so")):
        skip_without_fixtures("mlc/tiny_gpt2_chat with tiny_gpt2_chat-opencl.so")
    with open(os.path.join(folder, "case.json")) as f:
        return folder, json.load(f)


def run(args, **kw):
    return run_app(args, encoding="utf-8", **kw)


def _require_opencl(p):
    """Skips (fails in CI) when graphrt-run said the OpenCL device is unavailable."""
    if p.returncode != 0 and "opencl(0) is unavailable" in p.stderr:
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_OPENCL") == "1":
            pytest.fail("no usable OpenCL device, and CI requires one: " + p.stderr, pytrace=False)
        pytest.skip("no usable OpenCL device: " + p.stderr.strip())


def _text(p):
    _require_opencl(p)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_generate_on_opencl_prints_the_greedy_completions(package):
    folder, case = package
    for c in case["greedy_completions"]:
        p = run([app("graphrt-run"), folder, "--device", "opencl", "--generate", c["prompt"], "--max-tokens",
                 str(c["max_tokens"]), "--temperature", "0"])
        assert _text(p) == c["text"], c["prompt"]


def test_chat_on_opencl_prints_the_answer(package):
    folder, case = package
    chat = case["chat"]
    p = run([app("graphrt-run"), folder, "--device", "opencl", "--chat", chat["messages"][0]["content"],
             "--max-tokens", str(chat["max_tokens"]), "--temperature", "0"])
    assert _text(p) == chat["text"]


def test_c_program_on_opencl_gives_the_same_text(package):
    folder, case = package
    program = os.environ.get("GRAPHRT_C_LM")
    if not program or not os.path.isfile(program):
        pytest.skip("graphrt_c_lm not built (GRAPHRT_C_LM)")
    c = case["greedy_completions"][0]
    assert _text(run([program, folder, "generate", c["prompt"], str(c["max_tokens"]), "opencl"])) == c["text"]
    chat = case["chat"]
    p = run([program, folder, "chat", json.dumps(chat["messages"]), str(chat["max_tokens"]), "opencl"])
    assert _text(p) == chat["text"]


def test_a_missing_device_library_is_one_error_line_naming_it(package, tmp_path):
    folder, case = package
    copy = tmp_path / "tiny_copy"
    copy.mkdir()
    for name in case["files"]:
        if not name.endswith("-opencl.so"):
            os.symlink(os.path.join(folder, name), str(copy / name))
    line = one_line_error(run([app("graphrt-run"), str(copy), "--device", "opencl", "--generate", "Hi"]),
                          "graphrt-run")
    assert str(copy / "tiny_copy-opencl.so") in line, line
    missing = str(tmp_path / "nowhere-opencl.so")
    line = one_line_error(run([app("graphrt-run"), folder, "--device", "opencl", "--model-lib", missing,
                               "--generate", "Hi"]), "graphrt-run")
    assert missing in line, line


def test_vulkan_refuses_cleanly(package):
    folder, _ = package
    p = run([app("graphrt-run"), folder, "--device", "vulkan", "--generate", "Hi", "--max-tokens", "2"])
    line = one_line_error(p, "graphrt-run")
    assert "tiny_gpt2_chat-vulkan.so" in line or "vulkan(0) is unavailable" in line, line
