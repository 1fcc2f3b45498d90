"""OpenAI's API (/v1/models, /v1/completions, /v1/chat/completions) and Triton's generate with text on an
MLC-LLM model folder served as it is (fixtures/mlc/tiny_gpt2_chat in R/chat/1/, no config.json): the greedy
completions and the chat answer are the fixture's text (case.json, made by MLC's own tokenizer and TVM),
plain and streamed; streams are never compressed and arrive event by event with Python requests (which
sends Accept-Encoding: gzip); OpenAI's error object names the field; the API key guards /v1 only."""
import json
import os
import time

import pytest

from _server import Server, add_model, fixture_root, require_module

requests = require_module("requests")

CASE = os.path.join("mlc", "tiny_gpt2_chat")
TIMEOUT = 60


def case_dir():
    d = os.path.join(fixture_root(), CASE)
    if not os.path.isfile(os.path.join(d, "mlc-chat-config.json")):
        pytest.skip("fixture %s missing" % CASE)
    return d


def case():
    with open(os.path.join(case_dir(), "case.json")) as f:
        return json.load(f)


def mlc_repo(tmp_path_factory):
    d = case_dir()
    repo = str(tmp_path_factory.mktemp("repo"))
    files = {n: os.path.join(d, n) for n in os.listdir(d) if not n.startswith("expected_") and n != "case.json"}
    add_model(repo, "chat", files)  # the MLC folder as it is: no config.json
    return repo


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Server(mlc_repo(tmp_path_factory)) as s:
        yield s


def post(server, path, body, **kw):
    return requests.post(server.url + path, json=body, timeout=TIMEOUT, **kw)


def events(r):
    """The data of each server-sent event, in order: JSON objects, then the final "[DONE]"."""
    out = []
    for line in r.iter_lines():
        if not line:
            continue
        assert line.startswith(b"data: "), line
        data = line[len(b"data: "):]
        out.append(data.decode() if data == b"[DONE]" else json.loads(data))
    return out


def assert_openai_error(r, status, param):
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}, err
    assert err["param"] == param, err
    assert isinstance(err["message"], str) and err["message"]
    return err


