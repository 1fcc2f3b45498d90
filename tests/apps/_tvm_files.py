"""TVM's file layouts written from the format alone (params, NDArray records, module blobs),
independent of graphrt: crafted inputs for the hostile-input tests, and an oracle that does
not share graphrt's writers."""
import struct

import numpy as np

NDARRAY_MAGIC = 0xDD5E40F096B4A13F
PARAMS_MAGIC = 0xF7E58D4F05049CB7

# TVM dtype name -> (code, bits, numpy dtype of one stored element: one byte for bool and int4)
DTYPES = {
    "bool": (1, 1, np.bool_), "int1": (0, 1, np.int8), "int4": (0, 4, np.int8), "uint4": (1, 4, np.uint8),
    "int8": (0, 8, np.int8), "float32": (2, 32, np.float32), "int32": (0, 32, np.int32),
}


def u64(v):
    return struct.pack("<Q", v)


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return u64(len(b)) + b


def ndarray_record(values, dtype, code_bits=None, data_bytes=None):
    """One NDArray record; `values` as stored (one byte per element for sub-byte dtypes)."""
    code, bits = code_bits or DTYPES[dtype][:2]
    arr = np.ascontiguousarray(values)
    data = arr.tobytes()
    out = u64(NDARRAY_MAGIC) + u64(0) + struct.pack("<iii", 1, 0, arr.ndim) + struct.pack("<BBH", code, bits, 1)
    out += b"".join(struct.pack("<q", d) for d in arr.shape)
    out += struct.pack("<q", len(data) if data_bytes is None else data_bytes) + data
    return out


def params_file(named_records):
    """save_param_dict's layout from (name, record bytes) pairs."""
    out = u64(PARAMS_MAGIC) + u64(0) + u64(len(named_records))
    out += b"".join(string(n) for n, _ in named_records)
    out += u64(len(named_records)) + b"".join(r for _, r in named_records)
    return out


def factory_payload(graph_json, named_records, module_name="default"):
    out = string(graph_json) + u64(len(named_records)) + u64(len(named_records))
    out += b"".join(string(n) for n, _ in named_records) + b"".join(r for _, r in named_records)
    return out + string(module_name)


def module_blob(records, row_ptr, children):
    """__tvm_dev_mblob bytes: (tkey, payload) records, then the _import_tree record."""
    body = u64(len(records) + 1)
    for tkey, payload in records:
        body += string(tkey) + payload
    body += string("_import_tree") + u64(len(row_ptr)) + b"".join(u64(v) for v in row_ptr)
    body += u64(len(children)) + b"".join(u64(v) for v in children)
    return u64(len(body)) + body


def blob_c_source(blob):
    """C source defining __tvm_dev_mblob as `blob`."""
    return ('__attribute__((visibility("default"))) const unsigned char __tvm_dev_mblob[%d] = {%s};\n'
            % (len(blob), ",".join(str(b) for b in blob)))


def npy_bytes(header_text, data=b"", version=1):
    """A .npy file with exactly this header dict text (padded as numpy pads it)."""
    h = header_text.encode("latin1")
    pre = 10 if version == 1 else 12
    h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    size = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + size + h + data
