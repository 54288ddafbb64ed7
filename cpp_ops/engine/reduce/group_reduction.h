// GroupReduction: computes the mean of one contribution per group member, over the
// transport's tagged point-to-point data messages, driven by the background loop.
//
// Invariants shared by every algorithm:
//  * non-blocking: Start() posts requests, Progress() only tests them;
//  * every member ends with the same bytes in result: each element's sum is formed in
//    member order by exactly one rank (or identically by all), then divided by |G|;
//  * all messages of one reduction use one tag; per pair of ranks the receiver posts
//    its receives in the order the sender sends, so the transport's per-tag order
//    (MPI's non-overtaking rule) matches them without further tags;
//  * the contribution must stay valid and unchanged until Progress() returns true;
//  * the mean is written to `result`, which may alias the contribution (in-place
//    calls): nothing is written there before every send has completed;
//  * each step posts its receives before its sends (PostReceive, then PostSend): a
//    receive is ready before the matching message can arrive;
//  * a message to or from a peer on another node may travel as several messages
//    (MessageCut), posted alike on both sides;
//  * with `share_inclusion`, every member also sends every other member 8 bytes
//    before its first data message: its app's steps and whether its value is older
//    than max_staleness rounds. Such a value is left out when its app is also more
//    than max_staleness steps behind the most advanced member (the rule itself is in
//    round_policy.h, DecideInclusion). Every member decodes the same messages, so
//    every member keeps the same set (never empty: the most advanced member stays)
//    and divides by the same count. Left-out members still send their data:
//    receivers post data receives before the messages arrive, and a left-out
//    contribution is rare (docs/design.md, section 2.8).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "reduce/buffer.h"
#include "reduce/data_type.h"
#include "reduce/message_cut.h"
#include "transport/transport.h"

namespace wagma {

struct ReductionArgs {
  Transport* transport = nullptr;
  int tag = 0;
  std::vector<int> members;  // ranks, sorted
  int my_index = 0;          // position of this rank in `members`
  DataType dtype = DataType::kFloat32;
  size_t count = 0;          // elements
  const void* contribution = nullptr;
  void* result = nullptr;    // count elements; receives the mean
  BufferPool* pool = nullptr;
  const MessageCut* cut = nullptr;  // how messages are posted; nullptr: never cut
  // Exchange what decides inclusion (wait-avoiding global rounds: a member whose
  // value is too old is left out of the mean but still receives it). Only read with
  // share_inclusion: this member's app steps at its contribution, and whether the
  // value is older than max_staleness rounds. Such a value is left out when its app
  // is also more than max_staleness steps behind the round's most advanced member.
  bool share_inclusion = false;
  int64_t steps = 0;
  bool stale_in_rounds = false;
  int64_t max_staleness = 0;
};

class GroupReduction {
 public:
  explicit GroupReduction(ReductionArgs args)
      : args_(std::move(args)), requests_(args_.transport->NewRequestList()) {}
  virtual ~GroupReduction() = default;
  virtual void Start() = 0;
  // Tests outstanding requests and advances; true once the result is final.
  virtual bool Progress() = 0;
  // Payload bytes this member sends over the whole reduction.
  virtual size_t BytesSent() const = 0;
  // Gives up (a member is gone): cancels pending receives and waits until none can
  // still write to this reduction's buffers or the result. Sends may stay pending.
  void Abandon() { requests_->CancelReceives(); }
  // The current step's messages still pending: what a held round waits on.
  std::vector<PendingMessage> PendingMessages() { return requests_->Pending(); }
  // Messages this member sent as several fragments so far (MessageCut).
  int64_t messages_cut() const { return messages_cut_; }
  // After Progress() returned true: how many contributions the mean is over, and
  // whether this member's was one of them.
  int included_count() const { return included_count_; }
  bool self_included() const { return self_included_; }
  // How many steps this member's app is behind the round's most advanced member's
  // (0 without share_inclusion).
  int64_t self_steps_behind() const { return self_steps_behind_; }

 protected:
  int group_size() const { return static_cast<int>(args_.members.size()); }
  size_t elem_size() const { return ElementSize(args_.dtype); }
  // One step's messages: clear the list, then every receive before any send.
  void NewStep() { requests_->Clear(); }
  void PostReceive(void* buf, size_t bytes, int member_index);
  void PostSend(const void* buf, size_t bytes, int member_index);
  bool StepDone() { return requests_->Done(); }
  // The inclusion messages of the first step (no-ops without share_inclusion): call
  // PostInclusionReceives before the step's data receives and PostInclusionSends
  // before its data sends, so that per pair the flag precedes the data.
  void PostInclusionReceives();
  void PostInclusionSends();
  // Keeps the sources (one per member, by member index) whose contribution is
  // included, in member order; records and returns their count.
  int KeepIncluded(std::vector<const void*>* srcs);

  ReductionArgs args_;

 private:
  const MessageCut& cut() const;
  std::unique_ptr<RequestList> requests_;  // this step's: receives first
  int64_t messages_cut_ = 0;
  // By member index, valid once the first step is done: steps, negated minus one for a
  // value older than max_staleness rounds (one 8-byte message per pair).
  std::vector<int64_t> inclusion_;
  int included_count_ = 0;
  bool self_included_ = true;
  int64_t self_steps_behind_ = 0;
};

// Where the algorithms change over (HOROVOD_WAGMA_SMALL_BYTES and
// HOROVOD_WAGMA_PAIR_SCATTER_BYTES).
struct ReductionThresholds {
  // Up to this size, one exchange step beats two: latency dominates.
  size_t small_bytes = 64 * 1024;
  // A pair sends the same bytes either way, but ScatterAllgather makes each member
  // reduce half the tensor and buffer half of it; that pays off only once the
  // extra step is cheap next to the copying.
  size_t pair_scatter_bytes = 8 * 1024 * 1024;
};

}  // namespace wagma