def test_models_lists_the_mlc_folder(server):
    r = requests.get(server.url + "/v1/models", timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "list"
    assert [m["id"] for m in body["data"]] == ["chat"]
    assert body["data"][0]["object"] == "model"
    meta = requests.get(server.url + "/v2/models/chat", timeout=TIMEOUT).json()
    assert meta["platform"] == "mlc_llm"


def test_greedy_completions_are_the_fixtures_text(server):
    for c in case()["greedy_completions"]:
        r = post(server, "/v1/completions", {"model": "chat", "prompt": c["prompt"], "max_tokens": c["max_tokens"],
                                             "temperature": 0})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["object"] == "text_completion" and body["id"].startswith("cmpl-")
        assert body["model"] == "chat"
        assert body["choices"][0]["text"] == c["text"], c["prompt"]
        assert body["choices"][0]["finish_reason"] == "length"
        assert body["usage"] == {"prompt_tokens": len(c["prompt_ids"]), "completion_tokens": len(c["output_ids"]),
                                 "total_tokens": len(c["prompt_ids"]) + len(c["output_ids"])}


def test_streamed_completions_add_up_to_the_fixtures_text(server):
    for c in case()["greedy_completions"]:
        r = post(server, "/v1/completions", {"prompt": c["prompt"], "max_tokens": c["max_tokens"], "temperature": 0,
                                             "stream": True, "stream_options": {"include_usage": True}}, stream=True)
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"].startswith("text/event-stream")
        ev = events(r)
        assert ev[-1] == "[DONE]"
        usage = ev[-2]
        assert usage["choices"] == [] and usage["usage"]["completion_tokens"] == len(c["output_ids"])
        chunks = ev[:-2]
        assert all(e["object"] == "text_completion" and e["usage"] is None for e in chunks)
        assert len({e["id"] for e in chunks}) == 1
        assert "".join(e["choices"][0]["text"] for e in chunks) == c["text"]
        assert [e["choices"][0]["finish_reason"] for e in chunks][-1] == "length"
        assert all(e["choices"][0]["finish_reason"] is None for e in chunks[:-1])


def test_chat_answer_is_the_fixtures_text(server):
    c = case()["chat"]
    r = post(server, "/v1/chat/completions", {"model": "chat", "messages": c["messages"],
                                              "max_tokens": c["max_tokens"], "temperature": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["choices"][0]["message"] == {"role": "assistant", "content": c["text"]}
    assert body["usage"]["prompt_tokens"] == len(c["prompt_ids"])
    assert body["usage"]["completion_tokens"] == len(c["output_ids"])


def test_streamed_chat_adds_up_to_the_fixtures_text(server):
    c = case()["chat"]
    r = post(server, "/v1/chat/completions", {"model": "chat", "messages": c["messages"], "stream": True,
                                              "max_completion_tokens": c["max_tokens"], "temperature": 0}, stream=True)
    assert r.status_code == 200, r.text
    ev = events(r)
    assert ev[-1] == "[DONE]"
    chunks = ev[:-1]  # no usage chunk unless asked for
    assert all(e["object"] == "chat.completion.chunk" for e in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in chunks) == c["text"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_event_streams_are_not_compressed_and_arrive_as_made(server):
    # requests sends Accept-Encoding: gzip, deflate: the stream must still come event by event.
    s = requests.Session()
    assert "gzip" in s.headers["Accept-Encoding"]
    start = time.monotonic()
    r = s.post(server.url + "/v1/completions", json={"prompt": "Once upon a time,", "max_tokens": 60,
                                                    "temperature": 0, "stream": True}, stream=True, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert "Content-Encoding" not in r.headers, r.headers
    times = []
    for line in r.iter_lines(chunk_size=1):
        if line:
            times.append(time.monotonic() - start)
    assert len(times) > 10
    # The first event came well before the generation ended.
    assert times[0] < times[-1] / 2, (times[0], times[-1])
    # Token-id generate_stream too: no compression on any event stream.
    r = s.post(server.url + "/v2/models/chat/generate_stream", json={"text_input": "Hi", "max_tokens": 4},
               stream=True, timeout=TIMEOUT)
    assert r.status_code == 200 and "Content-Encoding" not in r.headers


def test_seeded_sampling_is_reproducible_and_n_gives_choices(server):
    body = {"prompt": "Once upon a time,", "max_tokens": 6, "temperature": 0.9, "top_p": 0.95, "seed": 11, "n": 3}
    a = post(server, "/v1/completions", body).json()
    b = post(server, "/v1/completions", body).json()
    assert [c["index"] for c in a["choices"]] == [0, 1, 2]
    assert [c["text"] for c in a["choices"]] == [c["text"] for c in b["choices"]]
    assert len({c["text"] for c in a["choices"]}) > 1  # each choice its own seed
    assert a["usage"]["completion_tokens"] == 18


def test_streamed_n_sends_each_choice_by_index(server):
    body = {"prompt": "The capital of France is", "max_tokens": 6, "temperature": 0, "n": 2, "stream": True}
    ev = events(post(server, "/v1/completions", body, stream=True))
    texts = {}
    for e in ev[:-1]:
        ch = e["choices"][0]
        texts[ch["index"]] = texts.get(ch["index"], "") + ch["text"]
    whole = post(server, "/v1/completions", dict(body, stream=False)).json()
    assert texts == {0: whole["choices"][0]["text"], 1: whole["choices"][1]["text"]}


def test_stop_strings_end_the_text_before_them(server):
    c = case()["greedy_completions"][0]
    stop = c["text"][8:14]
    r = post(server, "/v1/completions", {"prompt": c["prompt"], "max_tokens": 16, "temperature": 0, "stop": [stop]})
    choice = r.json()["choices"][0]
    assert choice["text"] == c["text"][:c["text"].index(stop)]
    assert choice["finish_reason"] == "stop"


def test_logprobs_come_with_each_token(server):
    c = case()["greedy_completions"][1]
    r = post(server, "/v1/completions", {"prompt": c["prompt"], "max_tokens": 5, "temperature": 0, "logprobs": 2})
    lp = r.json()["choices"][0]["logprobs"]
    assert len(lp["tokens"]) == 5 and len(lp["token_logprobs"]) == 5
    assert all(len(t) == 2 for t in lp["top_logprobs"])
    assert all(v <= 0 for v in lp["token_logprobs"])
    r = post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3,
                                              "temperature": 0, "logprobs": True, "top_logprobs": 3})
    content = r.json()["choices"][0]["logprobs"]["content"]
    assert len(content) == 3 and all(len(t["top_logprobs"]) == 3 for t in content)
    # Greedy: the sampled token is the most probable one.
    assert all(t["logprob"] == t["top_logprobs"][0]["logprob"] for t in content)


def test_penalties_and_logit_bias_change_the_text(server):
    c = case()["greedy_completions"][0]
    base = {"prompt": c["prompt"], "max_tokens": 4, "temperature": 0}
    biased = post(server, "/v1/completions", dict(base, logit_bias={"13": 100})).json()["choices"][0]["text"]
    assert biased == "...."
    r = post(server, "/v1/completions", dict(base, presence_penalty=1.5, frequency_penalty=1.0))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("path,body,param", [
    ("/v1/completions", {"prompt": "x", "bogus": 1}, "bogus"),
    ("/v1/completions", {"prompt": "x", "temperature": -1}, "temperature"),
    ("/v1/completions", {"prompt": "x", "top_p": 2}, "top_p"),
    ("/v1/completions", {"prompt": "x", "n": 0}, "n"),
    ("/v1/completions", {"prompt": "x", "logprobs": 9}, "logprobs"),
    ("/v1/completions", {"prompt": "x", "logit_bias": {"999999": 1}}, "logit_bias"),
    ("/v1/completions", {"prompt": "x", "presence_penalty": 3}, "presence_penalty"),
    ("/v1/completions", {"prompt": "x", "stream_options": {"include_usage": True}}, "stream_options"),
    ("/v1/completions", {"max_tokens": 3}, "prompt"),
    ("/v1/chat/completions", {"messages": []}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "echo": True}, "echo"),
])
def test_bad_fields_are_400s_naming_them(server, path, body, param):
    err = assert_openai_error(post(server, path, body), 400, param)
    assert err["type"] == "invalid_request_error"


def post_text(server, path, text):
    return requests.post(server.url + path, data=text, headers={"Content-Type": "application/json"},
                         timeout=TIMEOUT)


def test_a_malformed_body_is_a_400_naming_its_offset(server):
    # The list's "]" is missing: at byte 61 a ":" comes where "," or "]" would. The message says
    # where, and the error names the field it was met in.
    text = b'{"messages": [{"role": "user", "content": "Hi"}, "max_tokens": 2}'
    err = assert_openai_error(post_text(server, "/v1/chat/completions", text), 400, "messages")
    assert "not valid JSON" in err["message"] and "at byte 61" in err["message"], err
    # Outside any field (between members) there is none to name.
    err = assert_openai_error(post_text(server, "/v1/completions", b'{"prompt": "x" "max_tokens": 2}'), 400, None)
    assert "at byte 15" in err["message"], err
    err = assert_openai_error(post_text(server, "/v1/completions", b'["prompt"]'), 400, None)
    assert "must be a JSON object" in err["message"], err


@pytest.mark.parametrize("path,text,param", [
    ("/v1/completions", b'{"prompt": "x", "temperature": 0, "temperature": 1}', "temperature"),
    ("/v1/chat/completions", b'{"messages": [{"role": "user", "role": "system", "content": "x"}]}',
     "messages[0].role"),
    ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x"}], "stream": true, '
                             b'"stream_options": {"include_usage": true, "include_usage": false}}',
     "stream_options.include_usage"),
    # Two names of one limit: which counts would be a guess too.
    ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": 2, '
                             b'"max_completion_tokens": 3}', "max_completion_tokens"),
])
def test_a_member_given_twice_is_a_400_naming_it(server, path, text, param):
    err = assert_openai_error(post_text(server, path, text), 400, param)
    assert "twice" in err["message"] or "one limit" in err["message"], err


