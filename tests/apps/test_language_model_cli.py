"""graphrt-run on an MLC-LLM model folder (mlc/tiny_gpt2_chat): --generate and --chat print the
text of case.json's greedy completions and chat answer on stdout (nothing else), --tokenize the
ids; sampling flags out of range are usage errors naming the flag. The C API's small program
(graphrt_c_lm) gives the same text."""
import json
import os

import pytest

from _apps import app, one_line_error
from _apps import run as run_app
from _cases import fixtures_dir, skip_without_fixtures


@pytest.fixture(scope="module")
def package():
    folder = os.path.join(fixtures_dir() or "", "mlc", "tiny_gpt2_chat")
    if not fixtures_dir() or not os.path.isfile(os.path.join(folder, "case.json")):
        skip_without_fixtures("mlc/tiny_gpt2_chat")
    with open(os.path.join(folder, "case.json")) as f:
        return folder, json.load(f)


def run(args):
    return run_app(args, encoding="utf-8")


def _text(p):
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_generate_prints_the_greedy_completion_only(package):
    folder, case = package
    for c in case["greedy_completions"]:
        p = run([app("graphrt-run"), folder, "--generate", c["prompt"], "--max-tokens", str(c["max_tokens"]),
                 "--temperature", "0"])
        assert _text(p) == c["text"]
        assert "time to first token" in p.stderr


def test_chat_prints_the_answer(package):
    folder, case = package
    chat = case["chat"]
    p = run([app("graphrt-run"), folder, "--chat", chat["messages"][0]["content"], "--max-tokens",
             str(chat["max_tokens"]), "--temperature", "0"])
    assert _text(p) == chat["text"]


def test_tokenize_prints_ids(package):
    folder, case = package
    for c in case["tokenizer_cases"][:4]:
        p = run([app("graphrt-run"), folder, "--tokenize", c["text"]])
        assert json.loads(_text(p)) == c["ids"]


def test_seeded_sampling_repeats(package):
    folder, case = package
    args = [app("graphrt-run"), folder, "--generate", "Once upon a time,", "--max-tokens", "10", "--temperature", "1",
            "--top-p", "0.9", "--top-k", "50", "--seed", "5"]
    assert _text(run(args)) == _text(run(args))


@pytest.mark.parametrize("flags, named", [
    (["--temperature", "-1"], "--temperature"),
    (["--top-p", "2"], "--top-p"),
    (["--top-k", "-1"], "--top-k"),
    (["--max-tokens", "0"], "--max-tokens"),
    (["--seed", "x"], "--seed"),
])
def test_out_of_range_flags_are_usage_errors(package, flags, named):
    p = run([app("graphrt-run"), package[0], "--generate", "Hi"] + flags)
    assert p.returncode == 2
    assert named in one_line_error(p, "graphrt-run")


def test_sampling_flags_need_a_mode(package):
    p = run([app("graphrt-run"), package[0], "--max-tokens", "3"])
    assert p.returncode == 2
    assert "--max-tokens" in one_line_error(p, "graphrt-run")


def test_c_program_gives_the_same_text(package):
    folder, case = package
    program = os.environ.get("GRAPHRT_C_LM")
    if not program or not os.path.isfile(program):
        pytest.skip("graphrt_c_lm not built (GRAPHRT_C_LM)")
    for c in case["greedy_completions"]:
        p = run([program, folder, "generate", c["prompt"], str(c["max_tokens"])])
        assert _text(p) == c["text"]
    chat = case["chat"]
    p = run([program, folder, "chat", json.dumps(chat["messages"]), str(chat["max_tokens"])])
    assert _text(p) == chat["text"]
    p = run([program, folder, "tokenize", case["tokenizer_cases"][0]["text"], "0"])
    assert json.loads(_text(p)) == case["tokenizer_cases"][0]["ids"]
