// graphrt-run on an MLC-LLM model folder: --generate, --chat and --tokenize, with the sampling
// flags turned into the generation fields every entry point takes (graphrt/generation_config.h).
#pragma once

#include <ostream>

#include "common/args.h"
#include "graphrt/device_api.h"

namespace graphrt_apps {

// The flags of this mode, for graphrt-run's flag table.
const std::vector<FlagSpec>& language_model_flags();
// True when the command line asks for this mode; a UsageError when it gives one of the mode's
// options (--max-tokens, ...) without it.
bool wants_language_model(const Args& args);
// Runs it: the completion (or the answer, or the ids as a JSON array) on `out`, figures on
// `figures`. A generation field out of range is a UsageError naming its flag.
int run_language_model(const Args& args, DLDevice device, std::ostream& out, std::ostream& figures);

}  // namespace graphrt_apps
