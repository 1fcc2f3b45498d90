"""Reads __tvm_dev_mblob out of an ELF64 .so and parses it in TVM's layout (independent of graphrt).

The only blob/params reader outside the library, and on purpose: it is the oracle
for graphrt-pack's writers. Checking them with the library's own reader would let
a writer and a reader that agree with each other, but not with TVM's layout, pass.
"""
import struct


def elf_symbol_bytes(path, symbol):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from("<IIQQQQIIQQ", data, off)
        sections.append(dict(type=typ, addr=addr, offset=offset, size=size, link=link, entsize=entsize))
    for sec in sections:
        if sec["type"] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strtab = sections[sec["link"]]
        for j in range(sec["size"] // 24):
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, sec["offset"] + j * 24)
            end = data.index(b"\0", strtab["offset"] + st_name)
            if data[strtab["offset"] + st_name:end].decode() != symbol or st_shndx == 0:
                continue
            target = sections[st_shndx]
            start = st_value - target["addr"] + target["offset"]
            return data[start:start + st_size]
    return None


class Reader:
    def __init__(self, b):
        self.b, self.pos = b, 0

    def u64(self):
        v, = struct.unpack_from("<Q", self.b, self.pos)
        self.pos += 8
        return v

    def raw(self, n):
        if self.pos + n > len(self.b):
            raise ValueError("truncated")
        v = self.b[self.pos:self.pos + n]
        self.pos += n
        return v

    def str(self):
        return self.raw(self.u64()).decode()

    def ndarray_record(self):
        start = self.pos
        magic = self.u64()
        assert magic == 0xDD5E40F096B4A13F, hex(magic)
        self.u64()
        dev_type, dev_id, ndim = struct.unpack_from("<iii", self.b, self.pos)
        self.pos += 12
        code, bits, lanes = struct.unpack_from("<BBH", self.b, self.pos)
        self.pos += 4
        shape = [struct.unpack_from("<q", self.b, self.pos + 8 * i)[0] for i in range(ndim)]
        self.pos += 8 * ndim
        nbytes = struct.unpack_from("<q", self.b, self.pos)[0]
        self.pos += 8
        data = self.raw(nbytes)
        return dict(shape=shape, dtype=(code, bits, lanes), data=data, raw=self.b[start:self.pos], device=dev_type)


def parse_params(b):
    """save_param_dict bytes -> [(name, record)]."""
    r = Reader(b)
    assert r.u64() == 0xF7E58D4F05049CB7
    r.u64()
    names = [r.str() for _ in range(r.u64())]
    assert r.u64() == len(names)
    return [(n, r.ndarray_record()) for n in names]


def parse_blob(blob, payload_sizes=None):
    """-> (records [(tkey, payload)], row_ptr, child_indices). Factory payloads are parsed;
    other tkeys need their payload size in payload_sizes (payloads carry no length)."""
    payload_sizes = payload_sizes or {}
    outer = Reader(blob)
    nbytes = outer.u64()
    assert nbytes == len(blob) - 8, (nbytes, len(blob))
    r = Reader(blob[8:])
    count = r.u64()
    records, row_ptr, children = [], None, None
    for _ in range(count):
        tkey = r.str()
        if tkey == "_lib":
            records.append((tkey, None))
        elif tkey == "_import_tree":
            row_ptr = [r.u64() for _ in range(r.u64())]
            children = [r.u64() for _ in range(r.u64())]
        elif tkey == "GraphExecutorFactory":
            graph = r.str()
            n = r.u64()
            names = [r.str() for _ in range(r.u64())]
            assert len(names) == n
            arrays = [r.ndarray_record() for _ in range(n)]
            module_name = r.str()
            records.append((tkey, dict(graph=graph, params=list(zip(names, arrays)), module_name=module_name)))
        else:
            records.append((tkey, r.raw(payload_sizes[tkey])))
    assert r.pos == len(r.b), "trailing bytes in blob"
    return records, row_ptr, children
