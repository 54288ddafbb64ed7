#include "registration_book.h"

#include "message_tags.h"

namespace wagma {

RegistrationBook::Verdict RegistrationBook::Add(int rank, const StreamSpec& spec) {
  Entry& e = entries_[spec.name];
  if (e.count == 0) {
    e.first = spec;
    e.first_rank = rank;
    e.seen.assign(num_ranks_, false);
  }
  if (!e.seen[rank]) {
    e.seen[rank] = true;
    ++e.count;
    if (e.error.empty()) {
      e.error = e.first.Mismatch("rank " + std::to_string(e.first_rank), spec,
                                 "rank " + std::to_string(rank));
    }
  }
  Verdict v;
  v.name = spec.name;
  if (e.count < num_ranks_) return v;
  v.complete = true;
  v.error = e.error;
  if (v.error.empty()) {
    if (next_id_ >= kMaxStreams) {
      v.error = "too many streams: at most " + std::to_string(kMaxStreams) + " names";
    } else {
      v.stream_id = next_id_++;
    }
  }
  entries_.erase(spec.name);
  return v;
}

}  // namespace wagma
