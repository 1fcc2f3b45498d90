"""TVM's DataType in Python (tvm.runtime.DataType, a str as tvm_ffi's dtype is): "float32",
"int8x4", "bool" with the DLPack fields deploy code reads (type_code, bits, lanes, itemsize)."""
from .ndarray import str_to_dtype, dtype_to_str


class DataType(str):
    """A dtype string that also carries its DLPack fields: DataType("float16").bits == 16."""

    # DLPack's type codes, under TVM's names.
    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4

    def __new__(cls, dtype):
        if isinstance(dtype, DataType):
            return dtype
        parsed = str_to_dtype(dtype)  # a string, or a numpy dtype or scalar type
        self = super().__new__(cls, dtype_to_str(parsed))
        self._fields = parsed
        return self

    @property
    def type_code(self):
        return self._fields.code

    @property
    def bits(self):
        return self._fields.bits

    @property
    def lanes(self):
        return self._fields.lanes

    @property
    def itemsize(self):
        """Bytes per element (all lanes)."""
        return (self._fields.bits * self._fields.lanes + 7) // 8

    def with_lanes(self, lanes):
        base = str(self).split("x")[0] if self._fields.lanes > 1 else str(self)
        return DataType(base if lanes == 1 else "%sx%d" % (base, lanes))

    def __repr__(self):
        return "DataType(%r)" % str(self)
