#include "models/model_config.h"

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "protocol/datatype.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::JsonReader;

namespace {

// A model's settings are a few hundred bytes and four levels hold {"input": [{"shape": [...]}]};
// the limits leave room for descriptive keys (name, platform, backend), skipped whatever they hold.
constexpr graphrt::JsonLimits kModelConfigJsonLimits{size_t(16) << 20, 16};

int64_t int_field(JsonReader& r, const char* key, int64_t min, int64_t max) {
  int64_t v = 0;
  const bool integer = r.read_integer(&v);
  if (!integer) r.skip_value();
  if (!integer || v < min || v > max)
    throw Error(std::string("must be an integer in [") + std::to_string(min) + ", " + std::to_string(max) + "]")
        .with("field", key);
  return v;
}

[[noreturn]] void unknown_tensor_key(std::string_view k, const char* key) {
  throw Error("unknown or mistyped key " + graphrt::quote_untrusted(std::string(k)) +
              " (name: string, datatype: string, shape: array)")
      .with("field", key);
}

void read_tensors(JsonReader& r, const char* key, std::vector<TensorConfig>& out) {
  r.array([&](size_t) {
    if (!r.next_is_object()) {
      r.skip_value();
      throw Error("each entry must be an object").with("field", key);
    }
    TensorConfig c;
    r.object_unique_keys([&](std::string_view k) {
      if (k == "name" && r.next_is_string()) {
        c.name = r.read_string();
      } else if (k == "datatype" && r.next_is_string()) {
        const std::string name = r.read_string();
        Datatype d;
        if (!datatype_from_name(name, &d))
          throw Error(graphrt::quote_untrusted(name) + " is not a protocol datatype").with("field", key);
        c.datatype = name;
      } else if (k == "shape" && r.next_is_array()) {
        c.has_shape = true;
        r.array([&](size_t) { c.shape.push_back(int_field(r, "shape", -1, INT64_MAX)); });
      } else {
        unknown_tensor_key(k, key);
      }
    });
    out.push_back(std::move(c));
  });
}

std::vector<TensorConfig> tensors(JsonReader& r, const char* key) {
  if (!r.next_is_array()) {
    r.skip_value();
    throw Error("must be an array of {name, datatype, shape}").with("field", key);
  }
  std::vector<TensorConfig> out;
  try {
    read_tensors(r, key, out);
  } catch (Error& e) {
    // A key given twice in an entry (the reader's refusal) is named by the list.
    if (e.context_value("field").empty() && !e.context_value("member").empty()) e.with("field", key);
    throw;
  }
  return out;
}

void read_root(JsonReader& r, ModelConfig& c) {
  if (!r.next_is_object()) {
    r.skip_value();  // malformed text is reported as such first
    r.expect_end();
    throw Error("config.json must hold a JSON object");
  }
  r.object_unique_keys([&](std::string_view k) {
    if (k == "max_batch_size") c.max_batch_size = int_field(r, "max_batch_size", 0, 1 << 20);
    else if (k == "max_queue_delay_us") c.max_queue_delay_us = int_field(r, "max_queue_delay_us", 0, 60000000);
    else if (k == "instance_count") c.instance_count = static_cast<int>(int_field(r, "instance_count", 1, 256));
    else if (k == "max_queue_size") c.max_queue_size = int_field(r, "max_queue_size", 0, 1 << 20);
    else if (k == "timeout_us") c.timeout_us = int_field(r, "timeout_us", 0, INT64_MAX);
    else if (k == "function" && r.next_is_string()) c.function = r.read_string();
    else if (k == "device" && r.next_is_string()) c.device = r.read_string();
    else if (k == "input") c.inputs = tensors(r, "input");
    else if (k == "output") c.outputs = tensors(r, "output");
    else if (k == "generation") c.generation = parse_generation_config(r);
    else if (k == "name" || k == "platform" || k == "backend") r.skip_value();  // Triton-style descriptive keys
    else
      throw Error("unknown or mistyped key " + graphrt::quote_untrusted(std::string(k)) +
                  " (known: max_batch_size, max_queue_delay_us, instance_count, max_queue_size, timeout_us, "
                  "function, device, input, output, generation)")
          .with("field", graphrt::shown_name(std::string(k)));
  });
  r.expect_end();
}

}  // namespace

ModelConfig parse_model_config(const std::string& text) {
  ModelConfig c;
  try {
    JsonReader r(text, kModelConfigJsonLimits, "config.json");
    read_root(r, c);
  } catch (Error& e) {
    // A key given twice in one object (the reader's refusal) is named as the field.
    const std::string repeated = e.context_value("member");
    if (e.context_value("field").empty() && !repeated.empty()) e.with("field", repeated);
    throw;
  }
  return c;
}

}  // namespace graphrt_serve
