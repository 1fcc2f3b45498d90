#include "llm/tokenizer/sentencepiece_library.h"

#include <dlfcn.h>

#include <new>
#include <sentencepiece_processor.h>

#include "graphrt/error.h"

namespace graphrt::llm {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kOwnSymbolsFirst = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int kOwnSymbolsFirst = 0;
#else
constexpr int kOwnSymbolsFirst = RTLD_DEEPBIND;
#endif
#else
constexpr int kOwnSymbolsFirst = RTLD_DEEPBIND;
#endif

// The library's non-virtual entry points this file needs, looked up by their (Itanium C++
// ABI) names: calling them directly would bind libgraphrt to the library at link time. The
// processor's own methods are virtual and reached through its vtable.
struct SentencePieceEntryPoints {
  void* handle = nullptr;
  void (*construct_processor)(void*) = nullptr;
  void (*destroy_status)(void*) = nullptr;
  const char* (*status_message)(const void*) = nullptr;
  std::string failure;

  SentencePieceEntryPoints() {
    handle = dlopen("libsentencepiece.so.0", RTLD_NOW | RTLD_LOCAL | kOwnSymbolsFirst);
    if (!handle) {
      const char* why = dlerror();
      failure = why ? why : "dlopen failed";
      return;
    }
    construct_processor = reinterpret_cast<void (*)(void*)>(dlsym(handle, "_ZN13sentencepiece22SentencePieceProcessorC1Ev"));
    destroy_status = reinterpret_cast<void (*)(void*)>(dlsym(handle, "_ZN13sentencepiece4util6StatusD1Ev"));
    status_message = reinterpret_cast<const char* (*)(const void*)>(
        dlsym(handle, "_ZNK13sentencepiece4util6Status13error_messageEv"));
    if (!construct_processor || !destroy_status || !status_message) {
      failure = "libsentencepiece.so.0 lacks the processor's constructor or its status functions";
    }
  }
};

const SentencePieceEntryPoints& entry_points() {
  static const SentencePieceEntryPoints instance;  // never closed: the processors' code lives there
  return instance;
}

// A util::Status returned by the library, destroyed by the library's own destructor.
class ReturnedStatus {
 public:
  template <typename Call>
  explicit ReturnedStatus(Call&& call) {
    new (storage_) sentencepiece::util::Status(call());
  }
  ~ReturnedStatus() { entry_points().destroy_status(storage_); }
  ReturnedStatus(const ReturnedStatus&) = delete;
  ReturnedStatus& operator=(const ReturnedStatus&) = delete;

  bool ok() const { return status()->ok(); }
  std::string message() const {
    const char* m = entry_points().status_message(storage_);
    return m ? m : "";
  }

 private:
  const sentencepiece::util::Status* status() const {
    return std::launder(reinterpret_cast<const sentencepiece::util::Status*>(storage_));
  }
  alignas(sentencepiece::util::Status) unsigned char storage_[sizeof(sentencepiece::util::Status)];
};

}  // namespace

struct SentencePieceProcessor::Loaded {
  alignas(sentencepiece::SentencePieceProcessor) unsigned char storage[sizeof(sentencepiece::SentencePieceProcessor)];
  bool constructed = false;
  sentencepiece::SentencePieceProcessor* processor() {
    return std::launder(reinterpret_cast<sentencepiece::SentencePieceProcessor*>(storage));
  }
  ~Loaded() {
    if (constructed) processor()->~SentencePieceProcessor();  // virtual: the library's destructor
  }
};

SentencePieceProcessor::SentencePieceProcessor(const std::string& model_bytes, const std::string& origin)
    : loaded_(std::make_unique<Loaded>()), origin_(origin) {
  const SentencePieceEntryPoints& lib = entry_points();
  if (!lib.failure.empty()) {
    throw Error(ErrorKind::kNotFound, origin + ": a SentencePiece model needs Debian's libsentencepiece0: " + lib.failure)
        .with("file", origin);
  }
  lib.construct_processor(loaded_->storage);
  loaded_->constructed = true;
  sentencepiece::SentencePieceProcessor* p = loaded_->processor();
  std::string why;
  try {
    const ReturnedStatus status([&] { return p->LoadFromSerializedProto(model_bytes); });
    if (status.ok()) return;
    why = status.message();
  } catch (const std::exception& e) {
    // The library throws from its trie builder on some malformed models (an empty piece).
    why = e.what();
  }
  if (why.size() > 200) why.resize(200);
  throw Error(origin + ": not a SentencePiece model (SentencePiece says: " + why + ")").with("file", origin);
}

SentencePieceProcessor::~SentencePieceProcessor() = default;

std::vector<int> SentencePieceProcessor::encode(std::string_view text) const {
  std::vector<int> ids;
  std::string why;
  try {
    const ReturnedStatus status([&] { return loaded_->processor()->Encode(text, &ids); });
    if (status.ok()) return ids;
    why = status.message();
  } catch (const std::exception& e) {
    why = e.what();
  }
  throw Error(ErrorKind::kInternal, origin_ + ": SentencePiece failed to encode: " + why).with("file", origin_);
}

std::string SentencePieceProcessor::decode(const std::vector<int>& ids) const {
  std::string text;
  std::string why;
  try {
    const ReturnedStatus status([&] { return loaded_->processor()->Decode(ids, &text); });
    if (status.ok()) return text;
    why = status.message();
  } catch (const std::exception& e) {
    why = e.what();
  }
  throw Error(ErrorKind::kInternal, origin_ + ": SentencePiece failed to decode: " + why).with("file", origin_);
}

int SentencePieceProcessor::piece_count() const { return loaded_->processor()->GetPieceSize(); }
std::string SentencePieceProcessor::piece(int id) const { return loaded_->processor()->IdToPiece(id); }
bool SentencePieceProcessor::is_control(int id) const { return loaded_->processor()->IsControl(id); }

}  // namespace graphrt::llm
