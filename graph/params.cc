// TVM's parameter files (save_param_dict layout).
#include "graphrt/binary_loader.h"
#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"

namespace graphrt {

namespace {
constexpr uint64_t kParamListMagic = 0xF7E58D4F05049CB7ULL;
}

ParamList load_param_dict(const std::string& bytes, const std::string& origin) {
  return load_param_dict(runtime(), bytes, origin);
}

ParamList load_param_dict(const Runtime& runtime, const std::string& bytes, const std::string& origin) {
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), origin);
  if (reader.read_u64("params magic") != kParamListMagic)
    throw reader.error("not a TVM params file (bad magic; expected save_param_dict format)");
  reader.read_u64("params reserved");
  std::vector<std::string> names = reader.read_string_vector("param names");
  uint64_t count = reader.read_u64("param array count");
  if (count != names.size())
    throw reader.error("params file lists " + std::to_string(names.size()) + " names but " + std::to_string(count) +
                       " arrays");
  std::vector<NDArray> arrays = read_ndarray_records(runtime, reader, names, "param");
  ParamList params;
  params.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) params.emplace_back(names[i], std::move(arrays[i]));
  if (!reader.at_end()) throw reader.error(std::to_string(reader.remaining()) + " trailing bytes after the last param");
  return params;
}

std::string save_param_dict(const ParamList& params) {
  BlobWriter writer;
  writer.write_u64(kParamListMagic);
  writer.write_u64(0);
  writer.write_u64(params.size());
  for (const auto& p : params) writer.write_string(p.first);
  writer.write_u64(params.size());
  for (const auto& p : params) write_ndarray_record(writer, p.second.handle());
  return writer.take();
}

}  // namespace graphrt
