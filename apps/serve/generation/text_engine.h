// A served MLC-LLM model folder (mlc-chat-config.json, tokenizer, weights, model library):
// the library's TextGenerator on one engine thread, which runs the queued requests one after
// another (completions as they are, chats through the folder's conv_template), handing each
// request's text to its TextStream as the library releases it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "generation/text_stream.h"
#include "graphrt/conversation.h"
#include "graphrt/generation_config.h"
#include "graphrt/session.h"
#include "graphrt/text_generation.h"

namespace graphrt_serve {

struct TextJob {
  bool chat = false;
  std::string prompt;                          // a completion's prompt, encoded as is
  std::vector<graphrt::ChatMessage> messages;  // a chat's messages
  graphrt::GenerationConfig config;
};

class TextEngine {
 public:
  // Opens the folder on `device`. Throws graphrt::Error naming the file or field at fault.
  TextEngine(const std::string& folder, DLDevice device, int64_t max_queue_size);
  ~TextEngine();
  TextEngine(const TextEngine&) = delete;
  TextEngine& operator=(const TextEngine&) = delete;

  // Queues `job`; resource exhausted when max_queue_size requests already wait.
  std::shared_ptr<TextStream> submit(TextJob job);

  // The request defaults of mlc-chat-config.json.
  const graphrt::GenerationConfig& defaults() const { return defaults_; }
  bool has_conv_template() const { return has_conv_; }
  int64_t vocab_size() const { return vocab_size_; }

 private:
  struct Pending {
    TextJob job;
    std::shared_ptr<TextStream> stream;
  };
  void loop();
  void run(Pending& pending);

  graphrt::Session session_;
  std::unique_ptr<graphrt::TextGenerator> generator_;
  graphrt::GenerationConfig defaults_;
  bool has_conv_ = false;
  int64_t vocab_size_ = 0;
  int64_t max_queue_size_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  std::shared_ptr<TextStream> running_;  // the request being generated, cancelled when the engine goes
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace graphrt_serve
