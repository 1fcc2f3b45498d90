"""Continuous batching of an MLC-LLM model folder (fixtures/mlc/tiny_gpt2_chat served as it is): concurrent
requests share one KV cache and decode together (the decode passes' mean batch is above one), yet each answer
is the fixture's text (case.json: TVM's run, MLC's tokenizer) and a seeded sample is the same alone and among
eight; a prompt the cache cannot hold and a full queue are errors naming the setting that raises the limit;
a client that goes away mid-stream frees its sequence at the next step; the batching metrics are a language
model's only."""
import json
import os
import re
import socket
import threading
import time

import pytest

from _server import Server, add_model, fixture_root, fixtures_dir, graph_cases, require_module

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


def mlc_repo(tmp_path_factory, config=None, with_graph=False):
    d = case_dir()
    repo = str(tmp_path_factory.mktemp("repo"))
    files = {n: os.path.join(d, n) for n in os.listdir(d) if not n.startswith("expected_") and n != "case.json"}
    add_model(repo, "chat", files, config=config)
    if with_graph:
        cases = graph_cases()
        if not cases:
            pytest.skip("no graph fixture")
        name, model = dict(cases).get("mlp") and ("mlp", dict(cases)["mlp"]) or cases[0]
        add_model(repo, "plain", {model: os.path.join(fixtures_dir(), name, model)})
    return repo


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Server(mlc_repo(tmp_path_factory, with_graph=True)) as s:
        yield s


def post(server, path, body, **kw):
    return requests.post(server.url + path, json=body, timeout=TIMEOUT, **kw)


def metrics(server):
    return requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=TIMEOUT).text


def metric(text, name, model="chat"):
    m = re.search(r'^%s\{model="%s",version="1"\} (\S+)$' % (re.escape(name), model), text, re.M)
    assert m, "%s{model=%s} missing" % (name, model)
    return float(m.group(1))


def streamed_text(r, chat):
    out = []
    for line in r.iter_lines():
        if not line:
            continue
        assert line.startswith(b"data: "), line
        data = line[len(b"data: "):]
        if data == b"[DONE]":
            break
        e = json.loads(data)
        assert "error" not in e, e
        for c in e["choices"]:
            out.append((c["delta"].get("content") or "") if chat else c["text"])
    return "".join(out)


def answer(server, body, chat):
    """The text of one request (streamed or not), or the failed response."""
    path = "/v1/chat/completions" if chat else "/v1/completions"
    r = post(server, path, body, stream=bool(body.get("stream")))
    assert r.status_code == 200, r.text
    if body.get("stream"):
        return streamed_text(r, chat)
    c = r.json()["choices"][0]
    return c["message"]["content"] if chat else c["text"]


def run_together(server, jobs):
    """[(body, chat)] sent at once, each from its own thread; their texts in order."""
    results = [None] * len(jobs)
    errors = []
    start = threading.Barrier(len(jobs))

    def one(i):
        try:
            start.wait(10)
            results[i] = answer(server, *jobs[i])
        except Exception as e:  # reported below, with the job
            errors.append((jobs[i], repr(e)))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors, errors
    return results


def eight_greedy_jobs():
    c = case()
    jobs, want = [], []
    for i, g in enumerate(c["greedy_completions"] * 2):
        jobs.append(({"prompt": g["prompt"], "max_tokens": g["max_tokens"], "temperature": 0, "stream": i % 2 == 0},
                     False))
        want.append(g["text"])
    chat = c["chat"]
    for stream in (False, True):
        jobs.append(({"messages": chat["messages"], "max_tokens": chat["max_tokens"], "temperature": 0,
                      "stream": stream}, True))
        want.append(chat["text"])
    return jobs, want


def test_eight_concurrent_requests_batch_and_give_the_fixtures_text(server):
    before = metrics(server)
    passes0 = metric(before, "graphrt_generate_decode_passes_total")
    rows0 = metric(before, "graphrt_generate_decode_pass_sequences_total")
    jobs, want = eight_greedy_jobs()
    assert len(jobs) == 8
    assert run_together(server, jobs) == want
    after = metrics(server)
    passes = metric(after, "graphrt_generate_decode_passes_total") - passes0
    rows = metric(after, "graphrt_generate_decode_pass_sequences_total") - rows0
    # Alone, 8 requests of 12-16 tokens take about 110 single-row passes; together the passes hold several rows.
    assert passes > 0 and rows / passes > 2.0, (passes, rows)


