#include "backends/relax/tensor_cache/manifest.h"

#include <unordered_map>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

namespace {

Error field_error(const std::string& field, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, "\"" + field + "\" " + message).with("field", field);
}

// Reads a member's value; a failure names the member.
template <typename Read>
void read_field(const std::string& key, Read read) {
  try {
    read();
  } catch (Error& e) {
    e.with("field", key);
    throw;
  }
}

std::string string_field(JsonReader& c, const std::string& key) {
  if (c.peek() != '"') throw field_error(key, "must be a string");
  return c.read_string();
}

uint64_t count_field(JsonReader& c, const std::string& key) {
  const char first = c.peek();
  if (first != '-' && (first < '0' || first > '9')) throw field_error(key, "must be an integer");
  const int64_t v = c.read_int64();
  if (v < 0) throw field_error(key, "is " + std::to_string(v) + "; it must not be negative");
  return static_cast<uint64_t>(v);
}

std::vector<int64_t> shape_field(JsonReader& c, const std::string& key) {
  if (c.peek() != '[') throw field_error(key, "must be an array of integers");
  std::vector<int64_t> shape;
  c.array([&](size_t i) {
    if (i >= kMaxDims) throw field_error(key, "has more than " + std::to_string(kMaxDims) + " dimensions");
    shape.push_back(static_cast<int64_t>(count_field(c, key)));
  });
  return shape;
}

// Marks `bit` seen; a member given twice is refused (which one counts would be a guess).
void once(unsigned* seen, unsigned bit, const std::string& key) {
  if (*seen & bit) throw field_error(key, "appears twice");
  *seen |= bit;
}

void require(unsigned seen, unsigned bit, const char* key) {
  if (!(seen & bit)) throw field_error(key, "is missing");
}

Encoding encoding_of(const std::string& text) {
  if (text == "raw") return Encoding::kRaw;
  if (text == "f32-to-bf16") return Encoding::kF32ToBF16;
  throw field_error("format", "is \"" + text + "\"; a tensor's format is \"raw\" or \"f32-to-bf16\"");
}

DLDataType dtype_of(const std::string& text) {
  try {
    const DLDataType dtype = dtype_from_string(text);
    check_tensor_dtype(dtype);
    return dtype;
  } catch (Error& e) {
    e.with("field", "dtype");
    throw;
  }
}

// The bytes the tensor's elements take in the shard.
uint64_t stored_bytes(const TensorRecord& t) {
  try {
    const int64_t numel = shape_numel(t.shape.data(), static_cast<int>(t.shape.size()));
    if (t.decodes_bf16()) return static_cast<uint64_t>(dtype_bytes(DLDataType{kDLBfloat, 16, 1}, numel));
    return static_cast<uint64_t>(dtype_bytes(t.dtype, numel));
  } catch (Error& e) {
    e.with("field", "shape");
    throw;
  }
}

enum TensorField : unsigned { kName = 1, kShape = 2, kDtype = 4, kFormat = 8, kNbytes = 16, kOffset = 32 };

void read_tensor_member(JsonReader& c, const std::string& key, TensorRecord* t, unsigned* seen) {
  if (key == "name") {
    once(seen, kName, key);
    t->name = string_field(c, key);
  } else if (key == "shape") {
    once(seen, kShape, key);
    t->shape = shape_field(c, key);
  } else if (key == "dtype") {
    once(seen, kDtype, key);
    t->dtype = dtype_of(string_field(c, key));
  } else if (key == "format") {
    once(seen, kFormat, key);
    t->encoding = encoding_of(string_field(c, key));
  } else if (key == "nbytes") {
    once(seen, kNbytes, key);
    t->nbytes = count_field(c, key);
  } else if (key == "byteOffset") {
    once(seen, kOffset, key);
    t->byte_offset = count_field(c, key);
  } else {
    c.skip_value();
  }
}

void check_tensor(const TensorRecord& t, unsigned seen) {
  static const std::pair<unsigned, const char*> fields[] = {{kName, "name"},     {kShape, "shape"},
                                                            {kDtype, "dtype"},   {kFormat, "format"},
                                                            {kNbytes, "nbytes"}, {kOffset, "byteOffset"}};
  for (const auto& f : fields) require(seen, f.first, f.second);
  const uint64_t expected = stored_bytes(t);
  if (t.nbytes != expected)
    throw field_error("nbytes", "is " + std::to_string(t.nbytes) + "; shape " + shape_to_string(t.shape) + " of " +
                                    dtype_to_string(t.dtype) + (t.decodes_bf16() ? " stored as f32-to-bf16" : "") +
                                    " takes " + std::to_string(expected));
}

TensorRecord read_tensor(JsonReader& c) {
  if (c.peek() != '{') throw Error(ErrorKind::kInvalidArgument, "a tensor record must be an object");
  TensorRecord t;
  unsigned seen = 0;
  c.object([&](std::string_view name) {
    const std::string key(name);
    read_field(key, [&] { read_tensor_member(c, key, &t, &seen); });
  });
  check_tensor(t, seen);
  return t;
}

std::string describe_tensor(size_t index, const TensorRecord* t) {
  std::string s = "tensor " + std::to_string(index);
  if (t && !t->name.empty()) s += " " + quote_untrusted(t->name);
  return s;
}

std::string describe_shard(size_t index, const ShardRecord& s) {
  std::string d = "shard " + std::to_string(index);
  if (!s.data_path.empty()) d += " '" + s.data_path + "'";
  return d;
}

