#include "common/language_model_run.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "graphrt/error.h"
#include "graphrt/json_writer.h"
#include "graphrt/runtime.h"
#include "graphrt/text_generation.h"

namespace graphrt_apps {
namespace {

// Each sampling flag and the generation field it sets.
struct FieldFlag {
  const char* flag;
  const char* field;
  bool integer;
};
const FieldFlag kFieldFlags[] = {
    {"--max-tokens", "max_tokens", true}, {"--temperature", "temperature", false},
    {"--top-p", "top_p", false},          {"--top-k", "top_k", true},
    {"--seed", "seed", true},
};

// The flag's value written as the field's JSON number.
void write_number_of_flag(const Args& args, const FieldFlag& f, graphrt::JsonWriter& w) {
  const std::string text = args.get(f.flag);
  size_t used = 0;
  try {
    if (f.integer) {
      const long long value = std::stoll(text, &used);
      if (used == text.size()) {
        w.integer(value);
        return;
      }
    } else {
      const double value = std::stod(text, &used);
      if (used == text.size()) {
        w.number(value);  // inf and nan as null: the model's default, as before
        return;
      }
    }
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(f.flag) + " expects " + (f.integer ? "an integer" : "a number") + ", got '" +
                   text.substr(0, 40) + "'");
}

std::string flag_of_field(const std::string& field) {
  for (const FieldFlag& f : kFieldFlags) {
    if (field == f.field) return f.flag;
  }
  return field == "stop" ? "--stop" : "";
}

graphrt::GenerationConfig config_from_flags(const Args& args, const graphrt::GenerationConfig& defaults) {
  graphrt::JsonWriter fields;
  fields.begin_object();
  for (const FieldFlag& f : kFieldFlags) {
    if (args.has(f.flag)) write_number_of_flag(args, f, fields.key(f.field));
  }
  if (args.has("--stop")) {
    fields.key("stop").begin_array();
    for (const std::string& stop : args.all("--stop")) fields.string(stop);
    fields.end_array();
  }
  try {
    return graphrt::parse_generation_config(fields.end_object().take(), defaults);
  } catch (const graphrt::Error& e) {
    const std::string flag = flag_of_field(e.context_value("field"));
    if (flag.empty()) throw;
    throw UsageError(flag + ": " + e.message());
  }
}

void print_figures(const graphrt::GenerationResult& r, std::ostream& figures) {
  const size_t decoded = r.tokens.size() > 1 ? r.tokens.size() - 1 : 0;
  figures << "prompt " << r.prompt_tokens << " tokens, generated " << r.tokens.size() << " (finish: "
          << graphrt::finish_reason_name(r.finish_reason) << "); time to first token "
          << r.time_to_first_token_s * 1e3 << " ms";
  if (decoded > 0) figures << ", decode " << r.decode_s * 1e3 / static_cast<double>(decoded) << " ms/token";
  figures << "\n";
}

}  // namespace

const std::vector<FlagSpec>& language_model_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--generate", true, false, "TEXT",
       "MODEL is an MLC-LLM model folder: prints the completion of TEXT (encoded as is, the conv_template's stops "
       "applied) on stdout as it is generated, figures on stderr (default: none)"},
      {"--chat", true, false, "MESSAGE",
       "MODEL is an MLC-LLM model folder: prints the assistant's answer to MESSAGE under its conv_template (default: "
       "none)"},
      {"--tokenize", true, false, "TEXT",
       "MODEL is an MLC-LLM model folder: prints the token ids of TEXT as a JSON array (default: none)"},
      {"--model-lib", true, false, "LIB.so",
       "the model library of an MLC-LLM folder (default: <folder>/<name>-<device>.so)"},
      {"--max-tokens", true, false, "N", "tokens generated at most (default: until a stop or the context's end)"},
      {"--temperature", true, false, "T", "sampling temperature, 0 greedy (default: the model's mlc-chat-config.json)"},
      {"--top-p", true, false, "P", "nucleus sampling mass in [0, 1] (default: the model's mlc-chat-config.json)"},
      {"--top-k", true, false, "K", "samples among the K most probable tokens (default: 0, off)"},
      {"--seed", true, false, "S", "the request's random seed (default: random)"},
      {"--stop", true, true, "TEXT", "ends the generation before TEXT (repeatable; default: the conv_template's)"},
  };
  return flags;
}

bool wants_language_model(const Args& args) {
  if (args.has("--generate") || args.has("--chat") || args.has("--tokenize")) return true;
  for (const FlagSpec& f : language_model_flags()) {
    if (args.has(f.name)) throw UsageError(f.name + " needs --generate, --chat or --tokenize");
  }
  return false;
}

int run_language_model(const Args& args, DLDevice device, std::ostream& out, std::ostream& figures) {
  const int modes = args.has("--generate") + args.has("--chat") + args.has("--tokenize");
  if (modes > 1) throw UsageError("--generate, --chat and --tokenize are one each");
  graphrt::MlcFolderOptions options;
  options.model_lib = args.get("--model-lib");
  graphrt::Session session(graphrt::runtime(), device);
  graphrt::TextGenerator generator(session, args.positional()[0], options);
  if (args.has("--tokenize")) {
    graphrt::JsonWriter ids;
    ids.begin_array();
    for (const int32_t id : generator.tokenizer().encode(args.get("--tokenize"))) ids.integer(id);
    out << ids.end_array().text() << "\n";
    return 0;
  }
  const graphrt::GenerationConfig config = config_from_flags(args, generator.default_config());
  const auto print = [&out](const std::string& piece) { out << piece << std::flush; };
  const graphrt::GenerationResult result =
      args.has("--chat") ? generator.chat({{"user", args.get("--chat")}}, config, print)
                         : generator.stream(args.get("--generate"), config, print);
  if (isatty(STDOUT_FILENO)) out << "\n";  // a terminal's prompt on a line of its own; pipes get the text only
  print_figures(result, figures);
  return 0;
}

}  // namespace graphrt_apps
