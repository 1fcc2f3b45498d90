"""Language models as MLC-LLM ships them (graphrt_lm_* of c_api.h): a model folder with
mlc-chat-config.json, its weights, tokenizer and model library; text in, text out.

    import graphrt
    lm = graphrt.LanguageModel("dist/tiny_gpt2_chat")            # <name>-cpu.so beside
    lm.generate("Once upon a time,", max_tokens=16, temperature=0)  # -> str
    for piece in lm.stream("Once upon a time,", max_tokens=16):
        print(piece, end="", flush=True)
    lm.chat([{"role": "user", "content": "What is the capital of France?"}], max_tokens=12)
    lm.tokenizer.encode("Hello")                                  # -> [15496]

Steps of the model itself, as MLC's engine makes them (graphrt_lm_step: one foreign call per
step, the KV cache's begin/end_forward and the model's function inside it):

    lm.add_sequence(0); lm.add_sequence(1)
    logits = lm.step([0, 1], [[464, 3139, 286], [7454, 2402]])  # one batch_prefill: float32 [2, vocab]
    logits = lm.step([0, 1], [int(logits[0].argmax()), int(logits[1].argmax())])  # one batch_decode
    lm.remove_sequence(1)

Generation fields are keyword arguments (graphrt/generation_config.h): max_tokens, temperature,
top_p, top_k, presence_penalty, frequency_penalty, repetition_penalty, logit_bias ({id: bias}),
seed, stop (str or list), stop_token_ids, logprobs, top_logprobs; None keeps the model's
default. An unknown or out-of-range field raises, naming it. After a call, `last_result` holds
its finish_reason, tokens, prompt_tokens, logprobs and timings.
"""
import ctypes
import json
import queue
import threading

try:
    import numpy as np
except ImportError:  # numpy is optional for text generation and for `import graphrt`; step() needs it
    np = None

from . import _lib
from .error import InvalidArgumentError, TypeMismatchError
from .device import to_device


def _function(name):
    f = getattr(_lib.lib(), name, None)
    if f is None:
        raise _lib.GraphrtError("this libgraphrt (%s) has no C function %s" % (_lib.library_path(), name))
    return f


def _config_json(fields):
    return json.dumps(fields).encode("utf-8")