// A shard's path must stay inside the cache's folder.
std::string data_path_of(const std::string& text) {
  if (text.empty()) throw field_error("dataPath", "is empty");
  if (text.find('\0') != std::string::npos) throw field_error("dataPath", "holds a NUL character");
  if (text[0] == '/') throw field_error("dataPath", "is \"" + text + "\", an absolute path; it must be inside the folder");
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('/', start), text.size());
    if (text.compare(start, end - start, "..") == 0)
      throw field_error("dataPath", "is \"" + text + "\", which leaves the folder");
    start = end + 1;
  }
  return text;
}

enum ShardField : unsigned { kPath = 1, kShardFormat = 2, kShardBytes = 4, kRecords = 8 };

struct ShardReader {
  JsonReader& c;
  size_t* total_tensors;

  void tensors(ShardRecord* s) {
    if (c.peek() != '[') throw field_error("records", "must be an array of tensor records");
    c.array([&](size_t i) {
      if (++*total_tensors > kMaxTensors)
        throw field_error("records", "holds more than " + std::to_string(kMaxTensors) + " tensors in all");
      try {
        s->tensors.push_back(read_tensor(c));
      } catch (Error& e) {
        e.with("record", describe_tensor(i, nullptr));
        throw;
      }
    });
  }

  void member(const std::string& key, ShardRecord* s, unsigned* seen) {
    if (key == "dataPath") {
      once(seen, kPath, key);
      s->data_path = data_path_of(string_field(c, key));
    } else if (key == "format") {
      once(seen, kShardFormat, key);
      const std::string format = string_field(c, key);
      if (format != "raw-shard") throw field_error(key, "is \"" + format + "\"; a shard's format is \"raw-shard\"");
    } else if (key == "nbytes") {
      once(seen, kShardBytes, key);
      s->nbytes = count_field(c, key);
    } else if (key == "records") {
      once(seen, kRecords, key);
      tensors(s);
    } else {
      c.skip_value();
    }
  }
};

// Every tensor's bytes lie inside its shard.
void check_ranges(const ShardRecord& s) {
  for (size_t i = 0; i < s.tensors.size(); ++i) {
    const TensorRecord& t = s.tensors[i];
    if (t.byte_offset > s.nbytes || t.nbytes > s.nbytes - t.byte_offset)
      throw field_error("byteOffset", "is " + std::to_string(t.byte_offset) + "; " + std::to_string(t.nbytes) +
                                          " bytes from there pass the shard's end (" + std::to_string(s.nbytes) +
                                          " bytes)")
          .with("record", describe_tensor(i, &t));
  }
}

ShardRecord read_shard(JsonReader& c, size_t* total_tensors) {
  if (c.peek() != '{') throw Error(ErrorKind::kInvalidArgument, "a shard record must be an object");
  ShardRecord s;
  unsigned seen = 0;
  ShardReader reader{c, total_tensors};
  c.object([&](std::string_view name) {
    const std::string key(name);
    if (key == "records") return reader.member(key, &s, &seen);  // its errors name the tensor record
    read_field(key, [&] { reader.member(key, &s, &seen); });
  });
  require(seen, kPath, "dataPath");
  require(seen, kShardFormat, "format");
  require(seen, kShardBytes, "nbytes");
  require(seen, kRecords, "records");
  check_ranges(s);
  return s;
}

void read_shards(JsonReader& c, Manifest* m) {
  if (c.peek() != '[') throw field_error("records", "must be an array of shard records");
  size_t total = 0;
  c.array([&](size_t i) {
    try {
      m->shards.push_back(read_shard(c, &total));
    } catch (Error& e) {
      e.with("shard", "shard " + std::to_string(i));
      throw;
    }
  });
}

// A name given to two tensors is refused: which one a lookup gets would be a guess.
void check_unique_names(const Manifest& m) {
  std::unordered_map<std::string, size_t> first_shard;
  for (size_t s = 0; s < m.shards.size(); ++s) {
    for (size_t i = 0; i < m.shards[s].tensors.size(); ++i) {
      const TensorRecord& t = m.shards[s].tensors[i];
      auto inserted = first_shard.emplace(t.name, s);
      if (!inserted.second)
        throw field_error("name", "is " + quote_untrusted(t.name) + ", a name given to another tensor before (in shard " +
                                      std::to_string(inserted.first->second) + ")")
            .with("record", describe_tensor(i, &t))
            .with("shard", describe_shard(s, m.shards[s]));
    }
  }
}

}  // namespace

Manifest parse_manifest(const std::string& text, const std::string& file) {
  try {
    // The manifest nests four deep; 64 leaves room for metadata nobody reads.
    JsonReader c(text, JsonLimits{kMaxManifestBytes, 64}, "the manifest");
    if (c.peek() != '{') throw Error(ErrorKind::kInvalidArgument, "the manifest must be a JSON object");
    Manifest m;
    bool has_records = false;
    c.object([&](std::string_view name) {
      const std::string key(name);
      if (key != "records") return c.skip_value();
      if (has_records) throw field_error(key, "appears twice");
      has_records = true;
      read_shards(c, &m);
    });
    c.expect_end();
    if (!has_records) throw field_error("records", "is missing");
    check_unique_names(m);
    return m;
  } catch (Error& e) {
    e.with("file", file);
    throw;
  }
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
