#include "core/registration_book.h"

#include <algorithm>

#include "transport/message_tags.h"

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

bool Overlap(const std::vector<int>& a, const std::vector<int>& b) {
  return std::any_of(a.begin(), a.end(), [&](int m) { return Contains(b, m); });
}

}  // namespace

std::vector<RegistrationBook::Verdict> RegistrationBook::Add(int rank, const StreamSpec& spec) {
  // Disjoint process sets may reuse a name; overlapping ones cannot (a rank holds one
  // stream per name). Ranks that disagree on the set are rejected at once, whichever
  // registration comes first, never left waiting for members that registered the
  // other set: a registration that overlaps a set already in conflict under this name,
  // or one already accepted (whose ranks keep their stream: it is consistent among
  // them), is rejected on arrival; one that overlaps a pending set rejects both.
  auto conflict = conflicts_.find(spec.name);
  if (conflict != conflicts_.end() &&
      std::any_of(conflict->second.sets.begin(), conflict->second.sets.end(),
                  [&](const std::vector<int>& set) { return Overlap(set, spec.members); })) {
    std::vector<std::vector<int>>& sets = conflict->second.sets;
    if (std::find(sets.begin(), sets.end(), spec.members) == sets.end())
      sets.push_back(spec.members);
    return {Verdict{spec.name, -1, conflict->second.error, {rank}}};
  }
  for (const Entry& done : accepted_[spec.name]) {
    if (done.first.members == spec.members || !Overlap(done.first.members, spec.members))
      continue;
    const std::string error = done.first.Mismatch("rank " + std::to_string(done.first_rank),
                                                  spec, "rank " + std::to_string(rank));
    conflicts_[spec.name] = Conflict{error, {done.first.members, spec.members}};
    return {Verdict{spec.name, -1, error, {rank}}};
  }
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
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& other = it->second;
    if (it->first == key || other.first.name != spec.name ||
        !Overlap(other.first.members, spec.members)) {
      ++it;
      continue;
    }
    const std::string error = e.first.Mismatch("rank " + std::to_string(e.first_rank),
                                               other.first,
                                               "rank " + std::to_string(other.first_rank));
    Conflict& c = conflicts_[spec.name];
    if (c.error.empty()) c = Conflict{error, {e.first.members}};
    c.sets.push_back(other.first.members);
    verdicts.push_back(Verdict{spec.name, -1, error, other.seen});
    it = entries_.erase(it);
  }
  if (!verdicts.empty()) {  // this set is in the conflict too
    verdicts.push_back(Verdict{spec.name, -1, conflicts_[spec.name].error, e.seen});
    entries_.erase(key);
    return verdicts;
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
      accepted_[spec.name].push_back(e);
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
