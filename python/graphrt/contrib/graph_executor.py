"""graphrt.contrib.graph_executor: tvm.contrib.graph_executor with TVM's signatures and semantics.

It differs from graphrt.graph_executor in one place, on purpose: GraphModule.set_input(**params)
skips keys that are no graph input, as TVM does, and warns once per call naming them
(UnusedInputWarning); set_input_strict raises on them instead."""
import warnings

from .._lib import GraphrtTypeError
from ..device import Device
from .. import graph_executor as _strict
from ..graph_executor import InputInfo, from_factory  # noqa: F401  (re-exported)
from ..module import BenchmarkResult  # noqa: F401
from .. import error as _error


class UnusedInputWarning(UserWarning):
    """set_input got keyword values for names that are no graph input (they were skipped)."""


def get_device(libmod, device):
    """TVM's helper: (devices as a list, number of RPC devices (always 0), [type0, id0, ...])."""
    devices = [device] if isinstance(device, Device) else device
    if not isinstance(devices, (list, tuple)) or not all(isinstance(d, Device) for d in devices):
        raise GraphrtTypeError("dev has to be a Device or a list of Devices")
    pairs = []
    for d in devices:
        pairs.extend([d.device_type, d.device_id])
    return list(devices), 0, pairs


class GraphModule(_strict.GraphModule):
    """tvm.contrib.graph_executor.GraphModule over a graphrt "GraphExecutor" module:

        gmod = GraphModule(lib["default"](dev)); gmod.set_input("data", x); gmod.run()
    """

    def set_input(self, key=None, value=None, **params):
        """Sets input `key` (a name or index; an unknown one raises) and any keyword inputs;
        keyword names that are no graph input are skipped, as TVM does, with an UnusedInputWarning."""
        if key is not None:
            _strict.GraphModule.set_input(self, key, value)
        if not params:
            return
        unused = sorted(k for k in params if self._get_input(k) is None)
        if unused:
            warnings.warn("set_input: skipped %d key(s) that are no graph input: %s (set_input_strict raises)"
                          % (len(unused), ", ".join(unused)), UnusedInputWarning, stacklevel=2)
        used = {k: v for k, v in params.items() if k not in unused}
        if used:
            _strict.GraphModule.set_input(self, **used)

    def set_input_strict(self, key=None, value=None, **params):
        """graphrt's strict set_input: any key that is no graph input raises."""
        _strict.GraphModule.set_input(self, key, value, **params)

    def set_input_zero_copy(self, key=None, value=None, **params):
        if key is not None:
            _strict.GraphModule.set_input_zero_copy(self, key, value)
        for k, v in params.items():
            if self._get_input(k) is not None:  # TVM skips unknown names here too
                _strict.GraphModule.set_input_zero_copy(self, k, v)

    def run(self, **input_dict):
        if input_dict:
            self.set_input(**input_dict)
        _strict.GraphModule.run(self)

    def debug_get_output(self, node, out=None):
        raise NotImplementedError("Please use debugger.debug_executor as graph_executor instead.")


def create(graph_json_str, libmod, device):
    """TVM's create: an executor of `graph_json_str` whose kernels come from `libmod`, on `device`
    (a Device or a list of them; the first is the fallback). For graphrt's memory plans and
    device-graph capture, use graphrt.graph_executor.create."""
    if isinstance(graph_json_str, bytes):
        graph_json_str = graph_json_str.decode("utf-8")
    if not isinstance(graph_json_str, str):
        raise GraphrtTypeError("graph_json_str must be the graph JSON text (str)")
    devices, _, pairs = get_device(libmod, device)
    if not devices:
        raise _error.InvalidArgumentError("at least one device is needed")
    return GraphModule(_strict.create(graph_json_str, libmod, devices).module, devices=devices)