def test_an_unknown_field_with_a_hostile_name_is_quoted(server):
    name = "x\n" + "y" * 500
    # Quoted, its control byte escaped, cut at 160 bytes (graphrt::quote_untrusted).
    quoted = "'x\\x0a" + "y" * 158 + "'... (502 bytes)"
    err = assert_openai_error(post(server, "/v1/completions", {"prompt": "x", name: 1}), 400, quoted)
    assert "\n" not in err["message"] and "y" * 159 not in err["message"], err


def test_an_unknown_model_is_404(server):
    err = assert_openai_error(post(server, "/v1/completions", {"model": "nope", "prompt": "x"}), 404, "model")
    assert err["code"] == "model_not_found"


def test_a_prompt_longer_than_the_context_is_400(server):
    r = post(server, "/v1/completions", {"prompt": "hello " * 5000, "max_tokens": 2, "stream": True})
    assert r.status_code == 400, r.text
    assert "error" in r.json()


def test_get_on_a_post_endpoint_is_405(server):
    r = requests.get(server.url + "/v1/completions", timeout=TIMEOUT)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"


def test_triton_generate_with_text(server):
    c = case()["greedy_completions"][0]
    r = post(server, "/v2/models/chat/generate", {"id": "g1", "text_input": c["prompt"],
                                                  "parameters": {"max_tokens": 16, "temperature": 0}})
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "g1", "model_name": "chat", "model_version": "1", "text_output": c["text"],
                        "finish_reason": "length"}
    # Top-level fields, as TensorRT-LLM clients send them.
    r = post(server, "/v2/models/chat/generate", {"text_input": c["prompt"], "max_tokens": 16, "temperature": 0.0,
                                                  "stream": False, "stop_words": "", "bad_words": ""})
    assert r.json()["text_output"] == c["text"], r.text
    r = post(server, "/v2/models/chat/generate_stream", {"text_input": c["prompt"], "max_tokens": 16,
                                                         "temperature": 0}, stream=True)
    ev = events(r)
    assert "".join(e["text_output"] for e in ev) == c["text"]
    assert ev[-1]["finish_reason"] == "length"