def _token(x):
    if isinstance(x, int if np is None else (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    raise TypeError("%r is no token id" % (x,))


class Tokenizer:
    """The model's tokenizer: encode adds no special tokens, decode skips none (as MLC)."""

    def __init__(self, model):
        self._model = model

    def encode(self, text):
        ids = ctypes.POINTER(ctypes.c_int32)()
        count = ctypes.c_size_t()
        with self._model._lock:
            _lib.call("graphrt_lm_tokenize", self._model._handle, _lib.c_str(text), ctypes.byref(ids), ctypes.byref(count))
            return [ids[i] for i in range(count.value)]

    def decode(self, ids):
        ids = list(ids)
        array = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        text = ctypes.c_char_p()
        with self._model._lock:
            _lib.call("graphrt_lm_detokenize", self._model._handle, array, len(ids), ctypes.byref(text))
            return _lib.py_str(text.value)


class LanguageModel:
    """An MLC-LLM model folder on a device ("cpu", "opencl", graphrt.cpu(0), ...);
    `model_lib`: the model library (MLC's --model-lib; None: <folder>/<name>-<device>.so).
    LanguageModel.from_library(path): a token-id library alone, which only steps."""

    def __init__(self, folder, device="cpu", model_lib=None, _library=None):
        dev = to_device(device)
        handle = ctypes.c_void_p()
        if _library is not None:  # from_library
            _lib.call("graphrt_lm_open_library", _lib.c_str(str(folder)), _library[0], _library[1], dev.device_type,
                      dev.device_id, ctypes.byref(handle), path=str(folder))
        else:
            _lib.call("graphrt_lm_open", _lib.c_str(str(folder)), _lib.c_str(str(model_lib)) if model_lib else None,
                      dev.device_type, dev.device_id, ctypes.byref(handle), path=str(folder))
        self._handle = handle
        self._lock = threading.RLock()
        self.folder = str(folder)
        self.device = dev
        self.tokenizer = Tokenizer(self)
        self.last_result = None
        self._vocab = None
        self._step = _function("graphrt_lm_step")
        self._logits = ctypes.POINTER(ctypes.c_float)()
        self._logits_ref = ctypes.byref(self._logits)
        self._buffers = ((ctypes.c_int64 * 0)(), (ctypes.c_int32 * 0)(), (ctypes.c_int64 * 0)())
        self._views = {}

    @classmethod
    def from_library(cls, path, device="cpu", max_total_seq_len=0, prefill_chunk_size=0):
        """A library alone whose forward functions take token ids and hold their weights
        (prefill / decode on the KV cache, e.g. relax_tiny_llm_gqa's deploy_relax.so): it steps
        (add_sequence, step, remove_sequence); no tokenizer, no generation. Sizes 0: 64, 16."""
        lm = cls(path, device, _library=(int(max_total_seq_len), int(prefill_chunk_size)))
        lm.tokenizer = None
        return lm

    @property
    def vocab_size(self):
        """The model's vocabulary: the width of a row of logits."""
        if self._vocab is None:
            out = ctypes.c_int64()
            _lib.call("graphrt_lm_vocab_size", self._handle, ctypes.byref(out))
            self._vocab = out.value
        return self._vocab

    def add_sequence(self, seq_id):
        """A new, empty sequence `seq_id` (an int, not negative) in the KV cache."""
        with self._lock:
            _lib.call("graphrt_lm_add_sequence", self._handle, seq_id)

    def remove_sequence(self, seq_id):
        with self._lock:
            _lib.call("graphrt_lm_remove_sequence", self._handle, seq_id)

    def step(self, seq_ids, tokens, copy=True):
        """Appends tokens[i] to sequence seq_ids[i] (an int: one token; a list: several) and
        returns the logits of each sequence's last token, float32 [len(seq_ids), vocab_size].
        All ints (one token each) is one batch_decode; else one batch_prefill. One foreign call.
        copy=False returns a view of the model's own rows instead of a copy: it holds until the
        next call on this model."""
        if np is None:
            raise ImportError("LanguageModel.step returns numpy arrays: install numpy (Debian python3-numpy)")
        n = len(seq_ids)
        if n != len(tokens):
            raise InvalidArgumentError("step: %d sequence ids for %d token lists" % (n, len(tokens)))
        flat = tokens
        offsets = None
        try:
            if tokens and not all(type(t) is int for t in tokens):
                flat = []
                offsets = [0]
                for t in tokens:
                    if isinstance(t, int if np is None else (int, np.integer)):
                        flat.append(int(t))
                    else:
                        flat.extend(x if type(x) is int else _token(x) for x in t)
                    offsets.append(len(flat))
            # ctypes would wrap an int past 32 bits into the vocabulary silently.
            if flat and (max(flat) > 0x7FFFFFFF or min(flat) < -0x80000000):
                raise OverflowError("a token id past 32 bits")
        except (TypeError, ValueError, OverflowError) as e:
            raise TypeMismatchError("step: tokens are ints or lists of ints (%s)" % e) from None
        b = self._buffers
        if n > len(b[0]) or len(flat) > len(b[1]) or (offsets is not None and n + 1 > len(b[2])):
            size = max(n + 1, len(flat), 2 * len(b[1]))
            b = self._buffers = ((ctypes.c_int64 * size)(), (ctypes.c_int32 * size)(), (ctypes.c_int64 * (size + 1))())
        ids, values, offs = b
        try:
            ids[:n] = seq_ids
            values[:len(flat)] = flat
            if offsets is not None:
                offs[:n + 1] = offsets
        except (TypeError, OverflowError) as e:
            raise TypeMismatchError("step: sequence ids are ints (%s)" % e) from None
        with self._lock:
            _lib.check(self._step(self._handle, n, ids, values, offs if offsets is not None else None,
                                  self._logits_ref))
            rows = self._rows(ctypes.cast(self._logits, ctypes.c_void_p).value, n)
            return rows.copy() if copy else rows

    def _rows(self, address, n):
        """The model's rows at `address` as numpy, the view kept per (address, n): a steady decode
        writes the same storage each step, and a view is costlier than the lookup."""
        key = (address, n)
        view = self._views.get(key)
        if view is None:
            if len(self._views) > 64:
                self._views.clear()
            count = n * self.vocab_size
            view = np.frombuffer((ctypes.c_float * count).from_address(address), dtype=np.float32).reshape(
                n, self.vocab_size)
            self._views[key] = view
        return view

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            _function("graphrt_lm_free")(handle)
            self._handle = None

    def default_config(self):
        """The request defaults from mlc-chat-config.json, as generation fields."""
        out = ctypes.c_char_p()
        with self._lock:
            _lib.call("graphrt_lm_default_config", self._handle, ctypes.byref(out))
            return json.loads(out.value.decode("utf-8"))

    def generate(self, prompt, **fields):
        """The completion of `prompt` (encoded as is; the conv_template's stops apply)."""
        return self._run("graphrt_lm_generate", _lib.c_str(prompt), fields, None)

    def chat(self, messages, **fields):
        """The assistant's answer to `messages` ([{"role": ..., "content": ...}]) under the
        model's conv_template."""
        return self._run("graphrt_lm_chat", _lib.c_str(json.dumps(list(messages))), fields, None)

    def stream(self, prompt, **fields):
        """Yields the completion of `prompt` piece by piece (whole characters, no part of a stop
        string); the pieces join to what generate returns. Closing the generator stops it."""
        return self._stream("graphrt_lm_generate", _lib.c_str(prompt), fields)

    def stream_chat(self, messages, **fields):
        """chat, piece by piece."""
        return self._stream("graphrt_lm_chat", _lib.c_str(json.dumps(list(messages))), fields)

    def _run(self, function, first, fields, on_piece):
        """Calls `function`; each piece goes to on_piece(bytes) -> bool (True: stop)."""
        raised = []

        def callback(data, size, _user):
            try:
                return 1 if on_piece(ctypes.string_at(data, size)) else 0
            except BaseException as e:  # a Python error cannot cross the C frames: stop and re-raise after
                raised.append(e)
                return 1

        c_callback = _lib.TextCallback(callback) if on_piece is not None else _lib.TextCallback()
        text = ctypes.c_char_p()
        result = ctypes.c_char_p()
        with self._lock:
            rc = _function(function)(self._handle, first, _config_json(fields), c_callback, None, ctypes.byref(text),
                                     ctypes.byref(result))
            if raised:
                raise raised[0]
            _lib.check(rc)
            self.last_result = json.loads(result.value.decode("utf-8"))
            return self.last_result["text"]

    def _stream(self, function, first, fields):
        pieces = queue.Queue()
        stop = threading.Event()
        end = object()
        failure = []

        def worker():
            try:
                self._run(function, first, fields, lambda b: pieces.put(b.decode("utf-8", "replace")) or stop.is_set())
            except BaseException as e:  # handed to the consumer
                failure.append(e)
            finally:
                pieces.put(end)

        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        closed_early = True
        try:
            while True:
                piece = pieces.get()
                if piece is end:
                    closed_early = False
                    break
                yield piece
        finally:
            if closed_early:
                stop.set()  # the next piece's callback answers "stop"
            thread.join()
        if failure:
            raise failure[0]
