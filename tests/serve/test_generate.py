"""The generate extension (POST /v2/models/M/generate and generate_stream) on a language model compiled
by TVM on its paged KV cache (fixtures/relax-ffi/relax_tiny_llm_gqa): the tokens are the greedy tokens of
the step-by-step run (graphrt's TVM shim driving the same executable, and the fixture's own logits for the
first two), streamed event by event, the same under concurrent requests; a client that goes away gets its
sequence removed (the small cache would otherwise be full); bad requests are 400s naming the field."""
import json
import os
import re
import socket
import sys
import threading
import time

import pytest

from _server import Server, add_model, fixture_root, graph_cases, require_module

requests = require_module("requests")
np = require_module("numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

CASE = os.path.join("relax-ffi", "relax_tiny_llm_gqa")
# A cache for 4 sequences of up to 4096 tokens: long requests take long enough to be cancelled mid-way.
BIG = {"max_batch_size": 4, "max_total_seq_len": 4096, "prefill_chunk_size": 16, "page_size": 16}
PROMPTS = [[24, 3, 56, 72, 0], [1, 2, 3], [90, 17, 5, 5, 64, 33, 8], [7]]
TIMEOUT = 60


def case_dir():
    d = os.path.join(fixture_root(), CASE)
    if not os.path.isfile(os.path.join(d, "deploy_relax.so")):
        pytest.skip("fixture %s missing" % CASE)
    return d


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = case_dir()
    repo = str(tmp_path_factory.mktemp("repo"))
    so = {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}
    add_model(repo, "llm", so)  # no config.json: MLC's function names, the fixture's cache sizes
    add_model(repo, "llm_big", so, config={"generation": BIG})
    cases = graph_cases()
    if cases:
        name, model = cases[0]
        add_model(repo, "not_llm", {model: os.path.join(fixture_root(), name, model)})
    with Server(repo) as s:
        yield s


def greedy_steps(prompt, n, chunk=16):
    """The first n greedy tokens after `prompt`, by driving the executable step by step in this process
    (graphrt's TVM shim, as MLC's engine does), the prompt prefilled in chunks as the server does."""
    import graphrt
    d = case_dir()
    vm = graphrt.runtime.vm.VirtualMachine(graphrt.runtime.load_module(os.path.join(d, "deploy_relax.so")),
                                           graphrt.cpu())
    S = graphrt.runtime.ShapeTuple
    g = graphrt.get_global_func
    cache = vm["create_tir_paged_kv_cache"](S([1]), S([4096]), S([chunk]), S([16]), S([0]))
    g("vm.builtin.kv_state_add_sequence")(cache, 0)

    def step(fn, ids):
        nonlocal cache
        g("vm.builtin.kv_state_begin_forward")(cache, S([0]), S([len(ids)]))
        logits, cache = vm[fn](graphrt.runtime.tensor(np.array([ids], dtype="int32")), cache)
        g("vm.builtin.kv_state_end_forward")(cache)
        return int(np.argmax(logits.numpy().reshape(-1, logits.shape[-1])[-1]))

    for at in range(0, len(prompt), chunk):
        token = step("prefill", prompt[at:at + chunk])
    out = [token]
    while len(out) < n:
        out.append(step("decode", [out[-1]]))
    return out


def generate(server, model, body, stream=False):
    path = "/v2/models/%s/generate%s" % (model, "_stream" if stream else "")
    return requests.post(server.url + path, json=body, timeout=TIMEOUT, stream=stream)


def stream_events(r):
    """The JSON of each server-sent event, in order."""
    events = []
    for line in r.iter_lines():
        if line:
            assert line.startswith(b"data: "), line
            events.append(json.loads(line[len(b"data: "):]))
    return events


def metric(server, name, model):
    text = requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=TIMEOUT).text
    m = re.search(r'^%s\{model="%s",version="1"\} (\S+)$' % (name, model), text, re.M)
    return float(m.group(1)) if m else None


def test_the_first_tokens_are_the_fixtures_argmax(server):
    d = case_dir()
    prompt = np.load(os.path.join(d, "input_ids_prefill.npy")).ravel().tolist()
    # The fixture's decode inputs are the argmax of the logits before them: TVM's own greedy tokens.
    want = [int(np.load(os.path.join(d, f)).ravel().argmax()) for f in
            ("output_prefill_logits.npy", "output_decode0_logits.npy", "output_decode1_logits.npy")]
    assert want[:2] == [int(np.load(os.path.join(d, "input_ids_decode%d.npy" % i)).ravel()[0]) for i in (0, 1)]
    r = generate(server, "llm", {"id": "q1", "input_ids": prompt, "parameters": {"max_tokens": 3}})
    assert r.status_code == 200, r.text
    assert r.json() == {"id": "q1", "model_name": "llm", "model_version": "1", "output_ids": want,
                        "finish_reason": "length"}


