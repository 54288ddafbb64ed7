// CHECK and CHECK_EQ for the engine's unit tests: each failed check prints where it
// is and counts; main() reports the count and fails. Header-only, one test binary
// per file, so the counters are per binary.
#pragma once
#include <cstdio>
#include <string>

namespace {

int failures = 0;
int checks = 0;

// Whether a message holds a phrase (reports and errors are checked by their words).
inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

#define CHECK(cond)                                                                  \
  do {                                                                               \
    ++checks;                                                                        \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                    \
    }                                                                                \
  } while (0)

#define CHECK_EQ(a, b)                                                                 \
  do {                                                                                 \
    ++checks;                                                                          \
    const long long va = static_cast<long long>(a), vb = static_cast<long long>(b);    \
    if (va != vb) {                                                                    \
      std::fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__, \
                   __LINE__, #a, va, #b, vb);                                          \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)

// main()'s exit status: prints how many checks failed, or that all passed.
int Report(const char* test) {
  if (failures) {
    std::fprintf(stderr, "%s: %d of %d checks failed\n", test, failures, checks);
    return 1;
  }
  std::printf("%s: all %d checks passed\n", test, checks);
  return 0;
}

}  // namespace
