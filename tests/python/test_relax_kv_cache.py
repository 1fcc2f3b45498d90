"""A language model on TVM's paged KV cache (fixtures/relax-ffi/relax_tiny_llm_gqa, TVM v0.26): driven
step by step under TVM's names as MLC's engine drives it (create_tir_paged_kv_cache, kv_state_add_sequence,
begin_forward / prefill or decode / end_forward), every logit TVM's bit for bit; the cache's sequence
operations (popn, fork, remove) with the model's own kernels; misuse ends in one error naming the builtin."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt
from _cases import case_dir

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
CASE = "relax-ffi/relax_tiny_llm_gqa"

# A TVM v0.26 user's code (MLC's engine loop, reduced): nothing graphrt-specific but the first line.
V026_ENGINE_CODE = """
import json, sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
from tvm.runtime import vm as relax_vm
d = sys.argv[1]
case = json.load(open(d + "/case.json"))
vm = relax_vm.VirtualMachine(tvm.runtime.load_module(d + "/deploy_relax.so"), tvm.cpu())
cfg = case["cache_config"]
cache = vm["create_tir_paged_kv_cache"](*[tvm.runtime.ShapeTuple([cfg[k]]) for k in
    ("max_batch_size", "max_total_seq_len", "prefill_chunk_size", "page_size", "support_sliding_window")])
g = tvm.get_global_func
g("vm.builtin.kv_state_add_sequence")(cache, 0)
for step, name in (("prefill", "prefill"), ("decode", "decode0"), ("decode", "decode1")):
    ids = np.load(f"{d}/input_ids_{name}.npy")
    g("vm.builtin.kv_state_begin_forward")(cache, tvm.runtime.ShapeTuple([0]), tvm.runtime.ShapeTuple([ids.shape[1]]))
    logits, cache = vm[step](tvm.runtime.tensor(ids, tvm.cpu()), cache)
    g("vm.builtin.kv_state_end_forward")(cache)
    want = np.load(f"{d}/output_{name}_logits.npy")
    assert logits.numpy().tobytes() == want.tobytes(), name
print("total", g("vm.builtin.attention_kv_cache_get_total_sequence_length")(cache))
"""


def test_tvm_v026_engine_code_gets_tvms_logits_bit_for_bit(lib_ok):
    d = case_dir(CASE)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", V026_ENGINE_CODE, d], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "total 7"


class Model:
    """The fixture's VM and a cache, with the engine's calls by name."""

    def __init__(self):
        self.dir = case_dir(CASE)
        self.case = json.load(open(os.path.join(self.dir, "case.json")))
        self.vm = graphrt.runtime.vm.VirtualMachine(
            graphrt.runtime.load_module(os.path.join(self.dir, "deploy_relax.so")), graphrt.cpu())
        cfg = self.case["cache_config"]
        self.cache = self.vm["create_tir_paged_kv_cache"](*[graphrt.runtime.ShapeTuple([cfg[k]]) for k in (
            "max_batch_size", "max_total_seq_len", "prefill_chunk_size", "page_size", "support_sliding_window")])

    def g(self, name, *args):
        return graphrt.get_global_func("vm.builtin." + name)(self.cache, *args)

    def step(self, seq, ids):
        ids = np.asarray(ids, dtype="int32").reshape(1, -1)
        self.g("kv_state_begin_forward", graphrt.runtime.ShapeTuple([seq]),
               graphrt.runtime.ShapeTuple([ids.shape[1]]))
        logits, self.cache = self.vm["prefill" if ids.shape[1] > 1 else "decode"](
            graphrt.runtime.tensor(ids), self.cache)
        self.g("kv_state_end_forward")
        return logits.numpy()

    def load(self, name):
        return np.load(os.path.join(self.dir, name))


def test_popn_then_the_same_token_gives_the_same_logits(lib_ok):
    m = Model()
    m.g("kv_state_add_sequence", 0)
    m.step(0, m.load("input_ids_prefill.npy"))
    token = m.load("input_ids_decode0.npy")
    first = m.step(0, token)
    assert first.tobytes() == m.load("output_decode0_logits.npy").tobytes()
    m.g("kv_state_popn", 0, 1)
    assert m.g("attention_kv_cache_get_total_sequence_length") == 5
    assert m.step(0, token).tobytes() == first.tobytes()


def test_a_forked_sequence_continues_from_its_parents_tokens(lib_ok):
    m = Model()
    m.g("kv_state_add_sequence", 0)
    m.step(0, m.load("input_ids_prefill.npy"))
    m.g("kv_state_fork_sequence", 0, 1, -1)
    assert m.g("attention_kv_cache_get_total_sequence_length") == 10
    # The child decodes what the parent would: TVM's decode0 logits, then decode1's.
    assert m.step(1, m.load("input_ids_decode0.npy")).tobytes() == m.load("output_decode0_logits.npy").tobytes()
    assert m.step(1, m.load("input_ids_decode1.npy")).tobytes() == m.load("output_decode1_logits.npy").tobytes()
    # And the parent, untouched by the child's tokens, still does too.
    assert m.step(0, m.load("input_ids_decode0.npy")).tobytes() == m.load("output_decode0_logits.npy").tobytes()
    pages = m.g("attention_kv_cache_get_num_available_pages")
    m.g("kv_state_remove_sequence", 1)
    assert m.g("attention_kv_cache_get_num_available_pages") > pages
    assert m.g("attention_kv_cache_get_total_sequence_length") == 6


def test_cache_misuse_raises_one_error_naming_the_builtin(lib_ok):
    m = Model()
    m.g("kv_state_add_sequence", 0)
    with pytest.raises(graphrt.GraphrtError) as e:
        m.g("kv_state_add_sequence", 0)
    assert "vm.builtin.kv_state_add_sequence" in str(e.value) and "seq_id (argument 1)" in str(e.value)
    with pytest.raises(LookupError) as e:  # not found
        m.g("kv_state_begin_forward", graphrt.runtime.ShapeTuple([3]), graphrt.runtime.ShapeTuple([1]))
    assert "seq_ids (argument 1)" in str(e.value)
    capacity = m.case["cache_config"]["max_total_seq_len"]
    with pytest.raises(graphrt.GraphrtError) as e:  # past the prefill chunk and the pages
        m.g("kv_state_begin_forward", graphrt.runtime.ShapeTuple([0]), graphrt.runtime.ShapeTuple([capacity + 1]))
    assert "vm.builtin.kv_state_begin_forward" in str(e.value)
    assert m.g("attention_kv_cache_get_total_sequence_length") == 0
    # The model's decode without a forward pass under way: the attention builtin says so.
    with pytest.raises(graphrt.GraphrtError) as e:
        m.vm["decode"](graphrt.runtime.tensor(m.load("input_ids_decode0.npy")), m.cache)
    assert "attention_kv_cache_attention_with_fused_qkv" in str(e.value) and "begin_forward" in str(e.value)
