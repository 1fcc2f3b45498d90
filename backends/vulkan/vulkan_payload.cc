#include "backends/vulkan/vulkan_payload.h"

#include <cstdio>

#include "graphrt/error.h"

namespace graphrt {
namespace vulkan_backend {

std::string quoted_name(const std::string& name) {
  constexpr size_t kMax = 64;
  std::string out = "'";
  for (size_t i = 0; i < name.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (name.size() > kMax) out += "...";
  return out + "'";
}

namespace {

// One SPIRVShader: u32 flag, then the words (u64 count, count words).
SpirvShader read_shader(BlobReader& reader) {
  SpirvShader shader;
  shader.flag = reader.read_u32("vulkan shader flag");
  uint64_t n = reader.read_count("count of SPIR-V words", 4);
  shader.words.resize(n);
  if (n) reader.read_bytes(shader.words.data(), n * 4, "SPIR-V words");
  return shader;
}

// The shader map in either layout; throws (from the reader) where the bytes
// do not fit it.
std::map<std::string, SpirvShader> read_shader_map(BlobReader& reader, ShaderMapLayout layout) {
  std::map<std::string, SpirvShader> smap;
  uint64_t count = reader.read_count("count of vulkan shaders", 8 + 4 + 8);
  for (uint64_t i = 0; i < count; ++i) {
    size_t entry_offset = reader.offset();
    std::string key = reader.read_string("vulkan shader key");
    SpirvShader shader;
    if (layout == ShaderMapLayout::kWrapped) {
      std::string bytes = reader.read_string("vulkan shader bytes");
      BlobReader inner(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), reader.origin());
      shader = read_shader(inner);
      if (!inner.at_end())
        throw reader.error(std::to_string(inner.remaining()) + " bytes after the SPIR-V words of shader " +
                           quoted_name(key))
            .with("function", key)
            .with("field", "smap");
    } else {
      shader = read_shader(reader);
    }
    if (!smap.emplace(key, std::move(shader)).second)
      throw reader.error("duplicate vulkan shader " + quoted_name(key))
          .with("entry offset", std::to_string(entry_offset))
          .with("function", key)
          .with("field", "smap");
  }
  return smap;
}

}  // namespace

VulkanModuleImage decode_vulkan_payload(BlobReader& reader) {
  VulkanModuleImage image;
  image.fmt = reader.read_string("vulkan module format");
  if (image.fmt != "vulkan")
    throw reader.error("vulkan module format is " + quoted_name(image.fmt) + ", expected 'vulkan'").with("module", "vulkan").with("field", "fmt");
  try {
    image.fmap = read_function_table(reader, "vulkan", FunctionTableLayout::kWithArgExtraTags);
  } catch (Error& e) {
    throw e.with("module", "vulkan").with("field", "fmap");
  }
  // Both layouts start each value with 8 bytes (a bytes length, or a flag
  // and the first half of a word count): only parsing to the end tells them
  // apart. The wrapped one (every current TVM) first.
  const size_t smap_offset = reader.offset();
  BlobReader wrapped = reader;
  bool wrapped_read = false;  // the wrapped layout read, with bytes left after it
  try {
    image.smap = read_shader_map(wrapped, ShaderMapLayout::kWrapped);
    if (wrapped.at_end()) {
      image.layout = ShaderMapLayout::kWrapped;
      reader = wrapped;
      return image;
    }
    wrapped_read = true;
  } catch (const Error&) {
    // not the wrapped layout: the bare one says what is wrong, if anything
  }
  auto trailing = [&](const BlobReader& r) {
    return r.error(std::to_string(r.remaining()) + " bytes after the vulkan module's shader map")
        .with("smap offset", std::to_string(smap_offset))
        .with("module", "vulkan")
        .with("field", "smap");
  };
  BlobReader bare = reader;
  try {
    image.smap = read_shader_map(bare, ShaderMapLayout::kBare);
  } catch (Error& e) {
    if (wrapped_read) throw trailing(wrapped);
    throw e.with("module", "vulkan").with("field", "smap");
  }
  if (!bare.at_end()) throw trailing(wrapped_read ? wrapped : bare);
  image.layout = ShaderMapLayout::kBare;
  reader = bare;
  return image;
}

std::string encode_vulkan_payload(const VulkanModuleImage& image) {
  BlobWriter w;
  w.write_string(image.fmt);
  write_function_table(w, image.fmap, FunctionTableLayout::kWithArgExtraTags);
  w.write_u64(image.smap.size());
  for (const auto& entry : image.smap) {
    w.write_string(entry.first);
    BlobWriter shader;
    shader.write_u32(entry.second.flag);
    shader.write_u64(entry.second.words.size());
    for (uint32_t word : entry.second.words) shader.write_u32(word);
    if (image.layout == ShaderMapLayout::kWrapped) {
      w.write_string(shader.take());
    } else {
      std::string bytes = shader.take();
      for (char c : bytes) w.write_u8(static_cast<uint8_t>(c));
    }
  }
  return w.take();
}

}  // namespace vulkan_backend
}  // namespace graphrt
