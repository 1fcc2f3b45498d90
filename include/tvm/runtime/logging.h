// TVM's logging and check macros (LOG, ICHECK*, CHECK*) for code written
// against TVM's C++ API.
//
// LOG(FATAL) and failed checks throw tvm::runtime::InternalError (a
// graphrt::Error, so `catch (const tvm::Error&)` catches both). LOG(INFO),
// LOG(WARNING) and LOG(ERROR) print one line to stderr from the caller's own
// code; libgraphrt itself never prints.
#ifndef TVM_RUNTIME_LOGGING_H_
#define TVM_RUNTIME_LOGGING_H_

#include <ctime>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "graphrt/error.h"

namespace tvm {
namespace runtime {

using Error = ::graphrt::Error;

// What a failed check or LOG(FATAL) throws; the message starts with
// "file:line: ".
class InternalError : public Error {
 public:
  InternalError(const std::string& file, int lineno, const std::string& message)
      : Error(::graphrt::ErrorKind::kInternal, file + ":" + std::to_string(lineno) + ": " + message),
        file_(file),
        lineno_(lineno) {}
  const std::string& file() const { return file_; }
  int lineno() const { return lineno_; }

 private:
  std::string file_;
  int lineno_;
};

namespace detail {

// Collects a message; throws it from its destructor at the end of the
// statement that wrote it (LOG(FATAL) << ... ;).
class LogFatal {
 public:
  LogFatal(const char* file, int lineno) : file_(file), lineno_(lineno) {}
  LogFatal(const LogFatal&) = delete;
  LogFatal& operator=(const LogFatal&) = delete;
  ~LogFatal() noexcept(false) { throw InternalError(file_, lineno_, stream_.str()); }
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int lineno_;
  std::ostringstream stream_;
};

// One "[hh:mm:ss] file:line: level: message" line on stderr.
class LogMessage {
 public:
  LogMessage(const char* file, int lineno, const char* level) {
    std::time_t now = std::time(nullptr);
    char stamp[16] = "";
    std::tm parts{};
    if (localtime_r(&now, &parts)) std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &parts);
    stream_ << "[" << stamp << "] " << file << ":" << lineno << ": " << level << ": ";
  }
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  ~LogMessage() { std::cerr << stream_.str() << std::endl; }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Swallows a stream expression so that `cond ? (void)0 : Voidify() & stream`
// has type void (keeps the macros safe inside if/else).
struct LogVoidify {
  void operator&(std::ostream&) {}
};

// Returns null when `a op b` holds, else "a vs. b" for the message. Mixed
// signedness is the caller's business, as with the built-in operators.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#define TVM_RUNTIME_DEFINE_CHECK_OP(name, op)                                              \
  template <typename A, typename B>                                                        \
  std::unique_ptr<std::string> Check##name(const A& a, const B& b) {                       \
    if (a op b) return nullptr;                                                            \
    std::ostringstream os;                                                                 \
    os << a << " vs. " << b;                                                               \
    return std::make_unique<std::string>(os.str());                                        \
  }
TVM_RUNTIME_DEFINE_CHECK_OP(_EQ, ==)
TVM_RUNTIME_DEFINE_CHECK_OP(_NE, !=)
TVM_RUNTIME_DEFINE_CHECK_OP(_LT, <)
TVM_RUNTIME_DEFINE_CHECK_OP(_LE, <=)
TVM_RUNTIME_DEFINE_CHECK_OP(_GT, >)
TVM_RUNTIME_DEFINE_CHECK_OP(_GE, >=)
#undef TVM_RUNTIME_DEFINE_CHECK_OP
#pragma GCC diagnostic pop

template <typename T>
T CheckNotNull(const char* file, int lineno, const char* text, T&& value) {
  if (value == nullptr) LogFatal(file, lineno).stream() << "Check not null: " << text;
  return std::forward<T>(value);
}

}  // namespace detail
}  // namespace runtime

using runtime::Error;

}  // namespace tvm

#define TVM_RUNTIME_LOG_FATAL ::tvm::runtime::detail::LogFatal(__FILE__, __LINE__).stream()
#define TVM_RUNTIME_LOG_LEVEL(level) ::tvm::runtime::detail::LogMessage(__FILE__, __LINE__, level).stream()
#define TVM_RUNTIME_LOG_DEBUG TVM_RUNTIME_LOG_LEVEL("Debug")
#define TVM_RUNTIME_LOG_INFO TVM_RUNTIME_LOG_LEVEL("Info")
#define TVM_RUNTIME_LOG_WARNING TVM_RUNTIME_LOG_LEVEL("Warning")
#define TVM_RUNTIME_LOG_ERROR TVM_RUNTIME_LOG_LEVEL("Error")

#define LOG(level) TVM_RUNTIME_LOG_##level
#define LOG_IF(level, condition) \
  !(condition) ? (void)0 : ::tvm::runtime::detail::LogVoidify() & LOG(level)
#ifdef NDEBUG
#define DLOG(level) true ? (void)0 : ::tvm::runtime::detail::LogVoidify() & LOG(level)
#else
#define DLOG(level) LOG(level)
#endif

#define ICHECK(x)                                                     \
  (x) ? (void)0                                                       \
      : ::tvm::runtime::detail::LogVoidify() &                        \
            TVM_RUNTIME_LOG_FATAL << "Check failed: (" #x ") is false: "

// The loop body runs at most once: LogFatal throws at the end of it.
#define TVM_RUNTIME_CHECK_OP(name, op, x, y)                                              \
  while (auto tvm_runtime_check_failure = ::tvm::runtime::detail::Check##name((x), (y))) \
  TVM_RUNTIME_LOG_FATAL << "Check failed: " #x " " #op " " #y " (" << *tvm_runtime_check_failure << ") : "

#define ICHECK_EQ(x, y) TVM_RUNTIME_CHECK_OP(_EQ, ==, x, y)
#define ICHECK_NE(x, y) TVM_RUNTIME_CHECK_OP(_NE, !=, x, y)
#define ICHECK_LT(x, y) TVM_RUNTIME_CHECK_OP(_LT, <, x, y)
#define ICHECK_LE(x, y) TVM_RUNTIME_CHECK_OP(_LE, <=, x, y)
#define ICHECK_GT(x, y) TVM_RUNTIME_CHECK_OP(_GT, >, x, y)
#define ICHECK_GE(x, y) TVM_RUNTIME_CHECK_OP(_GE, >=, x, y)
#define ICHECK_NOTNULL(x) ::tvm::runtime::detail::CheckNotNull(__FILE__, __LINE__, #x, (x))

#define CHECK(x) ICHECK(x)
#define CHECK_EQ(x, y) ICHECK_EQ(x, y)
#define CHECK_NE(x, y) ICHECK_NE(x, y)
#define CHECK_LT(x, y) ICHECK_LT(x, y)
#define CHECK_LE(x, y) ICHECK_LE(x, y)
#define CHECK_GT(x, y) ICHECK_GT(x, y)
#define CHECK_GE(x, y) ICHECK_GE(x, y)
#define CHECK_NOTNULL(x) ICHECK_NOTNULL(x)

#endif  // TVM_RUNTIME_LOGGING_H_
