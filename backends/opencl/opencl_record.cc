#include "backends/opencl/opencl_record.h"

#include <cstdio>

#include "graphrt/error.h"

namespace graphrt {
namespace opencl_backend {

namespace {

constexpr const char* kMarker = "// Function: ";

Error record_error(ErrorKind kind, const std::string& message, const std::string& function, const char* field) {
  Error e(kind, message);
  e.with("module", "opencl");
  if (!function.empty()) e.with("function", quoted(function));
  e.with("field", field);
  return e;
}

void read_arg_extra_tags(BlobReader& reader, const std::string& function) {
  const uint64_t n = reader.read_count("count of opencl kernel arg extra tags", 4);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t tag = reader.read_i32("opencl kernel arg extra tag");
    if (tag != 0)
      throw record_error(ErrorKind::kUnsupported,
                         "opencl kernel argument " + std::to_string(i) + " has extra tag " + std::to_string(tag) +
                             " (only 0, a plain argument, occurs for OpenCL)",
                         function, "arg_extra_tags");
  }
}

OpenclFunctionInfo read_function_info(BlobReader& reader, const std::string& key, OpenclPayloadFormat format) {
  OpenclFunctionInfo info;
  reader.read_string("opencl FunctionInfo name");  // the key names the kernel, as in TVM's loader
  info.name = key;
  const uint64_t nargs = reader.read_count("count of opencl kernel arg types", 4);
  info.arg_types.reserve(nargs);
  for (uint64_t a = 0; a < nargs; ++a) {
    DLDataType t;
    t.code = reader.read_u8("opencl kernel arg type code");
    t.bits = reader.read_u8("opencl kernel arg type bits");
    t.lanes = reader.read_u16("opencl kernel arg type lanes");
    info.arg_types.push_back(t);
  }
  info.launch_param_tags = reader.read_string_vector("opencl launch param tags");
  if (format == OpenclPayloadFormat::kWithArgExtraTags) read_arg_extra_tags(reader, key);
  return info;
}

void check_format(const std::string& fmt) {
  if (fmt == "cl") return;
  if (fmt == "xclbin" || fmt == "awsxclbin" || fmt == "aocx")
    throw record_error(ErrorKind::kUnsupported,
                       "opencl module format " + quoted(fmt) +
                           " is a device binary for an FPGA flow (clCreateProgramWithBinary), which graphrt does not "
                           "load; it runs OpenCL C source (format \"cl\")",
                       "", "fmt");
  throw record_error(ErrorKind::kUnsupported, "unknown opencl module format " + quoted(fmt) + " (expected \"cl\")", "",
                     "fmt");
}

}  // namespace

std::string quoted(const std::string& text) {
  constexpr size_t kMax = 80;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (text.size() > kMax) out += " (cut, " + std::to_string(text.size()) + " bytes)";
  return out;
}

std::map<std::string, std::string> split_kernel_sources(const std::string& code) {
  std::map<std::string, std::string> out;
  const std::string marker = kMarker;
  // A marker counts only at the start of a line.
  auto find_marker = [&](size_t from) {
    for (size_t at = code.find(marker, from); at != std::string::npos; at = code.find(marker, at + 1)) {
      if (at == 0 || code[at - 1] == '\n') return at;
    }
    return std::string::npos;
  };
  size_t at = find_marker(0);
  if (at == std::string::npos)
    throw record_error(ErrorKind::kInvalidArgument,
                       "the opencl module's source has no \"// Function: <name>\" line before its kernels", "", "code");
  const std::string prefix = code.substr(0, at);
  while (at != std::string::npos) {
    const size_t name_begin = at + marker.size();
    size_t name_end = code.find('\n', name_begin);
    if (name_end == std::string::npos) name_end = code.size();
    std::string name = code.substr(name_begin, name_end - name_begin);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
    if (name.empty())
      throw record_error(ErrorKind::kInvalidArgument,
                         "the opencl module's source has a \"// Function:\" line without a name at byte " +
                             std::to_string(at),
                         "", "code");
    const size_t body = name_end < code.size() ? name_end + 1 : name_end;
    const size_t next = find_marker(body);
    std::string text = prefix + code.substr(body, next == std::string::npos ? std::string::npos : next - body);
    if (!out.emplace(name, std::move(text)).second)
      throw record_error(ErrorKind::kInvalidArgument, "the opencl module's source defines kernel " + quoted(name) +
                                                          " twice (two \"// Function:\" lines)",
                         name, "code");
    at = next;
  }
  return out;
}

OpenclModuleImage decode_opencl_payload(BlobReader& reader, OpenclPayloadFormat format) {
  OpenclModuleImage image;
  image.fmt = reader.read_string("opencl module format");
  check_format(image.fmt);
  const uint64_t count = reader.read_count("count of opencl functions", 8 + 8 + 8 + 8);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t entry_offset = reader.offset();
    std::string key = reader.read_string("opencl function key");
    OpenclFunctionInfo info = read_function_info(reader, key, format);
    if (!image.fmap.emplace(key, std::move(info)).second)
      throw reader.error("duplicate opencl function " + quoted(key))
          .with("entry offset", std::to_string(entry_offset))
          .with("module", "opencl")
          .with("field", "fmap");
  }
  image.code = reader.read_string("opencl module source");
  image.kernel_sources = split_kernel_sources(image.code);
  for (const auto& entry : image.fmap) {
    if (!image.kernel_sources.count(entry.first))
      throw record_error(ErrorKind::kInvalidArgument,
                         "opencl kernel " + quoted(entry.first) +
                             " of the function table has no \"// Function: \" section in the module's source",
                         entry.first, "code");
  }
  return image;
}

std::string encode_opencl_payload(const OpenclModuleImage& image, OpenclPayloadFormat format) {
  BlobWriter w;
  w.write_string(image.fmt);
  w.write_u64(image.fmap.size());
  for (const auto& entry : image.fmap) {
    w.write_string(entry.first);
    w.write_string(entry.second.name);
    w.write_u64(entry.second.arg_types.size());
    for (DLDataType t : entry.second.arg_types) {
      w.write_u8(t.code);
      w.write_u8(t.bits);
      w.write_u16(t.lanes);
    }
    w.write_u64(entry.second.launch_param_tags.size());
    for (const std::string& tag : entry.second.launch_param_tags) w.write_string(tag);
    if (format == OpenclPayloadFormat::kWithArgExtraTags) {
      w.write_u64(entry.second.arg_types.size());
      for (size_t i = 0; i < entry.second.arg_types.size(); ++i) w.write_u32(0);
    }
  }
  w.write_string(image.code);
  return w.take();
}

}  // namespace opencl_backend
}  // namespace graphrt
