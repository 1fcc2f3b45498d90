#include "function_table.h"

#include "graphrt/error.h"

namespace graphrt {

namespace {

DeviceFunctionInfo read_function_info(BlobReader& reader, const std::string& module, FunctionTableLayout layout) {
  const auto field = [&](const char* what) { return module + " " + what; };
  DeviceFunctionInfo info;
  info.name = reader.read_string(field("FunctionInfo name").c_str());
  const uint64_t nargs = reader.read_count(("count of " + field("kernel arg types")).c_str(), 4);
  info.arg_types.reserve(nargs);
  for (uint64_t a = 0; a < nargs; ++a) {
    DLDataType t;
    t.code = reader.read_u8(field("kernel arg type code").c_str());
    t.bits = reader.read_u8(field("kernel arg type bits").c_str());
    t.lanes = reader.read_u16(field("kernel arg type lanes").c_str());
    info.arg_types.push_back(t);
  }
  info.launch_param_tags = reader.read_string_vector(field("launch param tags").c_str());
  if (layout == FunctionTableLayout::kWithArgExtraTags) {
    const uint64_t ntags = reader.read_count(("count of " + field("kernel arg extra tags")).c_str(), 4);
    info.arg_extra_tags.reserve(ntags);
    for (uint64_t i = 0; i < ntags; ++i) info.arg_extra_tags.push_back(reader.read_i32(field("kernel arg extra tag").c_str()));
  }
  return info;
}

}  // namespace

DeviceFunctionTable read_function_table(BlobReader& reader, const std::string& module, FunctionTableLayout layout) {
  // The least an entry takes: a key, a name, two counts (and the extra tags' count).
  const size_t least = 8 + 8 + 8 + 8 + (layout == FunctionTableLayout::kWithArgExtraTags ? 8 : 0);
  const uint64_t count = reader.read_count(("count of " + module + " functions").c_str(), least);
  DeviceFunctionTable table;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t entry_offset = reader.offset();
    std::string key = reader.read_string((module + " function key").c_str());
    DeviceFunctionInfo info = read_function_info(reader, module, layout);
    info.name = key;  // the key is the kernel's name, as TVM's loaders take it
    if (!table.emplace(key, std::move(info)).second)
      throw reader.error("duplicate " + module + " function " + quote_untrusted(key, 80))
          .with("entry offset", std::to_string(entry_offset))
          .with("function", key)
          .with("field", "fmap");
  }
  return table;
}

void write_function_table(BlobWriter& writer, const DeviceFunctionTable& table, FunctionTableLayout layout) {
  writer.write_u64(table.size());
  for (const auto& entry : table) {
    const DeviceFunctionInfo& info = entry.second;
    writer.write_string(entry.first);
    writer.write_string(info.name);
    writer.write_u64(info.arg_types.size());
    for (DLDataType t : info.arg_types) {
      writer.write_u8(t.code);
      writer.write_u8(t.bits);
      writer.write_u16(t.lanes);
    }
    writer.write_u64(info.launch_param_tags.size());
    for (const std::string& tag : info.launch_param_tags) writer.write_string(tag);
    if (layout == FunctionTableLayout::kWithArgExtraTags) {
      writer.write_u64(info.arg_extra_tags.size());
      for (int32_t tag : info.arg_extra_tags) writer.write_u32(static_cast<uint32_t>(tag));
    }
  }
}

}  // namespace graphrt
