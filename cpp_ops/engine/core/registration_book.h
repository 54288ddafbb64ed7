// RegistrationBook: the registrar's tally of round-0 registrations, one entry per
// stream name, until every member has registered. Then the stream is either assigned
// the next id or rejected with the first mismatch, which the registrar tells every
// member. One registrar (world rank 0) serves all process sets, so stream ids, and
// with them data tags, are unique across overlapping sets.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/stream_spec.h"

namespace wagma {

class RegistrationBook {
 public:
  RegistrationBook() = default;

  struct Verdict {
    std::string name;
    int stream_id = -1;  // when accepted
    std::string error;   // when rejected
    std::vector<int> ranks;  // who registered: who must hear the verdict
  };
  // Records `rank`'s spec (whose members are resolved). Returns the verdicts that are
  // now due: the stream's once all its members have registered, and at once the
  // rejection of registrations under the same name for an overlapping process set
  // (pending, accepted earlier, or already in conflict).
  std::vector<Verdict> Add(int rank, const StreamSpec& spec);

  // Streams still waiting for members to register (for stall reports and for ranks
  // that joined or left before the stream's round 0).
  struct Pending {
    std::string key;
    std::string name;
    std::vector<int> members;
    std::vector<int> seen;
    double waited_s = 0;
  };
  std::vector<Pending> Waiting() const;
  // Gives up on a pending stream: the rejection every registered rank must hear.
  Verdict Reject(const std::string& key, const std::string& error);

 private:
  struct Entry {
    StreamSpec first;
    int first_rank = -1;
    std::vector<int> seen;  // ranks
    std::string error;
    std::chrono::steady_clock::time_point since;
  };
  // Names whose ranks disagreed on the process set: the first mismatch, and the sets
  // seen under the name since (a registration overlapping one of them is rejected).
  struct Conflict {
    std::string error;
    std::vector<std::vector<int>> sets;
  };
  int next_id_ = 0;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::vector<Entry>> accepted_;  // by name: streams given an id
  std::map<std::string, Conflict> conflicts_;
};

}  // namespace wagma
