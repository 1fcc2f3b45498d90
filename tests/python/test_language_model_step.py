"""graphrt.LanguageModel.step on the MLC-LLM package fixture (mlc/tiny_gpt2_chat): case.json's
serving scenario against TVM v0.26's logits (expected_*.npy within the case's tolerance), the
greedy completions reproduced by each step's argmax (one sequence alone and all together), one
foreign call per step, the rows as a copy or a view of the model's own, and each refusal's
error class naming what is at fault."""
import json
import os

import numpy as np
import pytest

import graphrt
from graphrt import _lib
from _cases import fixtures_dir, skip_without_fixtures


@pytest.fixture
def lm(mlc_package):
    return graphrt.LanguageModel(mlc_package[0])


def _expected(mlc_package, name, rows):
    return np.load(os.path.join(mlc_package[0], name)).reshape(rows, -1)


def test_the_scenario_gives_tvms_logits(lm, mlc_package):
    case = mlc_package[1]
    tolerance = case["tolerance"]
    assert lm.vocab_size == 50257
    ops = [op for op in case["scenario"] if op["op"] in ("add_sequence", "batch_prefill", "batch_decode")]
    for op in ops[:6]:  # up to the removal: prefill of three, four decodes
        if op["op"] == "add_sequence":
            for s in op["seq_ids"]:
                lm.add_sequence(s)
            continue
        ids = op["seq_ids"]
        tokens = op["input_ids"] if op["op"] == "batch_prefill" else [t[0] for t in op["input_ids"]]
        logits = lm.step(ids, tokens)
        assert logits.shape == (len(ids), lm.vocab_size) and logits.dtype == np.float32
        np.testing.assert_allclose(logits, _expected(mlc_package, op["expect_logits"], len(ids)), atol=tolerance, rtol=0)
    single = [op for op in case["scenario"] if op["op"] in ("prefill", "decode")]
    lm.add_sequence(10)
    for op in single:
        ids = op["input_ids"]
        logits = lm.step([10], [ids if op["op"] == "prefill" else ids[0]])
        np.testing.assert_allclose(logits, _expected(mlc_package, op["expect_logits"], 1), atol=tolerance, rtol=0)


def _greedy(lm, seq_ids, prompts, steps):
    logits = lm.step(seq_ids, prompts)
    out = [[] for _ in seq_ids]
    for _ in range(steps):
        tokens = [int(np.argmax(row)) for row in logits]
        for o, t in zip(out, tokens):
            o.append(t)
        logits = lm.step(seq_ids, tokens)
    return out


def test_argmax_steps_are_the_greedy_completions(lm, mlc_package):
    completions = mlc_package[1]["greedy_completions"]
    for i, c in enumerate(completions):  # each alone: prefill, then decode
        lm.add_sequence(100 + i)
        assert _greedy(lm, [100 + i], [c["prompt_ids"]], c["max_tokens"]) == [c["output_ids"]]
        lm.remove_sequence(100 + i)
    ids = list(range(len(completions)))  # all together: batch_prefill, batch_decode
    for s in ids:
        lm.add_sequence(s)
    together = _greedy(lm, ids, [c["prompt_ids"] for c in completions], completions[0]["max_tokens"])
    assert together == [c["output_ids"] for c in completions]


def test_one_foreign_call_per_step(lm, monkeypatch):
    lm.add_sequence(0)
    lm.add_sequence(1)
    lm.step([0, 1], [[464, 3139], [7454]])
    calls = []
    step = lm._step
    monkeypatch.setattr(lm, "_step", lambda *a: calls.append(a) or step(*a))
    monkeypatch.setattr(_lib, "call", lambda *a, **k: pytest.fail("a second C call in step: %s" % (a[0],)))
    for _ in range(3):
        lm.step([0, 1], [11, 12])
    assert len(calls) == 3


def test_rows_are_a_copy_or_the_models_own(lm):
    lm.add_sequence(0)
    view = lm.step([0], [[464, 3139, 286]], copy=False)
    kept = view.copy()
    copied = lm.step([0], [4881])
    assert not np.shares_memory(copied, view)
    assert copied.flags.writeable and copied.shape == (1, lm.vocab_size)
    assert not np.array_equal(kept, copied)  # another token, other logits


def test_refusals_name_what_is_at_fault(lm):
    lm.add_sequence(0)
    with pytest.raises(graphrt.error.InvalidArgumentError, match="no sequence"):
        lm.step([], [])
    with pytest.raises(graphrt.error.NotFoundError, match="sequence 99"):
        lm.step([0, 99], [1, 2])
    with pytest.raises(graphrt.error.InvalidArgumentError, match="sequence 0 is twice"):
        lm.step([0, 0], [1, 2])
    with pytest.raises(graphrt.error.OutOfRangeError, match="50257"):
        lm.step([0], [50257])
    with pytest.raises(graphrt.error.OutOfRangeError, match="-1"):
        lm.step([0], [[5, -1]])
    with pytest.raises(graphrt.error.InvalidArgumentError, match="sequence 0 is given no token"):
        lm.step([0], [[]])
    with pytest.raises(graphrt.error.InvalidArgumentError, match="2 sequence ids for 1"):
        lm.step([0, 1], [5])
    with pytest.raises(graphrt.error.TypeMismatchError, match="ints"):
        lm.step([0], ["x"])
    with pytest.raises(graphrt.error.TypeMismatchError, match="32 bits"):
        lm.step([0], [2 ** 32 + 5])  # not wrapped into the vocabulary
    with pytest.raises(graphrt.error.TypeMismatchError, match="no token id"):
        lm.step([0], [[5, True]])
    with pytest.raises(graphrt.error.InvalidArgumentError, match="already in the KV cache"):
        lm.add_sequence(0)
    with pytest.raises(graphrt.error.NotFoundError, match="sequence 5"):
        lm.remove_sequence(5)
    # Nothing ran: the sequence is still empty, and its first step is a prefill as any.
    assert lm.step([0], [[464, 3139, 286, 4881, 318]]).shape == (1, lm.vocab_size)


def test_a_token_id_library_steps_with_tvms_logits(lib_ok):
    case = os.path.join(fixtures_dir() or "", "relax-ffi", "relax_tiny_llm_gqa")
    if not fixtures_dir() or not os.path.isfile(os.path.join(case, "case.json")):
        skip_without_fixtures("relax-ffi/relax_tiny_llm_gqa")
    with open(os.path.join(case, "case.json")) as f:
        sizes = json.load(f)["cache_config"]
    lm = graphrt.LanguageModel.from_library(os.path.join(case, "deploy_relax.so"),
                                            max_total_seq_len=sizes["max_total_seq_len"],
                                            prefill_chunk_size=sizes["prefill_chunk_size"])
    assert lm.vocab_size == 96 and lm.tokenizer is None
    lm.add_sequence(0)
    for ids, want in (("input_ids_prefill.npy", "output_prefill_logits.npy"),
                      ("input_ids_decode0.npy", "output_decode0_logits.npy"),
                      ("input_ids_decode1.npy", "output_decode1_logits.npy")):
        tokens = [int(t) for t in np.load(os.path.join(case, ids)).ravel()]
        logits = lm.step([0], [tokens if len(tokens) > 1 else tokens[0]])
        np.testing.assert_array_equal(logits, np.load(os.path.join(case, want)).reshape(1, -1))
    with pytest.raises(graphrt.error.FailedPreconditionError, match="library alone"):
        lm.generate("x")
