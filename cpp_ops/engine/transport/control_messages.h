// Control messages: the engine's small messages to other engines, their kinds and
// payloads, encoded and decoded here and nowhere else. Only Engine sends them.
//
// Kinds (the transport's control tag is the kind):
//  kRegister  member -> registrar  round 0 of a stream: the sender's StreamSpec
//  kAssign    registrar -> members the stream's id (round 0 may proceed): NameAndText
//  kReject    registrar -> members the specs disagree: NameAndText with the error
//  kActivate  member -> member round r of stream id has started: join it now; the
//                              payload is the stream's fingerprint (a cross-check)
//  kGoodbye   any -> all       the sender's engine shut down without join(): the
//                              last round of each stream it joined (LastRounds)
//  kJoined    any -> all       the sender called join(): activate it for every round;
//                              round carries the join's generation (JoinCoordinator);
//                              the last round its app entered per stream (LastRounds)
//  kAllJoined registrar -> all every rank has joined; stream_id carries the last one
//                              (or -(r + 1) when rank r left instead); LastRounds
//  kStreamError member -> members  a rank failed the stream mid-run (e.g. a call
//                              that does not match round 0): the error text
//  kWaiting   member -> inspector  the sender's app has waited long in round r
//  kStallNotice inspector -> waiters  which ranks round r is missing: the text
//  kProbe     waiter -> any    is your engine alive? (sent only during long stalls)
//  kProbeAnswer any -> waiter  yes
//  kVerdict   any -> live peers (elastic) the sender gave its verdict on a membership
//                              change and its engine stops for Horovod's reset: the
//                              verdict's text. Silent from then on, it is not lost.
//  kHoldQuery waiter -> members  the sender's app has waited WAGMA_HOLD_REPORT_S in
//                              round r: print this engine's view of it (hold_report.h)
// Every message is a fixed header (stream id, round) followed by its payload.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "transport/transport.h"

namespace wagma {

enum class ControlKind : int {
  kRegister = 1,
  kAssign = 2,
  kReject = 3,
  kActivate = 4,
  kGoodbye = 5,
  kJoined = 6,
  kAllJoined = 7,
  kStreamError = 8,
  kWaiting = 9,
  kStallNotice = 10,
  kProbe = 11,
  kProbeAnswer = 12,
  kVerdict = 13,
  kHoldQuery = 14,
};

struct ControlMessage {
  ControlKind kind = ControlKind::kActivate;
  int source = -1;
  int32_t stream_id = -1;
  int64_t round = 0;
  std::string payload;
};

// Frames messages onto the transport's control plane.
class ControlChannel {
 public:
  explicit ControlChannel(Transport& transport) : transport_(transport) {}
  void Send(int dest, const ControlMessage& msg);
  // Receives one pending message, if any.
  bool Poll(ControlMessage* out);
  // Tests outstanding sends; true when none is left.
  bool FlushSends() { return transport_.FlushControl(); }

 private:
  Transport& transport_;
};

// Payloads.

// kAssign, kReject: a stream name and a text (the error; empty for kAssign).
std::string PackNameAndText(const std::string& name, const std::string& text);
void UnpackNameAndText(const std::string& bytes, std::string* name, std::string* text);

// kActivate: the stream's fingerprint. 0 when the payload is malformed (no stream
// has that fingerprint in practice, so the receiver reports a mismatch).
std::string PackFingerprint(uint64_t fingerprint);
uint64_t UnpackFingerprint(const std::string& bytes);

// kGoodbye, kJoined, kAllJoined: pairs (stream id, round).
std::string PackLastRounds(const std::map<int, int64_t>& last_round);
std::map<int, int64_t> UnpackLastRounds(const std::string& bytes);

}  // namespace wagma
