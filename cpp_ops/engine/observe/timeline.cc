#include "observe/timeline.h"

#include <cerrno>
#include <chrono>
#include <system_error>

namespace wagma {

namespace {

// Large enough that writes are rare next to the events' cost, small enough that a
// crash loses little and a long run does not hold its whole history in memory.
constexpr size_t kFlushBytes = 64 * 1024;

// Written by Close as the last event. Every event line ends with ",\n", so the file
// needs one final element without a comma; this one also tells a reader that the
// rank shut down cleanly (a killed rank's file lacks it).
constexpr const char* kClosedLabel = "trace closed";

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

void AppendEventHead(std::string& out, const char* ph, const char* category,
                     const std::string& name, int pid, int tid) {
  out += "{\"ph\":\"";
  out += ph;
  out += "\",\"cat\":\"";
  out += JsonEscape(category ? category : "");
  out += "\",\"name\":\"";
  out += JsonEscape(name);
  out += "\",\"pid\":";
  out += std::to_string(pid);
  out += ",\"tid\":";
  out += std::to_string(tid);
}

void AppendArgs(std::string& out, const std::string& args_json) {
  if (args_json.empty()) return;
  out += ",\"args\":{";
  out += args_json;
  out += '}';
}

std::string Metadata(const char* name, int pid, int tid, const std::string& args_json) {
  std::string out = "{\"ph\":\"M\",\"name\":\"";
  out += name;
  out += "\",\"pid\":";
  out += std::to_string(pid);
  out += ",\"tid\":";
  out += std::to_string(tid);
  out += ",\"args\":{";
  out += args_json;
  out += '}';
  out += '}';
  return out;
}

}  // namespace

std::string JsonEscape(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string TimelinePath(const std::string& path, int rank) {
  if (path.empty()) return path;
  const std::string rank_text = std::to_string(rank);
  static const std::string kPlaceholder = "{rank}";
  if (path.find(kPlaceholder) != std::string::npos) {
    std::string out;
    size_t from = 0;
    for (size_t at; (at = path.find(kPlaceholder, from)) != std::string::npos;
         from = at + kPlaceholder.size()) {
      out.append(path, from, at - from);
      out += rank_text;
    }
    out.append(path, from, std::string::npos);
    return out;
  }
  // Only a dot inside the file name marks an extension (not one in a directory
  // name), and a leading dot is a hidden file's name rather than its extension.
  const size_t slash = path.find_last_of('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || dot <= name_start) return path + "." + rank_text;
  return path.substr(0, dot) + "." + rank_text + path.substr(dot);
}

int64_t Timeline::NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Timeline::~Timeline() { Close(); }

std::string Timeline::Open(const std::string& path, int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  CloseLocked();
  if (path.empty()) return "";
  const std::string resolved = TimelinePath(path, rank);
  std::FILE* file = std::fopen(resolved.c_str(), "w");
  if (file == nullptr) {
    return "cannot open timeline file '" + resolved + "': " + ErrnoText(errno);
  }
  file_ = file;
  path_ = resolved;
  rank_ = rank;
  buffer_ = "[\n";
  const std::string r = std::to_string(rank);
  Append(Metadata("process_name", rank, kApp, "\"name\":\"rank " + r + "\""));
  Append(Metadata("process_sort_index", rank, kApp, "\"sort_index\":" + r));
  Append(Metadata("thread_name", rank, kApp, "\"name\":\"app\""));
  Append(Metadata("thread_sort_index", rank, kApp, "\"sort_index\":0"));
  Append(Metadata("thread_name", rank, kEngine, "\"name\":\"engine\""));
  Append(Metadata("thread_sort_index", rank, kEngine, "\"sort_index\":1"));
  // Written now so that a write problem shows up here, where it can be reported,
  // rather than silently later.
  FlushLocked();
  if (file_ == nullptr) return "cannot write timeline file '" + resolved + "'";
  enabled_.store(true, std::memory_order_relaxed);
  return "";
}

std::string Timeline::path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return path_;
}

void Timeline::Span(Lane lane, const char* category, const std::string& name,
                    int64_t start_us, int64_t end_us, const std::string& args_json) {
  if (!enabled()) return;
  // The system clock may step backwards (NTP); a negative duration would make viewers
  // drop the event.
  const int64_t dur = end_us > start_us ? end_us - start_us : 0;
  std::string event;
  event.reserve(96 + name.size() + args_json.size());
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;  // closed meanwhile
  AppendEventHead(event, "X", category, name, rank_, lane);
  event += ",\"ts\":";
  event += std::to_string(start_us);
  event += ",\"dur\":";
  event += std::to_string(dur);
  AppendArgs(event, args_json);
  event += '}';
  Append(event);
}

void Timeline::Instant(Lane lane, const char* category, const std::string& name,
                       int64_t ts_us, const std::string& args_json) {
  if (!enabled()) return;
  std::string event;
  event.reserve(96 + name.size() + args_json.size());
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;
  AppendEventHead(event, "i", category, name, rank_, lane);
  event += ",\"s\":\"t\",\"ts\":";
  event += std::to_string(ts_us);
  AppendArgs(event, args_json);
  event += '}';
  Append(event);
}

void Timeline::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  CloseLocked();
}

void Timeline::Append(const std::string& event) {
  buffer_ += event;
  buffer_ += ",\n";
  if (buffer_.size() > kFlushBytes) FlushLocked();
}

void Timeline::FlushLocked() {
  if (file_ == nullptr || buffer_.empty()) return;
  const bool ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size() &&
                  std::fflush(file_) == 0;
  buffer_.clear();
  if (!ok) {
    // Tracing must never take the run down (e.g. a full disk): stop tracing, keep
    // what is on disk, and say so once.
    std::fprintf(stderr, "wagma: writing timeline '%s' failed: %s; tracing stopped\n",
                 path_.c_str(), ErrnoText(errno).c_str());
    enabled_.store(false, std::memory_order_relaxed);
    std::fclose(file_);
    file_ = nullptr;
  }
}

void Timeline::CloseLocked() {
  enabled_.store(false, std::memory_order_relaxed);
  if (file_ != nullptr) {
    buffer_ += Metadata("process_labels", rank_, kApp,
                        std::string("\"labels\":\"") + kClosedLabel + "\"");
    buffer_ += "\n]\n";
    FlushLocked();
    if (file_ != nullptr) std::fclose(file_);
    file_ = nullptr;
  }
  buffer_.clear();
  buffer_.shrink_to_fit();
  path_.clear();
}

}  // namespace wagma