@pytest.mark.parametrize("model", ["llm", "llm_big"])
def test_generate_gives_the_step_by_step_tokens(server, model):
    for prompt in PROMPTS:
        n = 40
        r = generate(server, model, {"input_ids": prompt, "max_tokens": n})
        assert r.status_code == 200, r.text
        assert r.json()["output_ids"] == greedy_steps(prompt, n), prompt


def test_a_long_prompt_is_prefilled_in_chunks(server):
    prompt = [(i * 37) % 96 for i in range(40)]  # 3 chunks of 16
    r = generate(server, "llm", {"input_ids": prompt, "max_tokens": 10})
    assert r.status_code == 200, r.text
    assert r.json()["output_ids"] == greedy_steps(prompt, 10)


def test_the_stream_gives_the_same_tokens_event_by_event(server):
    prompt = PROMPTS[2]
    whole = generate(server, "llm", {"input_ids": prompt, "max_tokens": 12}).json()["output_ids"]
    r = generate(server, "llm", {"input_ids": prompt, "parameters": {"max_tokens": 12}}, stream=True)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/event-stream")
    events = stream_events(r)
    assert [e["output_ids"] for e in events] == [[t] for t in whole]
    assert [e["finish_reason"] for e in events] == [None] * 11 + ["length"]
    assert all(e["model_name"] == "llm" and e["model_version"] == "1" for e in events)


def test_a_stop_token_ends_the_request_and_is_its_last_token(server):
    prompt = PROMPTS[0]
    tokens = greedy_steps(prompt, 10)
    stop = tokens[4]
    cut = tokens.index(stop) + 1
    r = generate(server, "llm", {"input_ids": prompt, "max_tokens": 10, "stop_token_ids": [95, stop]})
    assert r.json()["output_ids"] == tokens[:cut] and r.json()["finish_reason"] == "stop"
    events = stream_events(generate(server, "llm", {"input_ids": prompt, "max_tokens": 10,
                                                    "parameters": {"stop_token_ids": [stop]}}, stream=True))
    assert [e["output_ids"][0] for e in events] == tokens[:cut] and events[-1]["finish_reason"] == "stop"


def test_four_concurrent_requests_give_the_tokens_they_give_alone(server):
    n = 200
    alone = [generate(server, "llm_big", {"input_ids": p, "max_tokens": n}).json()["output_ids"] for p in PROMPTS]
    results = [None] * len(PROMPTS)

    def run(i):
        stream = i % 2 == 1
        r = generate(server, "llm_big", {"input_ids": PROMPTS[i], "max_tokens": n}, stream=stream)
        results[i] = [e["output_ids"][0] for e in stream_events(r)] if stream else r.json()["output_ids"]

    for _ in range(2):
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(PROMPTS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        assert results == alone


def raw_request(server, path, body):
    """A socket that sent a generate request; the caller reads what it wants and closes it."""
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT)
    data = json.dumps(body).encode()
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
              % (path.encode(), len(data), data))
    return s


def test_a_client_that_goes_away_has_its_sequence_removed(server):
    # "llm" holds one sequence of at most 64 tokens: a sequence left in the cache would make every later
    # request wait forever. llm_big's long requests are cancelled mid-way: their tokens stop.
    before = metric(server, "graphrt_generate_request_cancelled_total", "llm_big") or 0
    tokens_before = metric(server, "graphrt_generate_tokens_total", "llm_big") or 0
    rounds = 12
    for i in range(rounds):
        s = raw_request(server, "/v2/models/llm_big/generate_stream", {"input_ids": PROMPTS[i % 4], "max_tokens": 4000})
        got = b""
        while b"data: " not in got:
            got += s.recv(4096)
        assert got.startswith(b"HTTP/1.1 200")
        s.close()  # mid-stream
        # The plain generate: the client leaves before its answer.
        s = raw_request(server, "/v2/models/llm_big/generate", {"input_ids": PROMPTS[i % 4], "max_tokens": 4000})
        time.sleep(0.01)
        s.close()
    deadline = time.time() + TIMEOUT
    while (metric(server, "graphrt_generate_request_cancelled_total", "llm_big") or 0) < before + 2 * rounds:
        assert time.time() < deadline, "the cancelled requests were not all seen"
        time.sleep(0.05)
    generated = metric(server, "graphrt_generate_tokens_total", "llm_big") - tokens_before
    assert generated < rounds * 4000, generated  # stopped mid-way, not run to max_tokens
    # The cache is empty again: requests that need all of it still run, with the same tokens.
    r = generate(server, "llm_big", {"input_ids": PROMPTS[0], "max_tokens": 4000})
    assert r.status_code == 200 and len(r.json()["output_ids"]) == 4000
    for i in range(rounds):  # the small cache: one sequence at a time, each cancelled after its first event
        s = raw_request(server, "/v2/models/llm/generate_stream", {"input_ids": PROMPTS[0], "max_tokens": 59})
        s.recv(1)
        s.close()
    r = generate(server, "llm", {"input_ids": PROMPTS[0], "max_tokens": 59})
    assert r.status_code == 200 and r.json()["output_ids"] == greedy_steps(PROMPTS[0], 59)


