#include "backends/relax/executable_reader.h"

#include "graphrt/binary_loader.h"
#include "graphrt/runtime.h"

namespace graphrt {
namespace relax {

namespace {

void read_header(BlobReader& r, Executable& exe) {
  const uint64_t magic = r.read_u64("relax executable magic");
  if (magic != kExecutableMagic && magic != kExecutableMagicV2) {
    throw r.error("not a Relax VM executable: bad magic").with("field", "magic");
  }
  exe.format_v2 = magic == kExecutableMagicV2;
  exe.version = r.read_string("relax executable version");
  if (exe.version != kExecutableVersion) {
    throw Error(ErrorKind::kUnsupported, "unsupported Relax executable version " + quote_untrusted(exe.version) + " (expected '" +
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

Value read_shape_constant(BlobReader& r) {
  const uint64_t n = r.read_count("constant shape length", 8);
  std::vector<int64_t> dims(n);
  for (auto& d : dims) d = r.read_i64("constant shape dimension");
  return make_shape(std::move(dims));
}

double read_float_constant(BlobReader& r) {
  double v;
  r.read_bytes(&v, 8, "constant float");
  return v;
}

// A V2 constant's tag (a tvm-ffi type index) as the older format's tag for the same value.
ConstantTag tag_of_ffi_type_index(BlobReader& r, int32_t tag) {
  switch (static_cast<FfiConstantTag>(tag)) {
    case FfiConstantTag::kTensor: return ConstantTag::kNDArray;
    case FfiConstantTag::kDataType: return ConstantTag::kDLDataType;
    case FfiConstantTag::kShape: return ConstantTag::kShapeTuple;
    case FfiConstantTag::kString: return ConstantTag::kString;
    case FfiConstantTag::kInt: return ConstantTag::kInt;
    case FfiConstantTag::kFloat: return ConstantTag::kFloat;
  }
  throw r.error("constant tag " + std::to_string(tag) +
                " is not a tvm-ffi type index a constant may have (1 Int, 3 Float, 5 DataType, 65 Str, 69 Shape, "
                "70 Tensor)")
      .with("field", "constant tag");
}

// `runtime`: whose CPU holds the tensor constants.
Value read_constant(const Runtime& runtime, BlobReader& r, size_t index, bool format_v2) {
  const int32_t raw = r.read_i32("constant tag");
  const ConstantTag tag = format_v2 ? tag_of_ffi_type_index(r, raw) : static_cast<ConstantTag>(raw);
  switch (tag) {
    case ConstantTag::kNDArray:
      return read_ndarray_records(runtime, r, {"c[" + std::to_string(index) + "]"}, "constant").front();
    case ConstantTag::kDLDataType:
      return read_dtype(r);
    case ConstantTag::kShapeTuple:
      return read_shape_constant(r);
    case ConstantTag::kString:
      return std::make_shared<const std::string>(r.read_string("constant string"));
    case ConstantTag::kInt:
      return r.read_i64("constant int");
    case ConstantTag::kFloat:
      return read_float_constant(r);
  }
  throw r.error("constant tag " + std::to_string(raw) + " is not one of 0..5").with("field", "constant tag");
}

void read_functions(BlobReader& r, Executable& exe) {
  // A function takes at least 4+8+8*4+8+8 bytes.
  const uint64_t n = r.read_count("function table count", 60);
  exe.functions.reserve(n);
  for (uint64_t i = 0; i < n; ++i) exe.functions.push_back(read_function(r, i));
}

// V2 only: u64 count, then (u64 index, str scope) pairs.
void read_memory_scopes(BlobReader& r, Executable& exe) {
  const uint64_t n = r.read_count("memory scope count", 16);
  exe.memory_scopes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t index = r.read_i64("memory scope index");
    exe.memory_scopes.emplace_back(index, r.read_string("memory scope"));
  }
}

void read_constants(const Runtime& runtime, BlobReader& r, Executable& exe) {
  const uint64_t n = r.read_count("constant pool count", 4);
  exe.constants.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    try {
      exe.constants.push_back(read_constant(runtime, r, i, exe.format_v2));
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
  return read_executable(runtime(), data, size, type_key);
}

Executable read_executable(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& type_key) {
  BlobReader r(data, size);
  Executable exe;
  exe.type_key = type_key;
  read_header(r, exe);
  read_functions(r, exe);
  if (exe.format_v2) read_memory_scopes(r, exe);
  read_constants(runtime, r, exe);
  exe.instr_offset = read_i64_vector(r, "instruction offsets");
  exe.instr_data = read_i64_vector(r, "instruction words");
  if (!r.at_end()) throw r.error(std::to_string(r.remaining()) + " bytes after the code section").with("field", "code");
  return exe;
}

Executable read_executable_bytes(const Runtime& runtime, BlobReader& reader, const std::string& type_key) {
  const size_t n = reader.remaining();
  const uint8_t* bytes = reader.take(n, "relax executable");
  try {
    return read_executable(runtime, bytes, n, type_key);
  } catch (Error& e) {
    throw e.with("tkey", type_key);
  }
}

Executable read_executable_record(const Runtime& runtime, BlobReader& reader, const std::string& type_key) {
  const uint64_t n = reader.read_count("relax executable length", 1);
  const uint8_t* bytes = reader.take(n, "relax executable");
  try {
    return read_executable(runtime, bytes, n, type_key);
  } catch (Error& e) {
    throw e.with("tkey", type_key);
  }
}

}  // namespace relax
}  // namespace graphrt