def test_a_seeded_sample_is_the_same_alone_and_in_a_batch_of_eight(server):
    prompt = case()["greedy_completions"][1]["prompt"]
    body = {"prompt": prompt, "max_tokens": 16, "temperature": 1.0, "top_p": 0.9, "seed": 42}
    alone = answer(server, body, False)
    others = [({"prompt": g["prompt"], "max_tokens": 24, "temperature": 0.8, "seed": 100 + i, "stream": i % 2 == 1},
               False) for i, g in enumerate(case()["greedy_completions"] * 2)]
    chat = case()["chat"]
    others.append(({"messages": chat["messages"], "max_tokens": 10, "temperature": 1.0, "seed": 7}, True))
    texts = run_together(server, [(body, False)] + others)
    assert texts[0] == alone
    assert answer(server, dict(body, seed=43), False) != alone  # the seed matters


def test_n_choices_batch_together_each_as_its_seed_alone(server):
    body = {"prompt": case()["greedy_completions"][0]["prompt"], "max_tokens": 8, "temperature": 1.0, "seed": 5}
    r = post(server, "/v1/completions", dict(body, n=3))
    assert r.status_code == 200, r.text
    texts = [c["text"] for c in sorted(r.json()["choices"], key=lambda c: c["index"])]
    assert texts == [answer(server, dict(body, seed=5 + i), False) for i in range(3)]


def test_metrics_are_a_language_models_only(server):
    answer(server, {"prompt": "Hello", "max_tokens": 3, "temperature": 0}, False)
    text = metrics(server)
    for name in ("graphrt_generate_tokens_total", "graphrt_generate_running_sequences",
                 "graphrt_generate_waiting_sequences", "graphrt_generate_kv_cache_pages_in_use",
                 "graphrt_generate_kv_cache_pages", "graphrt_generate_kv_cache_tokens_in_use",
                 "graphrt_generate_request_success_total", "graphrt_generate_request_failure_total"):
        metric(text, name)
    assert metric(text, "graphrt_generate_kv_cache_pages") == 2048 / 16  # the context window in pages of 16
    assert metric(text, "graphrt_generate_tokens_total") >= 3
    assert re.search(r'^graphrt_generate_time_to_first_token_seconds_count\{model="chat",version="1"\} [1-9]', text,
                     re.M)
    assert re.search(r'^graphrt_generate_token_latency_seconds_count\{model="chat",version="1"\} [1-9]', text, re.M)
    # The graph model (loaded and ready) has the inference series and no generate one.
    assert requests.get(server.url + "/v2/models/plain/ready", timeout=TIMEOUT).status_code == 200
    metric(text, "graphrt_inference_request_success_total", model="plain")
    assert not [l for l in text.splitlines() if l.startswith("graphrt_generate_") and 'model="plain"' in l]


def test_idle_gauges_return_to_zero(server):
    answer(server, {"prompt": "Hello", "max_tokens": 2, "temperature": 0}, False)
    deadline = time.time() + 5
    while True:
        text = metrics(server)
        if metric(text, "graphrt_generate_running_sequences") == 0 or time.time() > deadline:
            break
        time.sleep(0.05)
    assert metric(text, "graphrt_generate_running_sequences") == 0
    assert metric(text, "graphrt_generate_waiting_sequences") == 0
    assert metric(text, "graphrt_generate_kv_cache_pages_in_use") == 0


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    """A cache of 64 tokens (4 pages), one sequence at a time, two requests may wait."""
    config = {"max_queue_size": 2, "generation": {"max_total_seq_len": 64, "max_batch_size": 1}}
    with Server(mlc_repo(tmp_path_factory, config=config)) as s:
        yield s


