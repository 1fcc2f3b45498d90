"""graphrt.LanguageModel on the MLC-LLM package fixture (mlc/tiny_gpt2_chat): the greedy
completions, the chat answer and the tokenizer cases of its case.json (TVM's and the reference
tokenizer's), as text; streaming, seeds and the errors of generation fields."""

import pytest

import graphrt


@pytest.fixture(scope="module")
def lm(mlc_package):
    return graphrt.LanguageModel(mlc_package[0])


def test_greedy_completions_are_case_json_text(lm, mlc_package):
    for c in mlc_package[1]["greedy_completions"]:
        assert lm.tokenizer.encode(c["prompt"]) == c["prompt_ids"]
        text = lm.generate(c["prompt"], max_tokens=c["max_tokens"], temperature=0)
        assert text == c["text"], c["prompt"]
        assert lm.last_result["tokens"] == c["output_ids"]
        assert lm.last_result["finish_reason"] == "length"
        assert lm.last_result["prompt_tokens"] == len(c["prompt_ids"])


def test_chat_answer_is_case_json_text(lm, mlc_package):
    chat = mlc_package[1]["chat"]
    answer = lm.chat(chat["messages"], max_tokens=chat["max_tokens"], temperature=0)
    assert answer == chat["text"]
    assert lm.last_result["tokens"] == chat["output_ids"]
    assert lm.last_result["prompt_tokens"] == len(chat["prompt_ids"])


def test_tokenizer_cases(lm, mlc_package):
    for c in mlc_package[1]["tokenizer_cases"]:
        assert lm.tokenizer.encode(c["text"]) == c["ids"], c["text"][:40]
        assert lm.tokenizer.decode(c["ids"]) == c["decoded"], c["text"][:40]


def test_stream_pieces_join_to_the_completion(lm, mlc_package):
    for c in mlc_package[1]["greedy_completions"]:
        pieces = list(lm.stream(c["prompt"], max_tokens=c["max_tokens"], temperature=0))
        assert "".join(pieces) == c["text"]
        assert all(p for p in pieces)


def test_closing_a_stream_stops_it(lm, mlc_package):
    c = mlc_package[1]["greedy_completions"][0]
    stream = lm.stream(c["prompt"], max_tokens=200, temperature=0)
    first = next(stream)
    stream.close()
    assert c["text"].startswith(first)
    # The model is usable again at once.
    assert lm.generate(c["prompt"], max_tokens=c["max_tokens"], temperature=0) == c["text"]


def test_stop_string_cuts_the_text_before_it(lm, mlc_package):
    c = mlc_package[1]["greedy_completions"][0]
    cut = c["text"].index(" dark")
    text = lm.generate(c["prompt"], max_tokens=c["max_tokens"], temperature=0, stop=[" dark"])
    assert text == c["text"][:cut]
    assert lm.last_result["finish_reason"] == "stop"


def test_seed_gives_the_same_text_each_run(lm, mlc_package):
    prompt = mlc_package[1]["greedy_completions"][1]["prompt"]
    a = lm.generate(prompt, max_tokens=12, temperature=1.0, seed=42)
    tokens_a = lm.last_result["tokens"]
    lm.generate(prompt, max_tokens=12, temperature=1.0, seed=7)
    b = lm.generate(prompt, max_tokens=12, temperature=1.0, seed=42)
    assert (a, tokens_a) == (b, lm.last_result["tokens"])
    lm.generate(prompt, max_tokens=12, temperature=1.0, seed=43)
    assert lm.last_result["tokens"] != tokens_a


def test_logprobs(lm, mlc_package):
    c = mlc_package[1]["greedy_completions"][0]
    lm.generate(c["prompt"], max_tokens=3, temperature=0, logprobs=True, top_logprobs=2)
    logprobs = lm.last_result["logprobs"]
    assert [e["token"] for e in logprobs] == c["output_ids"][:3]
    assert all(e["logprob"] == 0.0 and len(e["top_logprobs"]) == 2 for e in logprobs)


@pytest.mark.parametrize("fields, field", [
    ({"temperature": -1}, "temperature"),
    ({"top_p": 1.5}, "top_p"),
    ({"top_k": -3}, "top_k"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"top_logprobs": 6, "logprobs": True}, "top_logprobs"),
    ({"logit_bias": {50257: 1.0}}, "logit_bias"),
    ({"stop": [""]}, "stop"),
    ({"temprature": 0.5}, "temprature"),
])
def test_bad_generation_fields_raise_naming_the_field(lm, fields, field):
    with pytest.raises(graphrt.InvalidArgumentError) as e:
        lm.generate("Hello", **fields)
    assert field in str(e.value)


def test_default_config_is_the_chat_configs(lm):
    config = lm.default_config()
    assert config["temperature"] == 1.0 and config["top_p"] == 1.0
    assert config["presence_penalty"] == 0.0 and config["frequency_penalty"] == 0.0


def test_a_folder_without_a_library_is_refused(tmp_path, lib_ok):
    (tmp_path / "mlc-chat-config.json").write_text("{}")
    with pytest.raises(graphrt.GraphrtError):
        graphrt.LanguageModel(str(tmp_path))
