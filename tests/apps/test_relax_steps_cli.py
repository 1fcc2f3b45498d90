"""graphrt-run --steps CASE.json: a language model driven call by call as its case file's steps say
(fixtures/relax-ffi/relax_tiny_llm_gqa: TVM v0.26 on its paged KV cache), replayed on the session
layer's graphrt::LanguageModel, each expected output compared."""
import json
import os
import shutil

from _apps import app, one_line_error, run
from _cases import case_dir

CASE = "relax-ffi/relax_tiny_llm_gqa"


def _copy_case(tmp_path):
    d = case_dir(CASE)
    out = tmp_path / "case"
    shutil.copytree(d, out)
    return out, json.load(open(os.path.join(d, "case.json")))


def test_steps_give_tvms_logits_bit_for_bit():
    d = case_dir(CASE)
    p = run([app("graphrt-run"), os.path.join(d, "deploy_relax.so"), "--steps", os.path.join(d, "case.json")])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert sum(l.startswith("ok ") and l.endswith("(bit-exact)") for l in lines) == 3, p.stdout
    assert "get_total_sequence_length = 7 (expected 7)" in p.stdout
    assert lines[-1] == "4 matched, 0 differ"


def test_a_differing_output_fails_the_run(tmp_path):
    out, case = _copy_case(tmp_path)
    for step in case["steps"]:
        if step.get("expect", {}).get("logits") == "output_decode0_logits.npy":
            step["expect"]["logits"] = "output_decode1_logits.npy"
    (out / "case.json").write_text(json.dumps(case))
    p = run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")])
    assert p.returncode == 1
    assert "FAIL step 6: decode -> logits vs output_decode1_logits.npy" in p.stdout
    assert p.stdout.splitlines()[-1] == "3 matched, 1 differ"


def test_a_bad_step_is_one_error_naming_the_step_and_builtin(tmp_path):
    out, case = _copy_case(tmp_path)
    case["steps"][1]["args"][1] = {"int": 0}
    case["steps"].insert(2, dict(case["steps"][1]))  # the same sequence added twice
    (out / "case.json").write_text(json.dumps(case))
    p = run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")])
    line = one_line_error(p, "graphrt-run")
    assert "sequence 0 is already in the KV cache" in line, line
    assert "function: vm.builtin.kv_state_add_sequence" in line and "step: 2" in line, line


def test_steps_need_a_relax_executable():
    mlp = case_dir("mlp")
    p = run([app("graphrt-run"), os.path.join(mlp, "deploy_factory.so"), "--steps",
             os.path.join(case_dir(CASE), "case.json")])
    assert p.returncode == 2
    assert "--steps applies to Relax executables" in p.stderr


def test_a_step_no_engine_makes_is_refused_naming_it(tmp_path):
    out, case = _copy_case(tmp_path)
    case["steps"].insert(2, {"global": "vm.builtin.kv_state_popn", "args": ["cache", {"int": 0}, {"int": 1}]})
    (out / "case.json").write_text(json.dumps(case))
    p = run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")])
    line = one_line_error(p, "graphrt-run")
    assert "not a step of a language model's engine" in line, line
    assert "function: vm.builtin.kv_state_popn" in line and "step: 2" in line, line


def test_a_forward_pass_of_two_sequences_is_refused(tmp_path):
    out, case = _copy_case(tmp_path)
    case["steps"][2]["args"][1] = {"shape": [0, 1]}
    case["steps"][2]["args"][2] = {"shape": [5, 1]}
    (out / "case.json").write_text(json.dumps(case))
    p = run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")])
    line = one_line_error(p, "graphrt-run")
    assert "a forward pass of one sequence" in line and "step: 2" in line, line


def test_a_repeated_member_or_malformed_text_is_refused_before_any_step_runs(tmp_path):
    # Which of two "args" a step means would be a guess; text cut short is named by its byte.
    out, case = _copy_case(tmp_path)
    text = json.dumps(case)
    for bad, want in [(text.replace('"args":', '"args": [], "args":', 1), "the member 'args' is given twice"),
                      (text[:len(text) // 2], "the case file is not valid JSON")]:
        (out / "case.json").write_text(bad)
        p = run([app("graphrt-run"), str(out / "deploy_relax.so"), "--steps", str(out / "case.json")])
        line = one_line_error(p, "graphrt-run")
        assert want in line and "file: " in line and "bit-exact" not in p.stdout, line
        assert "offset: " in line, line
