// RegistrationBook: the root's tally of round-0 registrations, one entry per stream
// name, until every member has registered. Then the stream is either assigned the
// next id or rejected with the first mismatch, which the root tells every member.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "stream_spec.h"

namespace wagma {

class RegistrationBook {
 public:
  explicit RegistrationBook(int num_ranks) : num_ranks_(num_ranks) {}

  struct Verdict {
    bool complete = false;
    std::string name;
    int stream_id = -1;  // when accepted
    std::string error;   // when rejected
  };
  // Records `rank`'s spec; the verdict is complete once all ranks have registered.
  Verdict Add(int rank, const StreamSpec& spec);

 private:
  struct Entry {
    StreamSpec first;
    int first_rank = -1;
    std::vector<bool> seen;
    int count = 0;
    std::string error;
  };
  int num_ranks_;
  int next_id_ = 0;
  std::map<std::string, Entry> entries_;
};

}  // namespace wagma