def test_a_prompt_longer_than_the_cache_names_the_setting(small_server):
    failures = metric(metrics(small_server), "graphrt_generate_request_failure_total")
    prompt = "The capital of France is " * 20  # 100 tokens
    for stream in (False, True):
        r = post(small_server, "/v1/completions", {"prompt": prompt, "max_tokens": 4, "stream": stream})
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["param"] == "prompt", err
        assert "generation.max_total_seq_len" in err["message"] and "64" in err["message"], err
    r = post(small_server, "/v2/models/chat/generate", {"text_input": prompt, "parameters": {"max_tokens": 4}})
    assert r.status_code == 400 and "generation.max_total_seq_len" in r.text, r.text
    assert metric(metrics(small_server), "graphrt_generate_request_failure_total") == failures + 3
    # The server goes on: a request that fits is answered with the fixture's text.
    g = case()["greedy_completions"][0]
    assert answer(small_server, {"prompt": g["prompt"], "max_tokens": 16, "temperature": 0}, False) == g["text"]


def test_requests_the_routes_refuse_count_as_failures(small_server):
    failures = metric(metrics(small_server), "graphrt_generate_request_failure_total")
    r = post(small_server, "/v1/completions", {"model": "chat", "prompt": "Hi", "temperature": -1})
    assert r.status_code == 400 and r.json()["error"]["param"] == "temperature", r.text
    r = post(small_server, "/v1/chat/completions", {"model": "chat", "messages": [{"role": "user", "content": "Hi"}],
                                                     "top_p": 2})
    assert r.status_code == 400 and r.json()["error"]["param"] == "top_p", r.text
    r = post(small_server, "/v2/models/chat/generate", {"text_input": "Hi", "parameters": {"top_k": -3}})
    assert r.status_code == 400 and "top_k" in r.text, r.text
    r = requests.post(small_server.url + "/v2/models/chat/generate", data=b'{"text_input": ', timeout=TIMEOUT)
    assert r.status_code == 400, r.text
    assert metric(metrics(small_server), "graphrt_generate_request_failure_total") == failures + 4


def test_a_full_queue_is_refused_naming_the_setting(small_server):
    # One sequence runs, two wait; more at once are refused with 429 naming max_queue_size.
    g = case()["greedy_completions"]
    statuses, bodies = [], []
    lock = threading.Lock()

    def one(i):
        r = post(small_server, "/v1/completions", {"prompt": g[i % 3]["prompt"], "max_tokens": 40, "temperature": 0})
        with lock:
            statuses.append(r.status_code)
            bodies.append(r.text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert statuses.count(200) >= 2, (statuses, bodies)
    refused = [b for s, b in zip(statuses, bodies) if s != 200]
    assert refused, statuses
    for b in refused:
        err = json.loads(b)["error"]
        assert "max_queue_size" in err["message"], err
    assert set(statuses) <= {200, 429}, statuses


def open_stream(server, body):
    """A raw socket that sent a streamed completion and read its first event."""
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=TIMEOUT)
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(data) + data)
    got = b""
    while b"data: " not in got:
        chunk = s.recv(4096)
        assert chunk, got
        got += chunk
    return s


def test_a_client_that_goes_away_frees_its_sequence(small_server):
    # The one sequence the cache holds runs a long completion; its client goes away mid-stream.
    before = metric(metrics(small_server), "graphrt_generate_request_cancelled_total")
    s = open_stream(small_server, {"prompt": "Once upon a time,", "max_tokens": 58, "temperature": 0, "stream": True})
    s.close()
    deadline = time.time() + 10
    while time.time() < deadline:
        text = metrics(small_server)
        if metric(text, "graphrt_generate_request_cancelled_total") > before:
            break
        time.sleep(0.02)
    assert metric(text, "graphrt_generate_request_cancelled_total") == before + 1
    # Its sequence left the cache: the next request, which needs the whole cache (7 + 57 tokens), runs.
    g = case()["greedy_completions"][2]
    text = answer(small_server, {"prompt": g["prompt"], "max_tokens": 57, "temperature": 0}, False)
    assert text.startswith(g["text"]), text
    assert metric(metrics(small_server), "graphrt_generate_running_sequences") == 0
