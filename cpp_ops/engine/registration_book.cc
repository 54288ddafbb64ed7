#include "registration_book.h"

#include <algorithm>

#include "message_tags.h"

namespace wagma {
namespace {

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string EntryKey(const StreamSpec& spec) {
  std::string key = spec.name + '\0';
  for (int m : spec.members) key += std::to_string(m) + ",";
  return key;
}

}  // namespace

std::vector<RegistrationBook::Verdict> RegistrationBook::Add(int rank, const StreamSpec& spec) {
  const std::string key = EntryKey(spec);
  Entry& e = entries_[key];
  if (e.seen.empty()) {
    e.first = spec;
    e.first_rank = rank;
    e.since = std::chrono::steady_clock::now();
  }
  if (!Contains(e.seen, rank)) {
    e.seen.push_back(rank);
    if (e.error.empty()) {
      e.error = e.first.Mismatch("rank " + std::to_string(e.first_rank), spec,
                                 "rank " + std::to_string(rank));
    }
  }
  std::vector<Verdict> verdicts;
  // Disjoint process sets may reuse a name; overlapping ones cannot (a rank holds one
  // stream per name), so ranks that disagree on the set are rejected, not left waiting.
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& other = it->second;
    const bool overlap = it->first != key && other.first.name == spec.name &&
                         std::any_of(spec.members.begin(), spec.members.end(),
                                     [&](int m) { return Contains(other.first.members, m); });
    if (!overlap) {
      ++it;
      continue;
    }
    const std::string error = e.first.Mismatch("rank " + std::to_string(e.first_rank),
                                               other.first,
                                               "rank " + std::to_string(other.first_rank));
    if (e.error.empty()) e.error = error;
    verdicts.push_back(Verdict{spec.name, -1, error, other.seen});
    it = entries_.erase(it);
  }
  bool all_in = true;
  for (int m : e.first.members) all_in = all_in && Contains(e.seen, m);
  if (!all_in) return verdicts;  // every member hears the verdict, even a rejection
  Verdict v{spec.name, -1, e.error, e.seen};
  if (v.error.empty()) {
    if (next_id_ >= kMaxStreams) {
      v.error = "too many streams: at most " + std::to_string(kMaxStreams) + " names";
    } else {
      v.stream_id = next_id_++;
    }
  }
  verdicts.push_back(v);
  entries_.erase(key);
  return verdicts;
}

std::vector<RegistrationBook::Pending> RegistrationBook::Waiting() const {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Pending> out;
  for (const auto& kv : entries_) {
    const Entry& e = kv.second;
    out.push_back(Pending{kv.first, e.first.name, e.first.members, e.seen,
                          std::chrono::duration<double>(now - e.since).count()});
  }
  return out;
}

RegistrationBook::Verdict RegistrationBook::Reject(const std::string& key,
                                                   const std::string& error) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return Verdict{};
  Verdict v{it->second.first.name, -1, error, it->second.seen};
  entries_.erase(it);
  return v;
}

}  // namespace wagma