def error_of(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    return r.json()["error"]


@pytest.mark.parametrize("body,field,words", [
    ({"input_ids": "24 3 56"}, "input_ids", "array"),
    ({"input_ids": [24, 1.5]}, "input_ids", "element 1"),
    ({"input_ids": [24, True]}, "input_ids", "element 1"),
    ({"input_ids": [24, -1]}, "input_ids", "element 1"),
    ({"input_ids": [24, 96]}, "input_ids", "vocabulary [0, 96)"),
    ({"input_ids": [24, 2 ** 40]}, "input_ids", "element 1"),
    ({"input_ids": []}, "input_ids", "empty"),
    ({"max_tokens": 3}, "input_ids", "missing"),
    ({"input_ids": [1], "max_tokens": 0}, "max_tokens", "at least 1"),
    ({"input_ids": [1], "max_tokens": "8"}, "max_tokens", "integer"),
    ({"input_ids": [1], "max_tokens": 64}, "max_tokens", "at most 63"),
    ({"input_ids": [1] * 64}, "input_ids", "64 tokens"),
    ({"input_ids": [1], "max_tokens": 2, "parameters": {"max_tokens": 2}}, "max_tokens", "twice"),
    ({"input_ids": [1], "stop_token_ids": [200]}, "stop_token_ids", "vocabulary"),
    ({"input_ids": [1], "stop_token_ids": 2}, "stop_token_ids", "array"),
    ({"input_ids": [1], "parameters": []}, "parameters", "object"),
    ({"input_ids": [1], "id": 5}, "id", "string"),
    ({"text_input": "hello"}, "text_input", "tokenizer"),
    ({"input_ids": [1], "inputs": []}, "inputs", "unknown field"),
    ([1, 2, 3], "body", "object"),
    ({"input_ids": [[[[1]]]]}, "body", "nested"),
])
def test_bad_requests_are_400_naming_the_field(server, body, field, words):
    for stream in (False, True):
        e = error_of(generate(server, "llm", body, stream=stream), 400)
        assert "field: %s" % field in e and words in e and "model: llm" in e, e


def test_malformed_json_and_other_models(server):
    r = requests.post(server.url + "/v2/models/llm/generate", data=b"{not json", timeout=TIMEOUT)
    assert "field: body" in error_of(r, 400)
    if graph_cases():
        e = error_of(generate(server, "not_llm", {"input_ids": [1]}), 400)
        assert "not a language model on a KV cache" in e and "field: generation" in e
    assert error_of(generate(server, "nope", {"input_ids": [1]}), 404)
    r = requests.get(server.url + "/v2/models/llm/generate", timeout=TIMEOUT)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    r = requests.post(server.url + "/v2/models/llm/infer", timeout=TIMEOUT,
                      json={"inputs": [{"name": "input_ids", "datatype": "INT32", "shape": [1], "data": [1]}]})
    assert "generate" in error_of(r, 400)
    meta = requests.get(server.url + "/v2/models/llm", timeout=TIMEOUT).json()
    assert meta["inputs"] == [{"name": "input_ids", "datatype": "INT32", "shape": [-1]}]
    assert "generate" in requests.get(server.url + "/v2", timeout=TIMEOUT).json()["extensions"]
    # The server is still well after all of it.
    assert generate(server, "llm", {"input_ids": [1], "max_tokens": 2}).status_code == 200


def test_per_token_latency_is_in_the_metrics(server):
    generate(server, "llm", {"input_ids": PROMPTS[1], "max_tokens": 20})
    text = requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=TIMEOUT).text
    assert "# TYPE graphrt_generate_token_latency_seconds histogram" in text
    count = metric(server, "graphrt_generate_token_latency_seconds_count", "llm")
    first = metric(server, "graphrt_generate_time_to_first_token_seconds_count", "llm")
    assert count >= 19 and first >= 1
    assert re.search(r'^graphrt_generate_token_latency_seconds_bucket\{model="llm",version="1",le="\+Inf"\} %d$'
                     % count, text, re.M)
    assert metric(server, "graphrt_generate_tokens_total", "llm") >= 20


def test_config_errors_name_the_field(tmp_path):
    d = case_dir()
    so = {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}
    add_model(str(tmp_path), "bad_key", so, config={"generation": {"page_sise": 16}})
    add_model(str(tmp_path), "bad_fn", so, config={"generation": {"decode": "batch_decode"}})
    add_model(str(tmp_path), "ok", so, config={"generation": {"max_batch_size": 2}})
    with Server(str(tmp_path)) as s:
        index = {m["name"]: m for m in requests.post(s.url + "/v2/repository/index", timeout=TIMEOUT).json()}
        assert index["ok"]["state"] == "READY"
        assert "generation.page_sise" in index["bad_key"]["reason"]
        assert "generation.decode" in index["bad_fn"]["reason"] and "batch_decode" in index["bad_fn"]["reason"]
        assert generate(s, "ok", {"input_ids": [1], "max_tokens": 3}).json()["output_ids"] == greedy_steps([1], 3)
