#include "backends/relax/executable_writer.h"

#include "graphrt/binary_loader.h"
#include "graphrt/blob_reader.h"

namespace graphrt {
namespace relax {

namespace {

void write_i64(BlobWriter& w, int64_t v) { w.write_u64(static_cast<uint64_t>(v)); }
void write_i32(BlobWriter& w, int32_t v) { w.write_u32(static_cast<uint32_t>(v)); }

void write_function(BlobWriter& w, const FunctionInfo& f) {
  write_i32(w, static_cast<int32_t>(f.kind));
  w.write_string(f.name);
  write_i64(w, f.start_instr);
  write_i64(w, f.end_instr);
  write_i64(w, f.num_args);
  write_i64(w, f.register_file_size);
  w.write_u64(f.param_names.size());
  for (const std::string& p : f.param_names) w.write_string(p);
}

// The tag of a constant of value kind `index` in the format written: the
// older 0..5 tags, or tvm-ffi type indices (V2).
int32_t constant_tag(size_t index, bool v2) {
  switch (index) {
    case kTensorValue: return v2 ? int32_t(FfiConstantTag::kTensor) : int32_t(ConstantTag::kNDArray);
    case kDTypeValue: return v2 ? int32_t(FfiConstantTag::kDataType) : int32_t(ConstantTag::kDLDataType);
    case kShapeValue: return v2 ? int32_t(FfiConstantTag::kShape) : int32_t(ConstantTag::kShapeTuple);
    case kStringValue: return v2 ? int32_t(FfiConstantTag::kString) : int32_t(ConstantTag::kString);
    case kIntValue: return v2 ? int32_t(FfiConstantTag::kInt) : int32_t(ConstantTag::kInt);
    default: return v2 ? int32_t(FfiConstantTag::kFloat) : int32_t(ConstantTag::kFloat);
  }
}

void write_constant(BlobWriter& w, const Value& v, bool v2) {
  switch (v.index()) {
    case kTensorValue:
    case kDTypeValue:
    case kShapeValue:
    case kStringValue:
    case kIntValue:
    case kFloatValue:
      write_i32(w, constant_tag(v.index(), v2));
      break;
    default:
      throw Error(ErrorKind::kUnsupported, std::string("a ") + value_kind_name(v) + " cannot be a constant");
  }
  switch (v.index()) {
    case kTensorValue:
      return write_ndarray_record(w, std::get<NDArray>(v).handle());
    case kDTypeValue: {
      const DLDataType t = std::get<DLDataType>(v);
      w.write_u8(t.code);
      w.write_u8(t.bits);
      return w.write_u16(t.lanes);
    }
    case kShapeValue: {
      const auto& dims = std::get<Ref<ShapeObj>>(v)->dims;
      w.write_u64(dims.size());
      for (int64_t d : dims) write_i64(w, d);
      return;
    }
    case kStringValue:
      return w.write_string(*std::get<StringRef>(v));
    case kIntValue:
      return write_i64(w, std::get<int64_t>(v));
    case kFloatValue: {
      const double d = std::get<double>(v);
      return w.write_raw(&d, 8);
    }
    default:
      return;
  }
}

void write_i64_vector(BlobWriter& w, const std::vector<int64_t>& v) {
  w.write_u64(v.size());
  if (!v.empty()) w.write_raw(v.data(), v.size() * 8);
}

}  // namespace

std::string write_executable(const Executable& exe) {
  BlobWriter w;
  w.write_u64(exe.format_v2 ? kExecutableMagicV2 : kExecutableMagic);
  w.write_string(exe.version);
  w.write_u64(exe.functions.size());
  for (const FunctionInfo& f : exe.functions) write_function(w, f);
  if (exe.format_v2) {
    w.write_u64(exe.memory_scopes.size());
    for (const auto& scope : exe.memory_scopes) {
      write_i64(w, scope.first);
      w.write_string(scope.second);
    }
  }
  w.write_u64(exe.constants.size());
  for (const Value& c : exe.constants) write_constant(w, c, exe.format_v2);
  write_i64_vector(w, exe.instr_offset);
  write_i64_vector(w, exe.instr_data);
  return w.take();
}

std::string write_executable_record(const Executable& exe) {
  BlobWriter w;
  w.write_string(write_executable(exe));
  return w.take();
}

}  // namespace relax
}  // namespace graphrt
