"""graphrt.graph_executor: TVM's GraphModule API over graphrt's "GraphExecutor" module."""
import json
import time

from ._lib import GraphrtError, GraphrtTypeError, FunctionNotFoundError
from .device import Device, to_device
from .module import Module, get_global_func
from .ndarray import NDArray
from . import ndarray as nd

try:
    import numpy as np
except ImportError:
    np = None

_PLANS = ("tvm", "liveness", "auto")


def _devices(device):
    if isinstance(device, (list, tuple)):
        devs = [to_device(d) for d in device]
    else:
        devs = [to_device(device)]
    if not devs:
        raise GraphrtError("at least one device is needed")
    return devs


def _check_plan(memory_plan):
    if memory_plan is None:
        return ""
    if memory_plan not in _PLANS:
        raise GraphrtError("unknown memory plan '%s' (use 'tvm', 'liveness' or 'auto')" % (memory_plan,))
    return memory_plan


def _graph_json_text(graph_json):
    if isinstance(graph_json, bytes):
        return graph_json.decode("utf-8")
    if not isinstance(graph_json, str):
        raise GraphrtTypeError("graph_json must be the JSON text (str)")
    return graph_json


def create(graph_json, lib, device, memory_plan=None, device_graph=False):
    """Three-file form: an executor for `graph_json` (text) whose kernels come from `lib`
    (a Module), on `device` (a Device or a list; the first is the fallback).
    memory_plan: None (graphrt's default "auto" / GRAPHRT_MEMORY_PLAN), "tvm", "liveness" or "auto".
    device_graph: capture the run as one device graph (CUDA graphs) when possible."""
    text = _graph_json_text(graph_json)
    if not isinstance(lib, Module):
        raise GraphrtTypeError("lib must be a graphrt.Module (from graphrt.load_module)")
    devs = _devices(device)
    plan = _check_plan(memory_plan)
    if plan or device_graph:
        f = get_global_func("graphrt.graph_executor.create_with_options")
        mod = f(text, lib, plan, 1 if device_graph else 0, *devs)
    else:
        f = get_global_func("tvm.graph_executor.create")
        pairs = []
        for d in devs:
            pairs.extend([d.device_type, d.device_id])
        mod = f(text, lib, *pairs)
    return GraphModule(mod, devices=devs)


def from_factory(lib, device, memory_plan=None, device_graph=False, module_name="default"):
    """One-file form: the executor of a factory library (`lib[module_name](device)`), optionally
    with a memory plan / device-graph capture (the factory's create_with_options)."""
    if not isinstance(lib, Module):
        raise GraphrtTypeError("lib must be a graphrt.Module (from graphrt.load_module)")
    devs = _devices(device)
    plan = _check_plan(memory_plan)
    if plan or device_graph:
        mod = lib["create_with_options"](plan, 1 if device_graph else 0, *devs)
    else:
        mod = lib[module_name](*devs)
    return GraphModule(mod, devices=devs)


class BenchmarkResult:
    """Timing of repeated runs, in seconds per run (like tvm.runtime.BenchmarkResult)."""

    def __init__(self, results):
        self.results = list(results)
        r = sorted(self.results)
        n = len(r)
        self.mean = sum(r) / n if n else 0.0
        self.median = (r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2) if n else 0.0
        self.min = r[0] if n else 0.0
        self.max = r[-1] if n else 0.0
        self.std = (sum((x - self.mean) ** 2 for x in r) / n) ** 0.5 if n else 0.0

    def __repr__(self):
        return "BenchmarkResult(min=%g, mean=%g, median=%g, max=%g, std=%g, results=%s)" % (
            self.min, self.mean, self.median, self.max, self.std, self.results)

    def __str__(self):
        return ("Execution time summary:\n"
                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
                "  {:^10.4f}   {:^10.4f}   {:^10.4f}   {:^10.4f}   {:^10.4f}  ".format(
                    self.mean * 1000, self.median * 1000, self.max * 1000, self.min * 1000, self.std * 1000))


