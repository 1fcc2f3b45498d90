// The optional API key of the /v1 endpoints (--api-key, --api-key-file): a request carries it
// as "Authorization: Bearer <key>". Compared in constant time, so the time an answer takes
// says nothing of how much of a guess was right.
#pragma once

#include <string>

namespace graphrt_serve {

// True when `key` is "" (no key set) or the header is "Bearer <key>" exactly.
bool api_key_accepts(const std::string& key, const std::string& authorization_header);

// The key of --api-key-file: the file's first line, without its line end; an Error naming the
// file when it cannot be read or holds no key.
std::string read_api_key_file(const std::string& path);

}  // namespace graphrt_serve
