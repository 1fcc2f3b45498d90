// What the request decoders that read a JSON body with graphrt::JsonReader share: how a
// refusal names its field. The reader's own refusals (malformed text, a member given twice) name
// no field; the decoders name it from where the reader was, and report malformed text before any
// field's refusal wherever it comes in the body, as a parser that reads the whole body first would.
#pragma once

#include <string>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"

namespace graphrt_serve {

// Refuses the value that comes next, not yet read: skipped first, so that malformed text in it
// is reported as such rather than as a wrong type.
[[noreturn]] void refuse_value(graphrt::JsonReader& reader, const graphrt::Error& refusal);

// Completes `e`, a refusal met while reading `body` (in the top-level member `in_member`, ""
// between members): a field's refusal, or a member given twice, gives way to the reader's
// refusal of malformed text anywhere in the body (thrown instead); the reader's refusals are
// given a "field" where they have none: the member given twice, else the top-level member they
// were met in (shown with graphrt::shown_name), else none. Call from the decoder's catch block,
// then rethrow.
void name_json_refusal(graphrt::Error& e, const std::string& body, graphrt::JsonLimits limits, const char* subject,
                       const std::string& in_member);

}  // namespace graphrt_serve
