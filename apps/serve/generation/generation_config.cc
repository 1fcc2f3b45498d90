#include "generation/generation_config.h"

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using json = nlohmann::json;

namespace {

std::string field(const std::string& key) { return "generation." + key; }

int64_t positive(const json& v, const std::string& key, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
    throw Error("must be an integer in [1, " + std::to_string(max) + "]").with("field", field(key));
  return v.get<int64_t>();
}

std::string name(const json& v, const std::string& key) {
  if (!v.is_string() || v.get<std::string>().empty())
    throw Error("must be the name of a VM function").with("field", field(key));
  return v.get<std::string>();
}

}  // namespace

GenerationConfig parse_generation_config(const json& section) {
  if (!section.is_object())
    throw Error("must be an object (create_cache, prefill, decode, max_batch_size, max_total_seq_len, "
                "prefill_chunk_size, page_size, default_max_tokens)")
        .with("field", "generation");
  GenerationConfig c;
  c.given = true;
  for (auto it = section.begin(); it != section.end(); ++it) {
    const std::string& k = it.key();
    c.keys.push_back(k);
    if (k == "create_cache") c.model.create_cache = name(*it, k);
    else if (k == "prefill") c.model.prefill = name(*it, k);
    else if (k == "decode") c.model.decode = name(*it, k);
    else if (k == "max_batch_size") c.model.max_batch_size = positive(*it, k, 4096);
    else if (k == "max_total_seq_len") c.model.max_total_seq_len = positive(*it, k, int64_t(1) << 24);
    else if (k == "prefill_chunk_size") c.model.prefill_chunk_size = positive(*it, k, int64_t(1) << 20);
    else if (k == "page_size") c.model.page_size = positive(*it, k, 4096);
    else if (k == "default_max_tokens") c.default_max_tokens = positive(*it, k, int64_t(1) << 24);
    else
      throw Error("unknown or mistyped key '" + k +
                  "' (known: create_cache, prefill, decode, max_batch_size, max_total_seq_len, prefill_chunk_size, "
                  "page_size, default_max_tokens)")
          .with("field", field(k));
  }
  return c;
}

}  // namespace graphrt_serve
