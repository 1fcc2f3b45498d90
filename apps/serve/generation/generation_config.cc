#include "generation/generation_config.h"

#include "graphrt/error.h"
#include "graphrt/json_reader.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::JsonReader;

namespace {

std::string field(std::string_view key) { return "generation." + graphrt::shown_name(std::string(key)); }

int64_t positive(JsonReader& r, std::string_view key, int64_t max) {
  int64_t v = 0;
  const bool integer = r.read_integer(&v);
  if (!integer) r.skip_value();
  if (!integer || v < 1 || v > max)
    throw Error("must be an integer in [1, " + std::to_string(max) + "]").with("field", field(key));
  return v;
}

std::string name(JsonReader& r, std::string_view key) {
  std::string v;
  if (r.next_is_string()) v = r.read_string();
  else r.skip_value();
  if (v.empty()) throw Error("must be the name of a VM function").with("field", field(key));
  return v;
}

}  // namespace

GenerationConfig parse_generation_config(JsonReader& r) {
  if (!r.next_is_object()) {
    r.skip_value();
    throw Error("must be an object (create_cache, prefill, decode, max_batch_size, max_total_seq_len, "
                "prefill_chunk_size, page_size, default_max_tokens)")
        .with("field", "generation");
  }
  GenerationConfig c;
  c.given = true;
  try {
    r.object_unique_keys([&](std::string_view k) {
      c.keys.emplace_back(k);
      if (k == "create_cache") c.model.create_cache = name(r, k);
      else if (k == "prefill") c.model.prefill = name(r, k);
      else if (k == "decode") c.model.decode = name(r, k);
      else if (k == "max_batch_size") c.model.max_batch_size = positive(r, k, 4096);
      else if (k == "max_total_seq_len") c.model.max_total_seq_len = positive(r, k, int64_t(1) << 24);
      else if (k == "prefill_chunk_size") c.model.prefill_chunk_size = positive(r, k, int64_t(1) << 20);
      else if (k == "page_size") c.model.page_size = positive(r, k, 4096);
      else if (k == "default_max_tokens") c.default_max_tokens = positive(r, k, int64_t(1) << 24);
      else
        throw Error("unknown or mistyped key " + graphrt::quote_untrusted(std::string(k)) +
                    " (known: create_cache, prefill, decode, max_batch_size, max_total_seq_len, prefill_chunk_size, "
                    "page_size, default_max_tokens)")
            .with("field", field(k));
    });
  } catch (Error& e) {
    const std::string repeated = e.context_value("member");
    if (e.context_value("field").empty() && !repeated.empty()) e.with("field", "generation." + repeated);
    throw;
  }
  return c;
}

}  // namespace graphrt_serve
