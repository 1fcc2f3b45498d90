#include "protocol/json_body.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::JsonReader;

namespace {

// The field of the reader's refusal `e`, met in the top-level member `in_member`.
void name_reader_refusal(Error& e, const std::string& in_member) {
  if (!e.context_value("field").empty()) return;
  const std::string repeated = e.context_value("member");
  const std::string field = !repeated.empty() ? repeated : graphrt::shown_name(in_member);
  if (!field.empty()) e.with("field", field);
}

}  // namespace

void refuse_value(JsonReader& reader, const Error& refusal) {
  reader.skip_value();
  throw refusal;
}

void name_json_refusal(Error& e, const std::string& body, graphrt::JsonLimits limits, const char* subject,
                       const std::string& in_member) {
  // The reader's refusals of malformed text carry the offset they were met at (and no member);
  // anything else is a field's refusal, or a member given twice, met before the text's end.
  const bool malformed = !e.context_value("offset").empty() && e.context_value("member").empty();
  if (!malformed) {
    // Only on the way out with a refusal: the whole body read once more, checked, not kept.
    std::string member;
    try {
      JsonReader r(body, limits, subject);
      if (r.next_is_object()) {
        r.object([&](std::string_view key) {
          member.assign(key.data(), key.size());
          r.skip_value();
          member.clear();
        });
      } else {
        r.skip_value();
      }
      r.expect_end();
    } catch (Error& later) {
      name_reader_refusal(later, member);
      throw later;
    }
  }
  name_reader_refusal(e, in_member);
}

}  // namespace graphrt_serve
