// Timeline: a Chrome trace ("Trace Event Format", JSON array form) of one rank's
// activity, for chrome://tracing or ui.perfetto.dev. Each rank writes its own file
// with pid = rank and timestamps from the shared system clock, so the files of all
// ranks merge by concatenating their events (python -m horovod_wagma.timeline does that, and
// draws them). The file stays a loadable trace even when the process dies before
// Close: viewers accept an array without its closing bracket.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace wagma {

class Timeline {
 public:
  Timeline() = default;
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  ~Timeline();  // calls Close

  // Microseconds since the Unix epoch (system_clock): one clock for all ranks on a host,
  // so per-rank files merge by concatenation.
  static int64_t NowUs();

  // Opens the trace for `rank`. `path` may contain "{rank}", replaced by the rank; if it
  // does not, ".<rank>" is inserted before the extension (trace.json -> trace.3.json),
  // so ranks never share a file. Empty path: stays disabled. Returns an error text
  // (empty on success), e.g. when the file cannot be opened. Opening again closes the
  // previous trace first.
  std::string Open(const std::string& path, int rank);
  // Lock-free, so callers can skip building names and arguments when tracing is off.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // The file actually written (after the rank substitution); empty when disabled.
  std::string path() const;

  // Lanes (Chrome "tid"): kApp = what the application thread sees, kEngine = the
  // background thread's work.
  enum Lane : int { kApp = 0, kEngine = 1 };

  // A complete ("ph":"X") event from start_us to end_us. `args_json` is either empty or
  // the body of a JSON object WITHOUT braces, e.g. "\"round\":3,\"kind\":\"group\"".
  void Span(Lane lane, const char* category, const std::string& name, int64_t start_us,
            int64_t end_us, const std::string& args_json = "");
  // An instant ("ph":"i", "s":"t") event at ts_us.
  void Instant(Lane lane, const char* category, const std::string& name, int64_t ts_us,
               const std::string& args_json = "");

  // Writes the closing bracket and closes the file. Idempotent. After Close, calls are
  // no-ops.
  void Close();

 private:
  // Both require mu_ held.
  void Append(const std::string& event);
  void FlushLocked();
  void CloseLocked();

  mutable std::mutex mu_;
  std::atomic<bool> enabled_{false};
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string buffer_;
  int rank_ = 0;
};

// The file name used for `rank` (see Timeline::Open): "{rank}" substituted, or else
// ".<rank>" inserted before the extension of the last path component.
std::string TimelinePath(const std::string& path, int rank);

// Escapes a string for inclusion inside JSON double quotes (quotes, backslash, control
// chars as \u00XX; non-ASCII UTF-8 bytes pass through unchanged).
std::string JsonEscape(const std::string& s);

}  // namespace wagma
