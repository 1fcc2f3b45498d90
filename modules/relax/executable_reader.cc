#include "modules/relax/executable_reader.h"

#include "graphrt/binary_loader.h"

namespace graphrt {
namespace relax {

namespace {

void read_header(BlobReader& r, Executable& exe) {
  const uint64_t magic = r.read_u64("relax executable magic");
  if (magic != kExecutableMagic) {
    throw r.error("not a Relax VM executable: bad magic").with("field", "magic");
  }
  exe.version = r.read_string("relax executable version");
  if (exe.version != kExecutableVersion) {
    throw Error(ErrorKind::kUnsupported, "unsupported Relax executable version '" + exe.version + "' (expected '" +
                                             kExecutableVersion + "')")
        .with("field", "version");
  }
}

FunctionInfo read_function(BlobReader& r, size_t index) {
  FunctionInfo f;
  const int32_t kind = r.read_i32("function kind");
  f.name = r.read_string("function name");
  try {
    if (kind < 0 || kind > 2) throw r.error("function kind " + std::to_string(kind) + " is not 0, 1 or 2").with("field", "kind");
    f.kind = static_cast<FunctionKind>(kind);
    f.start_instr = r.read_i64("function start_instr");
    f.end_instr = r.read_i64("function end_instr");
    f.num_args = r.read_i64("function num_args");
    f.register_file_size = r.read_i64("function register_file_size");
    f.param_names = r.read_string_vector("function param_names");
  } catch (Error& e) {
    throw e.with("function", f.name);
  }
  (void)index;
  return f;
}

DLDataType read_dtype(BlobReader& r) {
  DLDataType t;
  t.code = r.read_u8("constant dtype code");
  t.bits = r.read_u8("constant dtype bits");
  t.lanes = r.read_u16("constant dtype lanes");
  return t;
}

Value read_constant(BlobReader& r, size_t index) {
  const int32_t tag = r.read_i32("constant tag");
  switch (static_cast<ConstantTag>(tag)) {
    case ConstantTag::kNDArray:
      return read_ndarray_records(r, {"c[" + std::to_string(index) + "]"}, "constant").front();
    case ConstantTag::kDLDataType:
      return read_dtype(r);
    case ConstantTag::kShapeTuple: {
      const uint64_t n = r.read_count("constant shape length", 8);
      std::vector<int64_t> dims(n);
      for (auto& d : dims) d = r.read_i64("constant shape dimension");
      return make_shape(std::move(dims));
    }
    case ConstantTag::kString:
      return std::make_shared<const std::string>(r.read_string("constant string"));
    case ConstantTag::kInt:
      return r.read_i64("constant int");
    case ConstantTag::kFloat: {
      double v;
      r.read_bytes(&v, 8, "constant float");
      return v;
    }
  }
  throw r.error("constant tag " + std::to_string(tag) + " is not one of 0..5").with("field", "constant tag");
}

void read_functions(BlobReader& r, Executable& exe) {
  // A function takes at least 4+8+8*4+8+8 bytes.
  const uint64_t n = r.read_count("function table count", 60);
  exe.functions.reserve(n);
  for (uint64_t i = 0; i < n; ++i) exe.functions.push_back(read_function(r, i));
}

void read_constants(BlobReader& r, Executable& exe) {
  const uint64_t n = r.read_count("constant pool count", 4);
  exe.constants.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    try {
      exe.constants.push_back(read_constant(r, i));
    } catch (Error& e) {
      throw e.with("constant", std::to_string(i));
    }
  }
}

std::vector<int64_t> read_i64_vector(BlobReader& r, const char* what) {
  const uint64_t n = r.read_count(what, 8);
  std::vector<int64_t> v(n);
  if (n) r.read_bytes(v.data(), n * 8, what);
  return v;
}

}  // namespace

Executable read_executable(const uint8_t* data, size_t size, const std::string& type_key) {
  BlobReader r(data, size);
  Executable exe;
  exe.type_key = type_key;
  read_header(r, exe);
  read_functions(r, exe);
  read_constants(r, exe);
  exe.instr_offset = read_i64_vector(r, "instruction offsets");
  exe.instr_data = read_i64_vector(r, "instruction words");
  if (!r.at_end()) throw r.error(std::to_string(r.remaining()) + " bytes after the code section").with("field", "code");
  return exe;
}

Executable read_executable_record(BlobReader& reader, const std::string& type_key) {
  const uint64_t n = reader.read_count("relax executable length", 1);
  const uint8_t* bytes = reader.take(n, "relax executable");
  try {
    return read_executable(bytes, n, type_key);
  } catch (Error& e) {
    throw e.with("tkey", type_key);
  }
}

}  // namespace relax
}  // namespace graphrt
