"""Devices (DLDevice), named as in tvm.runtime: graphrt.cpu(0), graphrt.cuda(0)."""
import ctypes

from . import _lib
from ._lib import GraphrtTypeError
from . import error as _error

_TYPE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
               11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu", 16: "hexagon",
               32: "aocl", 33: "sdaccel"}
# Device names and the target kinds TVM maps to them (TVM's Device.STR2MASK), so that
# device(str(target)) picks the device a target's code runs on.
_NAME_TYPES = {"cpu": 1, "llvm": 1, "c": 1, "stackvm": 1, "test": 1, "hybrid": 1, "composite": 1,
               "cuda": 2, "gpu": 2, "nvptx": 2, "cuda_host": 3, "cl": 4, "opencl": 4, "sdaccel": 4, "vulkan": 7,
               "metal": 8, "mtl": 8, "vpi": 9, "rocm": 10, "rocm_host": 11, "ext_dev": 12, "cuda_managed": 13,
               "oneapi": 14, "webgpu": 15, "hexagon": 16, "aocl": 32, "aocl_sw_emu": 32}


class Device:
    """A device: (device_type, device_id) as in DLPack."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLROCM = 10
    kDLExtDev = 12
    kDLCUDAManaged = 13
    MASK2STR = dict(_TYPE_NAMES)
    STR2MASK = dict(_NAME_TYPES)

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, str):
            name = device_type.lower()
            if name not in _NAME_TYPES:
                raise _error.InvalidArgumentError("unknown device '%s' (known: %s)" % (device_type, ", ".join(sorted(_NAME_TYPES))))
            device_type = _NAME_TYPES[name]
        if not isinstance(device_type, int) or not isinstance(device_id, int) or isinstance(device_id, bool):
            raise GraphrtTypeError("Device(device_type, device_id) takes ints")
        self.device_type = device_type
        self.device_id = device_id

    @property
    def exist(self):
        """True when graphrt can use this device in this build and on this machine."""
        return self.unavailable_reason is None

    @property
    def unavailable_reason(self):
        """None when usable, otherwise graphrt's reason (e.g. no CUDA driver)."""
        avail = ctypes.c_int(0)
        reason = ctypes.c_char_p()
        _lib.call("graphrt_device_available", self.device_type, self.device_id, ctypes.byref(avail),
                  ctypes.byref(reason))
        return None if avail.value else (_lib.py_str(reason.value) or "unavailable")

    def sync(self):
        """Waits for the device's pending work (TVMSynchronize on the current stream)."""
        _lib.call("TVMSynchronize", self.device_type, self.device_id, None)

    def _as_c(self):
        return _lib.DLDevice(self.device_type, self.device_id)

    @property
    def type_name(self):
        return _TYPE_NAMES.get(self.device_type, "device%d" % self.device_type)

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)

    def dlpack_device_type(self):
        """The DLPack device type (TVM v0.22+'s Device.dlpack_device_type())."""
        return self.device_type

    def __eq__(self, other):
        return isinstance(other, Device) and (self.device_type, self.device_id) == (other.device_type,
                                                                                    other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return "%s(%d)" % (self.type_name, self.device_id)


def cpu(dev_id=0):
    return Device(1, dev_id)


def cuda(dev_id=0):
    return Device(2, dev_id)


gpu = cuda


def _device_kind(type_code, doc_name):
    def make(dev_id=0):
        return Device(type_code, dev_id)
    make.__name__ = doc_name
    make.__doc__ = "Device(%d, dev_id): a %s device (TVM's name; graphrt runs cpu, cuda and vulkan)." % (type_code, doc_name)
    return make


opencl = cl = _device_kind(4, "opencl")
vulkan = _device_kind(7, "vulkan")
metal = mtl = _device_kind(8, "metal")
vpi = _device_kind(9, "vpi")
rocm = _device_kind(10, "rocm")
ext_dev = _device_kind(12, "ext_dev")
hexagon = _device_kind(16, "hexagon")
webgpu = _device_kind(15, "webgpu")


def device(spec, dev_id=None):
    """graphrt.device("cuda:1"), device("cpu"), device("cuda", 1), device(Device), and as TVM's
    tvm.device, a target string: its first word picks the device ("llvm -mcpu=core-avx2" -> cpu(0))."""
    if isinstance(spec, Device):
        return spec
    if dev_id is not None and (not isinstance(dev_id, int) or isinstance(dev_id, bool)):
        raise GraphrtTypeError("device id must be an int, got %r" % (dev_id,))
    if isinstance(spec, str):
        words = spec.split()
        if not words:
            raise _error.InvalidArgumentError("empty device string")
        name = words[0]
        if ":" in name:
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise _error.InvalidArgumentError("bad device '%s' (use e.g. cpu, cuda, cuda:1)" % spec)
            dev_id = int(idx)  # overrides dev_id, as in TVM
        spec = name
    return Device(spec, 0 if dev_id is None else dev_id)


def to_device(obj):
    if isinstance(obj, Device):
        return obj
    if isinstance(obj, str):
        return device(obj)
    raise GraphrtTypeError("expected a graphrt.Device (e.g. graphrt.cpu(0)), got %s" % type(obj).__name__)
