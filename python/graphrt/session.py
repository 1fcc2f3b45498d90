"""graphrt's typed way in (the session layer, graphrt_model_* / graphrt_runner_* of c_api.h):
a Session loads a Model of any artifact graphrt reads (a graph one-file export, .tar, tvmc
package or three-file form, a Relax executable, of any ABI); a Model says what it takes and
gives, and hands out Runners.

    import graphrt
    model = graphrt.Session(graphrt.cpu(0)).load("deploy.so")
    model.inputs()                 # [TensorInfo(name='x', dtype='float32', shape=(-1, 784), ...)]
    runner = model.runner()
    y = runner(x=numpy_array)[0]   # set_input, run, outputs
"""
import ctypes
from collections import namedtuple

from . import _lib
from . import packed
from .device import cpu, to_device
from .ndarray import NDArray, dtype_to_str
from . import ndarray as nd

# One input or output: shape has -1 for a symbolic dimension, `symbols` (None for graphs) the
# symbolic variable of each dimension (same value, same size; -1 where fixed). `known` False:
# the artifact gives no dtype and shape (a Relax parameter its code does not check).
TensorInfo = namedtuple("TensorInfo", ["name", "dtype", "shape", "known", "symbols"])


def _c_function(function):
    return None if function is None else _lib.c_str(function)


def _info(c):
    shape = tuple(c.shape[i] for i in range(c.ndim))
    symbols = tuple(c.symbols[i] for i in range(c.ndim)) if c.symbols else None
    return TensorInfo(_lib.py_str(c.name), dtype_to_str(c.dtype) if c.known else None, shape, bool(c.known), symbols)


class Session:
    """Where and how models load: a device, the library loader ("dlopen" or "elf"),
    trust_exports, the graph memory plan ("tvm", "liveness", "auto"; None: the default)."""

    def __init__(self, device=None, loader=None, trust_exports=False, memory_plan=None):
        self.device = to_device(device) if device is not None else cpu(0)
        self.loader = loader
        self.trust_exports = bool(trust_exports)
        self.memory_plan = memory_plan

    def load(self, path, graph_json=None, params=None):
        """The Model at `path`; `graph_json` (and `params`) for the three-file form."""
        options = _lib.ModelOptions(
            _lib.c_str(str(graph_json)) if graph_json is not None else None,
            _lib.c_str(str(params)) if params is not None else None,
            _lib.c_str(self.loader) if self.loader else None, int(self.trust_exports),
            self.device.device_type, self.device.device_id,
            _lib.c_str(self.memory_plan) if self.memory_plan else None)
        handle = ctypes.c_void_p()
        _lib.call("graphrt_model_load", _lib.c_str(str(path)), ctypes.byref(options), ctypes.byref(handle),
                  path=str(path))
        return Model(handle)


class Model:
    """A loaded model: its kind, functions, inputs and outputs, bound params; runners."""

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h is not None and h.value and _lib._LIB is not None:
            _lib.lib().graphrt_model_free(h)

    def _int(self, name, *args):
        out = ctypes.c_int()
        _lib.call(name, self._handle, *args, ctypes.byref(out))
        return out.value

    @property
    def kind(self):
        """"graph" or "relax"."""
        return "relax" if self._int("graphrt_model_kind") == 1 else "graph"

    @property
    def functions(self):
        out = []
        for i in range(self._int("graphrt_model_num_functions")):
            name = ctypes.c_char_p()
            _lib.call("graphrt_model_function_name", self._handle, i, ctypes.byref(name))
            out.append(_lib.py_str(name.value))
        return out

    def _infos(self, what, function):
        f = _c_function(function)
        out = []
        for i in range(self._int("graphrt_model_num_" + what, f)):
            c = _lib.TensorInfoC()
            _lib.call("graphrt_model_%s_info" % what[:-1], self._handle, f, i, ctypes.byref(c))
            out.append(_info(c))
        return out

    def inputs(self, function=None):
        """The inputs of `function` (None: the entry, "default" or "main"); params are not inputs."""
        return self._infos("inputs", function)

    def outputs(self, function=None):
        """The outputs of `function` as the model says them (a Relax function's: [], known after a run)."""
        return self._infos("outputs", function)

    @property
    def params(self):
        """The names of the params bound at load."""
        names = ctypes.c_char_p()
        _lib.call("graphrt_model_param_names", self._handle, ctypes.byref(names))
        return [n for n in _lib.py_str(names.value).split("\n") if n]

    def runner(self, function=None):
        handle = ctypes.c_void_p()
        _lib.call("graphrt_runner_create", self._handle, _c_function(function), ctypes.byref(handle))
        return Runner(handle, self)


class Runner:
    """Runs one function of a model: set inputs (copied, or zero-copy), run, read outputs. One
    thread at a time; make one runner per thread."""

    def __init__(self, handle, model):
        self._handle = handle
        self._model = model  # the C runner keeps the model alive too; this keeps the Python one
        self._zero_copy = {}  # arrays whose memory a zero-copy input uses

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h is not None and h.value and _lib._LIB is not None:
            _lib.lib().graphrt_runner_free(h)

    def set_input(self, name, value, zero_copy=False):
        """Input `name` from a numpy array or NDArray: copied, or (zero_copy) used in place until
        the next set_input of that name."""
        array = value if isinstance(value, NDArray) else nd.array(value)
        c_name = _lib.c_str(name)
        if zero_copy:
            _lib.call("graphrt_runner_set_input_zero_copy", self._handle, c_name, array._h())
            self._zero_copy[name] = array
        else:
            _lib.call("graphrt_runner_set_input", self._handle, c_name, array._h())
            self._zero_copy.pop(name, None)

    def run(self):
        _lib.call("graphrt_runner_run", self._handle)

    @property
    def num_outputs(self):
        out = ctypes.c_int()
        _lib.call("graphrt_runner_num_outputs", self._handle, ctypes.byref(out))
        return out.value

    def get_output(self, index):
        """Output `index` of the last run (the runner's storage: the next run may overwrite it)."""
        out = ctypes.c_void_p()
        _lib.call("graphrt_runner_get_output", self._handle, int(index), ctypes.byref(out))
        return NDArray._adopt(out.value)

    def result(self):
        """The last run's result, structured: a Relax function's return value as it is (an
        NDArray, an Array of nested values, a ShapeTuple, an int, ...), a graph's outputs as an
        Array of NDArrays."""
        value, code = _lib.TVMValue(), ctypes.c_int(0)
        _lib.call("graphrt_runner_get_result", self._handle, ctypes.byref(value), ctypes.byref(code))
        return packed._return_value(value, code.value)

    def __call__(self, **inputs):
        """Sets `inputs` (copied), runs, and returns the outputs."""
        for name, value in inputs.items():
            self.set_input(name, value)
        self.run()
        return [self.get_output(i) for i in range(self.num_outputs)]
