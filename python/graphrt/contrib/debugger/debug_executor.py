"""graphrt.contrib.debugger.debug_executor: TVM's debug executor over graphrt.

    m = debug_executor.create(graph_json, lib, dev, dump_root="/tmp/tvmdbg")
    m.set_input("data", x); m.run()   # times every node, dumps every node output, prints a table

The dumps follow TVM's layout (see debug_result). graphrt's executor module carries the debug
functions itself, so any graphrt GraphExecutor module can be wrapped."""
import os
import shutil
import struct
import tempfile

from ..._lib import GraphrtTypeError
from ...module import BenchmarkResult, get_global_func
from .. import graph_executor
from . import debug_result
from ... import error as _error

_DUMP_ROOT_PREFIX = "tvmdbg_"
_DUMP_PATH_PREFIX = "_tvmdbg_"


def create(graph_json_str, libmod, device, dump_root=None):
    """A GraphModuleDebug of `graph_json_str` with kernels from `libmod` on `device` (a Device or
    a list). dump_root: where the dumps go (a new /tmp/tvmdbg_* folder when None)."""
    if isinstance(graph_json_str, bytes):
        graph_json_str = graph_json_str.decode("utf-8")
    if not isinstance(graph_json_str, str):
        raise GraphrtTypeError("graph_json_str must be the graph JSON text (str)")
    devices, _, pairs = graph_executor.get_device(libmod, device)
    module = get_global_func("tvm.graph_executor_debug.create")(graph_json_str, libmod, *pairs)
    return GraphModuleDebug(module, devices, graph_json_str, dump_root)


class GraphModuleDebug(graph_executor.GraphModule):
    """TVM's GraphModuleDebug: a GraphModule whose run() times each node, dumps each node's
    outputs under the dump folder and prints the per-node table."""

    def __init__(self, module, device, graph_json_str, dump_root):
        devices = [device] if not isinstance(device, (list, tuple)) else list(device)
        graph_executor.GraphModule.__init__(self, module, devices=devices)
        self._dump_root = dump_root
        self._run_individual = module["run_individual"]
        self._run_individual_node = module["run_individual_node"]
        self._debug_get_output = module["debug_get_output"]
        self._execute_node = module["execute_node"]
        self._get_node_output = module["get_node_output"]
        self._profile = module["profile"]
        if not self._dump_root:
            self._dump_root = tempfile.mkdtemp(prefix=_DUMP_ROOT_PREFIX)
        # "cpu(0)" -> "_tvmdbg_device_CPU_0", TVM's folder name.
        dev_name = repr(devices[0]).upper().replace("(", "_").replace(")", "")
        self._dump_path = os.path.join(self._dump_root, _DUMP_PATH_PREFIX + "device_" + dev_name)
        os.makedirs(self._dump_path, 0o700, exist_ok=True)
        self.debug_datum = debug_result.DebugResult(graph_json_str, self._dump_path)

    def _node_index(self, node):
        if isinstance(node, str):
            for i, n in enumerate(self.debug_datum.get_graph_nodes()):
                if n["name"] == node:
                    return i
            raise AttributeError("Could not find a node named %s in this graph." % node)
        if isinstance(node, int) and not isinstance(node, bool):
            return node
        raise GraphrtTypeError("node must be a node index (int) or name (str)")

    def debug_get_output(self, node, out=None):
        """Runs the graph up to `node` (index or name) and returns its first output (copied into
        `out` when given)."""
        index = self._node_index(node)
        if out is not None:
            self._debug_get_output(index, out)
            return out
        return self._debug_get_output(index)

    def _run_per_layer(self):
        outputs = []
        for i, node in enumerate(self.debug_datum.get_graph_nodes()):
            self._execute_node(i)
            for j in range(self.debug_datum.get_graph_node_output_num(node)):
                outputs.append(self._get_node_output(i, j))
        self.debug_datum.update_output_tensors(outputs)

    def run(self, number=10, repeat=1, min_repeat_ms=1, limit_zero_time_iterations=100, cooldown_interval_ms=0,
            repeats_to_cooldown=1, sort_by_time=True, **input_dict):
        """Sets `input_dict`, times every node (run_individual), runs the graph node by node
        keeping every output, writes the dumps and prints the table."""
        if input_dict:
            self.set_input(**input_dict)
        self.debug_datum._time_list = self.run_individual(
            number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
            limit_zero_time_iterations=limit_zero_time_iterations, cooldown_interval_ms=cooldown_interval_ms,
            repeats_to_cooldown=repeats_to_cooldown)
        self.debug_datum._output_tensor_list = []
        self._run_per_layer()
        self.debug_datum.dump_output_tensor()
        self.debug_datum.dump_chrome_trace()
        self.debug_datum.display_debug_result(sort_by_time)

    def run_individual(self, number, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1):
        """Seconds per call of every node, [node][repeat] (zeros for nodes without a kernel)."""
        blob = self._run_individual(number, repeat, min_repeat_ms, limit_zero_time_iterations,
                                    cooldown_interval_ms, repeats_to_cooldown)
        (count,) = struct.unpack_from("@q", blob, 0)
        offset = struct.calcsize("@q")
        row = "@" + "d" * repeat
        results = []
        for _ in range(count):
            results.append(list(struct.unpack_from(row, blob, offset)))
            offset += struct.calcsize(row)
        return results

    def run_individual_node(self, index, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                            cooldown_interval_ms=0, repeats_to_cooldown=1):
        """A BenchmarkResult of one node's kernel on the arrays already in place."""
        blob = self._run_individual_node(index, number, repeat, min_repeat_ms, limit_zero_time_iterations,
                                         cooldown_interval_ms, repeats_to_cooldown)
        return BenchmarkResult(struct.unpack("@" + "d" * repeat, blob))

    def profile(self, collectors=None, **input_dict):
        """Runs the graph once timing every node; returns the per-node / per-function report
        (print it, or call .table()). Metric collectors are not supported."""
        if collectors:
            raise _error.UnsupportedError("graphrt's profile() takes no metric collectors")
        if input_dict:
            self.set_input(**input_dict)
        return Report(self._profile(1))

    def exit(self):
        """Removes the dump folder and everything in it."""
        if os.path.isdir(self._dump_root):
            shutil.rmtree(self._dump_root)


class Report(str):
    """profile()'s result: the timing table as text; table() returns it too."""

    def table(self, *_, **__):
        return str(self)
