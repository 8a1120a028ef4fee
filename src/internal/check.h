// src/internal/check.h: always-on and debug-only invariant checks.
//
// `HIVED_CHECK(cond) << "message";` aborts with the file, line, condition and message when
// `cond` is false. `HIVED_DCHECK` does the same in debug builds only. Use them for
// invariants broken by a bug in hived, never for user input (that gets an absl::Status).
//
// Thread safety: safe from any thread.
#ifndef HIVED_SRC_INTERNAL_CHECK_H_
#define HIVED_SRC_INTERNAL_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace hived::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": check failed: " << condition << " ";
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure() {
    std::fprintf(stderr, "%s\n", stream_.str().c_str());
    std::fflush(stderr);
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `HIVED_CHECK(c) << x` be an expression of type void in both branches.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace hived::internal

#define HIVED_CHECK(condition)                 \
  (condition) ? (void)0                        \
              : ::hived::internal::Voidify() & \
                    ::hived::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#ifdef NDEBUG
#define HIVED_DCHECK(condition) \
  while (false) HIVED_CHECK(condition)
#else
#define HIVED_DCHECK(condition) HIVED_CHECK(condition)
#endif

#endif  // HIVED_SRC_INTERNAL_CHECK_H_