class GraphModule:
    """Wrapper of a "GraphExecutor" module, as tvm.contrib.graph_executor.GraphModule:

        gmod = GraphModule(lib["default"](graphrt.cpu(0)))
        gmod.set_input("data", x); gmod.run(); y = gmod.get_output(0).numpy()
    """

    def __init__(self, module, devices=None):
        if not isinstance(module, Module):
            raise GraphrtTypeError("GraphModule wraps a graphrt.Module (e.g. lib['default'](dev))")
        self.module = module
        try:
            self._set_input = module["set_input"]
            self._run = module["run"]
            self._get_output = module["get_output"]
            self._get_input = module["get_input"]
            self._get_num_outputs = module["get_num_outputs"]
            self._get_num_inputs = module["get_num_inputs"]
            self._get_input_index = module["get_input_index"]
            self._load_params = module["load_params"]
            self._share_params = module["share_params"]
        except FunctionNotFoundError:
            raise GraphrtError("module '%s' is not a graph executor" % module.type_key) from None
        self._devices = devices

    # ---- inputs ----
    def _check_value(self, key, value):
        """Shape/dtype check of a numpy-like value against the graph input (clear errors)."""
        cur = self._get_input(key)
        if cur is None:
            return  # unknown name: set_input reports it with the valid names
        shape = tuple(value.shape)
        if shape != cur.shape:
            raise GraphrtError("set_input '%s': shape %s does not match the graph's %s" % (key, shape, cur.shape))
        vdt = value.dtype if isinstance(value, NDArray) else value.dtype.name
        if vdt != cur.dtype:
            raise GraphrtError("set_input '%s': dtype %s does not match the graph's %s" % (key, vdt, cur.dtype))

    def _set_one(self, key, value):
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise GraphrtTypeError("input key must be a name (str) or an index (int)")
        if not isinstance(value, NDArray):
            if np is None:
                raise GraphrtTypeError("set_input needs an NDArray (numpy is not installed)")
            if not isinstance(value, np.ndarray):
                try:
                    value = np.asarray(value)
                except Exception:
                    raise GraphrtTypeError("cannot use a %s as an input" % type(value).__name__) from None
                if value.dtype == object:
                    raise GraphrtTypeError("cannot use a %s as an input" % type(value).__name__)
            # numpy values are cast to the input's dtype, as TVM's copyfrom does
            # (bfloat16: uint16 values are the bits, as TVM's numpy() gives them)
            cur = self._get_input(key)
            if cur is not None and value.shape == cur.shape:
                if cur.dtype == "bfloat16":
                    value = nd.array(value, dtype="bfloat16")
                else:
                    value = value.astype(cur.dtype, copy=False)
            self._check_value(key, value)
            if not isinstance(value, NDArray):
                value = nd.array(value)
        else:
            self._check_value(key, value)
        self._set_input(key, value)

    def set_input(self, key=None, value=None, **params):
        """Sets one input (key = name or index) and/or several by keyword."""
        if key is not None:
            if value is None:
                raise GraphrtError("set_input('%s'): no value given" % (key,))
            self._set_one(key, value)
        if params:
            # Largest first, as TVM does.
            for k in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k]))) if np is not None else 0):
                self._set_one(k, params[k])

    def run(self, **inputs):
        if inputs:
            self.set_input(**inputs)
        self._run()

    def get_input(self, index, out=None):
        v = self._get_input(index)
        if v is None:
            raise GraphrtError("no graph input named '%s'" % (index,))
        if out is not None:
            return v.copyto(out)
        return v

    def get_input_index(self, name):
        return self._get_input_index(name)

    def get_input_name(self, index):
        return self.module["get_input_name"](index)

    def get_input_info(self):
        """{"shape": {name: tuple}, "dtype": {name: str}} of the inputs to set (params excluded)."""
        info = json.loads(self.module["get_input_info_json"]())
        return {"shape": {k: tuple(v) for k, v in info["shape"].items()}, "dtype": dict(info["dtype"])}

    # ---- outputs ----
    def get_output(self, index, out=None):
        if out is not None:
            if not isinstance(out, NDArray):
                raise GraphrtTypeError("out must be a graphrt NDArray")
            self._get_output(index, out)
            return out
        return self._get_output(index)

    def get_num_outputs(self):
        return self._get_num_outputs()

    def get_num_inputs(self):
        return self._get_num_inputs()

    # ---- params ----
    def load_params(self, params_bytes):
        if isinstance(params_bytes, dict):
            from .params import save_param_dict
            params_bytes = save_param_dict(params_bytes)
        if not isinstance(params_bytes, (bytes, bytearray)):
            raise GraphrtTypeError("load_params takes the bytes of a params file")
        self._load_params(bytes(params_bytes))

    def share_params(self, other, params_bytes):
        if isinstance(other, GraphModule):
            other = other.module
        if not isinstance(other, Module):
            raise GraphrtTypeError("share_params takes another GraphModule")
        self._share_params(other, bytes(params_bytes))

    # ---- timing / reports ----
    def _sync(self):
        devs = self._devices
        if devs is None:
            try:
                devs = [self._get_output(0).device] if self.get_num_outputs() else []
            except GraphrtError:
                devs = []
        for d in devs:
            if d.device_type != Device.kDLCPU:
                d.sync()

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None, end_to_end=False,
                  **kwargs):
        """Times `number` runs per repeat, `repeat` times; returns a BenchmarkResult in seconds per run.
        One warm-up run happens first."""
        if kwargs:
            self.set_input(**kwargs)
        if func_name != "run":
            raise GraphrtError("benchmark only times 'run'")
        if repeat < 1 or number < 1:
            raise GraphrtError("repeat and number must be >= 1")
        if device is not None:
            self._devices = _devices(device)
        self._run()
        self._sync()
        results = []
        for _ in range(repeat):
            n = number
            while True:
                t0 = time.perf_counter()
                for _ in range(n):
                    self._run()
                self._sync()
                dt = time.perf_counter() - t0
                if min_repeat_ms is None or dt * 1000 >= min_repeat_ms or n >= (1 << 20):
                    break
                n *= 2
            results.append(dt / n)
        return BenchmarkResult(results)

    def profile(self, runs=1):
        """Per-node timing table (text)."""
        return self.module["profile"](int(runs))

    def profile_trace(self, path, runs=1):
        """Writes a Chrome trace (JSON) of `runs` profiled runs to `path`; returns the table."""
        return self.module["profile_trace"](int(runs), str(path))

    def memory_report(self):
        """{"tvm_plan_bytes", "liveness_plan_bytes", "allocated_bytes", "active"}."""
        return json.loads(self.module["memory_report"]())

    def __getitem__(self, name):
        return self.module[name]
