#include "modules/relax/executable_writer.h"

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

void write_constant(BlobWriter& w, const Value& v) {
  switch (v.index()) {
    case kTensorValue:
      write_i32(w, static_cast<int32_t>(ConstantTag::kNDArray));
      return write_ndarray_record(w, std::get<NDArray>(v).handle());
    case kDTypeValue: {
      const DLDataType t = std::get<DLDataType>(v);
      write_i32(w, static_cast<int32_t>(ConstantTag::kDLDataType));
      w.write_u8(t.code);
      w.write_u8(t.bits);
      return w.write_u16(t.lanes);
    }
    case kShapeValue: {
      const auto& dims = std::get<Ref<ShapeObj>>(v)->dims;
      write_i32(w, static_cast<int32_t>(ConstantTag::kShapeTuple));
      w.write_u64(dims.size());
      for (int64_t d : dims) write_i64(w, d);
      return;
    }
    case kStringValue:
      write_i32(w, static_cast<int32_t>(ConstantTag::kString));
      return w.write_string(*std::get<StringRef>(v));
    case kIntValue:
      write_i32(w, static_cast<int32_t>(ConstantTag::kInt));
      return write_i64(w, std::get<int64_t>(v));
    case kFloatValue: {
      write_i32(w, static_cast<int32_t>(ConstantTag::kFloat));
      const double d = std::get<double>(v);
      return w.write_raw(&d, 8);
    }
    default:
      throw Error(ErrorKind::kUnsupported, std::string("a ") + value_kind_name(v) + " cannot be a constant");
  }
}

void write_i64_vector(BlobWriter& w, const std::vector<int64_t>& v) {
  w.write_u64(v.size());
  if (!v.empty()) w.write_raw(v.data(), v.size() * 8);
}

}  // namespace

std::string write_executable(const Executable& exe) {
  BlobWriter w;
  w.write_u64(kExecutableMagic);
  w.write_string(exe.version);
  w.write_u64(exe.functions.size());
  for (const FunctionInfo& f : exe.functions) write_function(w, f);
  w.write_u64(exe.constants.size());
  for (const Value& c : exe.constants) write_constant(w, c);
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
