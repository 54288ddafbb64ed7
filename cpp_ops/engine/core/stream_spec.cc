#include "core/stream_spec.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "transport/message_tags.h"

namespace wagma {
namespace {

template <class T>
void Put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <class T>
T Get(const std::string& in, size_t& pos) {
  if (pos + sizeof(T) > in.size()) throw std::runtime_error("truncated stream spec");
  T v;
  std::memcpy(&v, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}

const char* AveragingName(Averaging a) {
  const AveragingRule* rule = FindAveragingRule(a);
  return rule != nullptr ? rule->name : "unknown";
}

const char* GlobalRoundsName(GlobalRounds g) {
  return g == GlobalRounds::kWaitAvoiding ? "wait_avoiding" : "blocking";
}

}  // namespace

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

size_t StreamSpec::num_elements() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

bool StreamSpec::operator==(const StreamSpec& o) const {
  return name == o.name && dtype == o.dtype && shape == o.shape &&
         config.group_size == o.config.group_size &&
         config.sync_period == o.config.sync_period &&
         config.averaging == o.config.averaging &&
         config.wait_avoiding == o.config.wait_avoiding &&
         config.global_rounds == o.config.global_rounds &&
         config.max_staleness == o.config.max_staleness && members == o.members;
}

std::string StreamSpec::Mismatch(const std::string& mine, const StreamSpec& o,
                                 const std::string& theirs) const {
  if (*this == o) return "";  // the per-call path: no formatting
  std::ostringstream s;
  auto head = [&](const char* what) {
    s << what << " mismatch for stream '" << NameForMessage(name) << "': " << mine << " has " << what << " ";
  };
  if (shape != o.shape) {
    head("shape");
    s << ShapeString(shape) << ", " << theirs << " has shape " << ShapeString(o.shape);
  } else if (dtype != o.dtype) {
    head("dtype");
    s << DataTypeName(dtype) << ", " << theirs << " has dtype " << DataTypeName(o.dtype);
  } else if (config.group_size != o.config.group_size) {
    head("group_size");
    s << config.group_size << ", " << theirs << " has group_size "
      << o.config.group_size;
  } else if (config.sync_period != o.config.sync_period) {
    head("sync_period");
    s << config.sync_period << ", " << theirs << " has sync_period "
      << o.config.sync_period;
  } else if (config.averaging != o.config.averaging) {
    head("averaging");
    s << AveragingName(config.averaging) << ", " << theirs << " has averaging "
      << AveragingName(o.config.averaging);
  } else if (config.wait_avoiding != o.config.wait_avoiding) {
    head("wait_avoiding");
    // Spelled as the Python argument is.
    s << (config.wait_avoiding ? "True" : "False") << ", " << theirs << " has wait_avoiding "
      << (o.config.wait_avoiding ? "True" : "False");
  } else if (config.global_rounds != o.config.global_rounds) {
    head("global_rounds");
    s << GlobalRoundsName(config.global_rounds) << ", " << theirs << " has global_rounds "
      << GlobalRoundsName(o.config.global_rounds);
  } else if (config.max_staleness != o.config.max_staleness) {
    head("max_staleness");
    s << config.max_staleness << ", " << theirs << " has max_staleness "
      << o.config.max_staleness;
  } else if (members != o.members) {
    head("process set");
    std::vector<int64_t> a(members.begin(), members.end()), b(o.members.begin(), o.members.end());
    s << ShapeString(a) << ", " << theirs << " has process set " << ShapeString(b);
  }
  return s.str();
}

std::string StreamSpec::Serialize() const {
  std::string out;
  Put<uint32_t>(out, static_cast<uint32_t>(name.size()));
  out += name;
  Put<int32_t>(out, static_cast<int32_t>(dtype));
  Put<uint32_t>(out, static_cast<uint32_t>(shape.size()));
  for (int64_t d : shape) Put<int64_t>(out, d);
  Put<int32_t>(out, config.group_size);
  Put<int32_t>(out, config.sync_period);
  Put<int32_t>(out, static_cast<int32_t>(config.averaging));
  Put<int32_t>(out, config.wait_avoiding ? 1 : 0);
  Put<int32_t>(out, static_cast<int32_t>(config.global_rounds));
  Put<int32_t>(out, config.max_staleness);
  Put<uint32_t>(out, static_cast<uint32_t>(members.size()));
  for (int m : members) Put<int32_t>(out, m);
  return out;
}

StreamSpec StreamSpec::Parse(const std::string& in) {
  StreamSpec s;
  size_t pos = 0;
  const uint32_t name_len = Get<uint32_t>(in, pos);
  if (pos + name_len > in.size()) throw std::runtime_error("truncated stream spec");
  s.name = in.substr(pos, name_len);
  pos += name_len;
  s.dtype = static_cast<DataType>(Get<int32_t>(in, pos));
  const uint32_t ndim = Get<uint32_t>(in, pos);
  for (uint32_t i = 0; i < ndim; ++i) s.shape.push_back(Get<int64_t>(in, pos));
  s.config.group_size = Get<int32_t>(in, pos);
  s.config.sync_period = Get<int32_t>(in, pos);
  s.config.averaging = static_cast<Averaging>(Get<int32_t>(in, pos));
  s.config.wait_avoiding = Get<int32_t>(in, pos) != 0;
  s.config.global_rounds = static_cast<GlobalRounds>(Get<int32_t>(in, pos));
  s.config.max_staleness = Get<int32_t>(in, pos);
  const uint32_t num_members = Get<uint32_t>(in, pos);
  for (uint32_t i = 0; i < num_members; ++i) s.members.push_back(Get<int32_t>(in, pos));
  return s;
}

std::string ValidateConfig(const StreamConfig& c) {
  std::ostringstream s;
  if (c.group_size < 2) {
    s << "group_size must be an integer >= 2, got " << c.group_size;
  } else if (c.sync_period < 1 || c.sync_period > kMaxSyncPeriod) {
    s << "sync_period must be an integer in [1, " << kMaxSyncPeriod << "], got "
      << c.sync_period;
  } else if (FindAveragingRule(c.averaging) == nullptr) {
    s << "averaging must be " << AveragingRuleNames() << ", got code "
      << static_cast<int>(c.averaging);
  } else if (c.global_rounds != GlobalRounds::kBlocking &&
             c.global_rounds != GlobalRounds::kWaitAvoiding) {
    s << "global_rounds must be 'blocking' or 'wait_avoiding', got code "
      << static_cast<int>(c.global_rounds);
  } else if (c.wait_avoiding_global() && !c.wait_avoiding) {
    s << "global_rounds='wait_avoiding' needs wait_avoiding=True (group rounds that "
         "wait for every member would wait for the slow rank anyway)";
  } else if (c.wait_avoiding_global() &&
             (c.max_staleness < 0 || c.max_staleness > kMaxSyncPeriod)) {
    s << "max_staleness must be an integer in [0, " << kMaxSyncPeriod << "], got "
      << c.max_staleness;
  }
  return s.str();
}

std::string Utf8Prefix(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t n = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the cut character.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

std::string NameForMessage(const std::string& name) {
  constexpr size_t kShown = 96;
  if (name.size() <= kShown + 32) return name;
  return Utf8Prefix(name, kShown) + "...(" + std::to_string(name.size()) + " bytes)";
}

uint64_t StreamSpec::Fingerprint() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : Serialize()) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace wagma
