"""The shared Relax VM cases (fixtures/relax/<case>): their input sets as case.json lists them."""
import json
import os

from _cases import fixtures_dir, skip_without_fixtures


FFI_PREFIX = "ffi_"


def case_folder(name):
    """The case's folder under the fixtures: relax/<name> (TVM v0.20), relax-ffi/<folder> for
    "ffi_<folder>" (TVM v0.26)."""
    if name.startswith(FFI_PREFIX):
        return os.path.join("relax-ffi", name[len(FFI_PREFIX):])
    return os.path.join("relax", name)


def _cpu_cases(root, prefix):
    out = []
    for n in os.listdir(root):
        path = os.path.join(root, n, "case.json")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            info = json.load(f)
        if info.get("kind", "relax_vm") == "relax_vm" and info.get("device", "cpu") == "cpu":
            out.append(prefix + n)
    return out


def relax_case_names():
    """Every CPU case under fixtures/relax and fixtures/relax-ffi ("ffi_" + folder); a placeholder
    that skips (fails in CI) without them."""
    d = fixtures_dir()
    root = os.path.join(d, "relax") if d else None
    if not root or not os.path.isdir(root):
        return ["relax_fixtures_missing"]
    names = _cpu_cases(root, "")
    ffi_root = os.path.join(d, "relax-ffi")
    if os.path.isdir(ffi_root):
        names += _cpu_cases(ffi_root, FFI_PREFIX)
    return sorted(names)


class RelaxCase:
    def __init__(self, name):
        d = fixtures_dir()
        if not d or not os.path.isfile(os.path.join(d, case_folder(name), "case.json")):
            skip_without_fixtures("Relax fixture %s" % name)
        self.name = name
        self.dir = os.path.join(d, case_folder(name))
        with open(self.path("case.json")) as f:
            self.info = json.load(f)
        self.entry = self.info.get("entry", "main")
        self.input_order = self.info.get("input_order") or list(self.info["inputs"])

    def path(self, f):
        return os.path.join(self.dir, f)

    def input_sets(self):
        """[(suffix, {name: input path}, [output paths, depth-first])] for every input set."""
        suffixes = [s.get("suffix", "") for s in self.info.get("input_sets", [])] or [""]
        n = len(self.info["outputs"])
        return [(s, {k: self.path("input_%s%s.npy" % (k, s)) for k in self.input_order},
                 [self.path("output_%d%s.npy" % (i, s)) for i in range(n)]) for s in suffixes]


def pre_v020_copy(case, out_path):
    """A copy of the case's library as TVM v0.13 to v0.19 write it: the executable's blob record
    named relax.Executable instead of relax.VMExecutable (the payload is the same). The blob's
    records follow the name, so they move up by the two bytes saved, its size shrinks by two and
    the freed bytes at its end are zero. Returns out_path."""
    import struct
    data = bytearray(open(case.path("deploy_relax.so"), "rb").read())
    old, new = b"relax.VMExecutable", b"relax.Executable"
    name = data.find(struct.pack("<Q", len(old)) + old)
    assert name > 16 and data.find(old, name + 9) < 0, "one executable record expected"
    start = name - 16  # the blob: u64 size, u64 record count, then the first record's name
    size, count = struct.unpack_from("<QQ", data, start)
    assert count == 3 and start + 8 + size <= len(data), (size, count)
    end = start + 8 + size
    rest = bytes(data[name + 8 + len(old):end])
    data[start:end] = (struct.pack("<QQQ", size - 2, count, len(new)) + new + rest + b"\0\0")
    with open(out_path, "wb") as f:
        f.write(bytes(data))
    return out_path