@pytest.mark.parametrize("body,field", [
    ({"text_input": "x", "bogus": 1}, "bogus"),
    ({"text_input": "x", "max_tokens": 2, "parameters": {"max_tokens": 3}}, "max_tokens"),
    ({"text_input": "x", "temperature": -2}, "temperature"),
    ({"text_input": "x", "beam_width": 4}, "beam_width"),
])
def test_triton_generate_errors_name_the_field(server, body, field):
    r = post(server, "/v2/models/chat/generate", body)
    assert r.status_code == 400, r.text
    assert field in r.json()["error"]


def test_triton_generate_refuses_a_member_given_twice_and_names_malformed_text(server):
    r = post_text(server, "/v2/models/chat/generate", b'{"text_input": "x", "parameters": {"temperature": 0, '
                                                      b'"temperature": 1}}')
    assert r.status_code == 400 and "given twice in one object" in r.json()["error"], r.text
    r = post_text(server, "/v2/models/chat/generate", b'{"text_input": "x", "max_tokens": 2,}')
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"] and "at byte 36" in r.json()["error"], r.text


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory):
    key_file = tmp_path_factory.mktemp("key") / "key"
    key_file.write_text("s3cret-key\n")
    with Server(mlc_repo(tmp_path_factory), "--api-key-file", str(key_file)) as s:
        yield s


def test_the_api_key_guards_v1(keyed_server):
    s = keyed_server
    body = {"prompt": "Hi", "max_tokens": 2}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-key"},
                    {"Authorization": "Bearer s3cret-ke"}, {"Authorization": "Bearer s3cret-keyy"}):
        r = requests.post(s.url + "/v1/completions", json=body, headers=headers, timeout=TIMEOUT)
        err = assert_openai_error(r, 401, None)
        assert err["code"] == "invalid_api_key"
    assert requests.get(s.url + "/v1/models", timeout=TIMEOUT).status_code == 401
    good = {"Authorization": "Bearer s3cret-key"}
    assert requests.post(s.url + "/v1/completions", json=body, headers=good, timeout=TIMEOUT).status_code == 200
    assert requests.get(s.url + "/v1/models", headers=good, timeout=TIMEOUT).status_code == 200
    # The Open Inference Protocol's endpoints are not behind the key (as before).
    assert requests.get(s.url + "/v2/health/ready", timeout=TIMEOUT).status_code == 200


def test_an_api_key_on_the_command_line(tmp_path_factory):
    with Server(mlc_repo(tmp_path_factory), "--api-key", "k1") as s:
        r = requests.get(s.url + "/v1/models", headers={"Authorization": "Bearer k1"}, timeout=TIMEOUT)
        assert r.status_code == 200
        assert requests.get(s.url + "/v1/models", timeout=TIMEOUT).status_code == 401


def npm_openai(tmp_path_factory):
    """A folder with the official openai npm package (v5) installed; skips without npm or network."""
    import shutil
    import subprocess
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm not installed (the openai npm client test needs them)")
    d = tmp_path_factory.mktemp("npm")
    try:
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(d), "openai@5"],
                           capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install openai@5 took over 180 s (no network?)")
    if r.returncode != 0 or not (d / "node_modules" / "openai").is_dir():
        pytest.skip("npm install openai@5 failed (no network?): %s" % (r.stderr or r.stdout)[-300:])
    return d


def test_the_official_openai_npm_client(server, tmp_path_factory):
    import shutil
    import subprocess
    d = npm_openai(tmp_path_factory)
    script = d / "client.mjs"
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "openai_npm_client.mjs"), script)
    r = subprocess.run(["node", str(script), server.url, os.path.join(case_dir(), "case.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    c = case()
    g = c["greedy_completions"][0]
    assert got["completion"] == g["text"]
    assert got["usage"]["completion_tokens"] == len(g["output_ids"])
    assert got["chat"] == c["chat"]["text"]
    assert got["chat_stream"] == c["chat"]["text"]
    assert got["chat_stream_usage"]["completion_tokens"] == len(c["chat"]["output_ids"])
    assert got["not_found"] == {"status": 404, "name": "NotFoundError", "param": "model", "code": "model_not_found"}
    assert got["bad"] == {"status": 400, "name": "BadRequestError", "param": "temperature"}
