// Debian's libsentencepiece, opened on first use. It carries its own copy of protobuf 3.14
// whose symbols it exports: linked like any library, a process that also holds the system's
// libprotobuf (graphrt-serve, through gRPC) binds one copy's calls to the other's code and
// aborts at load ("compiled against version 3.14.0 ..."). Opened with RTLD_DEEPBIND and
// RTLD_LOCAL it binds to its own copy and lends nothing to the process. (Sanitizer runtimes
// refuse RTLD_DEEPBIND; their builds open it plainly.)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace graphrt::llm {

// One loaded SentencePiece model (a tokenizer.model's bytes).
class SentencePieceProcessor {
 public:
  // Throws an invalid-argument error naming `origin` when the bytes are not a model, a
  // not-found one when libsentencepiece.so.0 is not installed.
  SentencePieceProcessor(const std::string& model_bytes, const std::string& origin);
  ~SentencePieceProcessor();
  SentencePieceProcessor(const SentencePieceProcessor&) = delete;
  SentencePieceProcessor& operator=(const SentencePieceProcessor&) = delete;

  std::vector<int> encode(std::string_view text) const;
  std::string decode(const std::vector<int>& ids) const;
  int piece_count() const;
  std::string piece(int id) const;
  bool is_control(int id) const;

 private:
  struct Loaded;
  std::unique_ptr<Loaded> loaded_;
  std::string origin_;
};

}  // namespace graphrt::llm
