#include "models/model_config.h"

#include <nlohmann/json.hpp>

#include "graphrt/error.h"
#include "protocol/datatype.h"

namespace graphrt_serve {

using graphrt::Error;
using json = nlohmann::json;

namespace {

int64_t int_field(const json& v, const char* key, int64_t min, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max)
    throw Error(std::string("must be an integer in [") + std::to_string(min) + ", " + std::to_string(max) + "]")
        .with("field", key);
  return v.get<int64_t>();
}

std::vector<TensorConfig> tensors(const json& v, const char* key) {
  if (!v.is_array()) throw Error("must be an array of {name, datatype, shape}").with("field", key);
  std::vector<TensorConfig> out;
  for (const json& t : v) {
    if (!t.is_object()) throw Error("each entry must be an object").with("field", key);
    TensorConfig c;
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (it.key() == "name" && it->is_string()) {
        c.name = it->get<std::string>();
      } else if (it.key() == "datatype" && it->is_string()) {
        Datatype d;
        if (!datatype_from_name(it->get<std::string>(), &d))
          throw Error("'" + it->get<std::string>() + "' is not a protocol datatype").with("field", key);
        c.datatype = it->get<std::string>();
      } else if (it.key() == "shape" && it->is_array()) {
        c.has_shape = true;
        for (const json& d : *it) c.shape.push_back(int_field(d, "shape", -1, INT64_MAX));
      } else {
        throw Error("unknown or mistyped key '" + it.key() + "' (name: string, datatype: string, shape: array)")
            .with("field", key);
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

ModelConfig parse_model_config(const std::string& text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(std::string("malformed JSON: ") + e.what());
  }
  if (!root.is_object()) throw Error("config.json must hold a JSON object");
  ModelConfig c;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& k = it.key();
    if (k == "max_batch_size") c.max_batch_size = int_field(*it, "max_batch_size", 0, 1 << 20);
    else if (k == "max_queue_delay_us") c.max_queue_delay_us = int_field(*it, "max_queue_delay_us", 0, 60000000);
    else if (k == "instance_count") c.instance_count = static_cast<int>(int_field(*it, "instance_count", 1, 256));
    else if (k == "max_queue_size") c.max_queue_size = int_field(*it, "max_queue_size", 0, 1 << 20);
    else if (k == "timeout_us") c.timeout_us = int_field(*it, "timeout_us", 0, INT64_MAX);
    else if (k == "function" && it->is_string()) c.function = it->get<std::string>();
    else if (k == "device" && it->is_string()) c.device = it->get<std::string>();
    else if (k == "input") c.inputs = tensors(*it, "input");
    else if (k == "output") c.outputs = tensors(*it, "output");
    else if (k == "generation") c.generation = parse_generation_config(*it);
    else if (k == "name" || k == "platform" || k == "backend") continue;  // Triton-style descriptive keys
    else
      throw Error("unknown or mistyped key '" + k +
                  "' (known: max_batch_size, max_queue_delay_us, instance_count, max_queue_size, timeout_us, "
                  "function, device, input, output, generation)")
          .with("field", k);
  }
  return c;
}

}  // namespace graphrt_serve
