"""Blocks for graphrt_function_call_block (include/graphrt/c_api.h): a function, its arguments
and its result in one piece of memory, so that a call from Python is one foreign call of one
argument. ctypes converts every argument of a foreign call on each call (about 0.1 us each)
and builds a Python object for each out-parameter; a block is written with one struct.pack_into
(handle values and type codes read by C-level getters, no Python loop) and its result read
with one unpack_from. Blocks are kept in a free list and taken one per call, so that calls on
several threads, and calls made from inside a call (a Python callback), each have their own."""
import ctypes
import struct

from . import _lib

SHORT = _lib._SHORT  # arguments a block holds; longer calls take the general path


class Block(ctypes.Structure):
    # The arrays first: one pack_into writes the arguments and the handles to free after them,
    # then the function and the two counts at the start of the C block, and stops before the
    # fields the C function fills.
    _fields_ = [("values", _lib.TVMValue * SHORT), ("codes", ctypes.c_int * SHORT), ("c", _lib.CallBlockC)]


_C = Block.c.offset
assert _C == 12 * SHORT and _lib.CallBlockC.num_free.offset == 12 and _lib.CallBlockC.ret_value.offset == 16, (
    "graphrt_call_block's layout")


def _packer(n, m, value):
    """n arguments and m handles to free: *values, *type codes, function handle, n, m."""
    k = n + m
    return struct.Struct("=%d%s%dx%di%dxQii" % (k, value, 8 * (SHORT - k), k, 4 * (SHORT - k)))


# PACK[n][m].pack_into(block, 0, *n argument values, *m handles, *n + m type codes, function, n, m)
PACK = [[_packer(n, m, "Q") for m in range(SHORT - n + 1)] for n in range(SHORT + 1)]
# PACK_INTS[n][m]: the same with int64 argument values (and the handles to free as int64)
PACK_INTS = [[_packer(n, m, "q") for m in range(SHORT - n + 1)] for n in range(SHORT + 1)]
# RESULT.unpack_from(block, RESULT_AT) -> (ret_value as int64, ret_type_code, ret_type_index, elapsed_ns)
RESULT = struct.Struct("=qiIq")
RESULT_AT = _C + _lib.CallBlockC.ret_value.offset
VALUE_AT = RESULT_AT

# (block, its C part's address as a c_void_p) of the blocks no call is using.
FREE = []


def new():
    """A block whose C part points at its own arrays."""
    block = Block()
    block.c.args = ctypes.addressof(block.values)
    block.c.type_codes = ctypes.addressof(block.codes)
    return block, ctypes.c_void_p(ctypes.addressof(block.c))


def return_value(block):
    """The result's TVMValue, copied out of the block."""
    return _lib.TVMValue.from_buffer_copy(block, VALUE_AT)
