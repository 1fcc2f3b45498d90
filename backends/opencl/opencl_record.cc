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

// Only 0, a plain argument, occurs for OpenCL (1 is CUDA's TMA tensor map).
void check_arg_extra_tags(const OpenclFunctionInfo& info) {
  for (size_t i = 0; i < info.arg_extra_tags.size(); ++i) {
    const int32_t tag = info.arg_extra_tags[i];
    if (tag != 0)
      throw record_error(ErrorKind::kUnsupported,
                         "opencl kernel argument " + std::to_string(i) + " has extra tag " + std::to_string(tag) +
                             " (only 0, a plain argument, occurs for OpenCL)",
                         info.name, "arg_extra_tags");
  }
}

FunctionTableLayout layout_of(OpenclPayloadFormat format) {
  return format == OpenclPayloadFormat::kWithArgExtraTags ? FunctionTableLayout::kWithArgExtraTags
                                                          : FunctionTableLayout::kRecord;
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
  try {
    image.fmap = read_function_table(reader, "opencl", layout_of(format));
  } catch (Error& e) {
    throw e.with("module", "opencl");
  }
  for (const auto& entry : image.fmap) check_arg_extra_tags(entry.second);
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
  DeviceFunctionTable fmap = image.fmap;
  // Every argument a plain one (tag 0) where an image made by hand gives no tags.
  for (auto& entry : fmap)
    if (entry.second.arg_extra_tags.empty()) entry.second.arg_extra_tags.assign(entry.second.arg_types.size(), 0);
  write_function_table(w, fmap, layout_of(format));
  w.write_string(image.code);
  return w.take();
}

}  // namespace opencl_backend
}  // namespace graphrt
