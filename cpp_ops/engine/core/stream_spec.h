// StreamSpec: what every rank must agree on for one named stream, checked at round 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rounds/averaging_rule.h"
#include "reduce/data_type.h"

namespace wagma {

// Global rounds that block (the paper), or that activate and join like group rounds
// (docs/design.md, section 2.8, "Wait-avoiding global rounds").
enum class GlobalRounds : int32_t { kBlocking = 0, kWaitAvoiding = 1 };

struct StreamConfig {
  int32_t group_size = 2;     // S
  int32_t sync_period = 10;   // tau
  Averaging averaging = Averaging::kFresh;
  bool wait_avoiding = true;
  GlobalRounds global_rounds = GlobalRounds::kBlocking;
  // Wait-avoiding global rounds only (0 otherwise): a passive join never contributes a
  // value more than this many rounds older than the round it joins.
  int32_t max_staleness = 0;

  bool wait_avoiding_global() const { return global_rounds == GlobalRounds::kWaitAvoiding; }
};

struct StreamSpec {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  StreamConfig config;
  // World ranks that run this stream (a Horovod process set), sorted; all ranks when
  // resolved by the engine from an empty list.
  std::vector<int> members;

  bool operator==(const StreamSpec& other) const;
  size_t num_elements() const;
  size_t num_bytes() const { return num_elements() * ElementSize(dtype); }

  // Empty when the two specs agree; otherwise a sentence naming the first difference,
  // e.g. "shape mismatch for stream 'w': rank 0 has shape [4, 3], rank 2 has shape [5]"
  // (mine = "rank 0", theirs = "rank 2").
  std::string Mismatch(const std::string& mine, const StreamSpec& other,
                       const std::string& theirs) const;

  // A hash of everything above, carried by activations to cross-check the stream.
  uint64_t Fingerprint() const;
  std::string Serialize() const;
  static StreamSpec Parse(const std::string& bytes);
};

// Empty when the configuration is valid for `num_ranks`; otherwise the ValueError text.
std::string ValidateConfig(const StreamConfig& config);

std::string ShapeString(const std::vector<int64_t>& shape);

// A stream name as quoted in messages: long names are shortened (at a UTF-8
// character boundary) so that what differs still fits in an error text.
std::string NameForMessage(const std::string& name);

// The longest prefix of `text` of at most `max_bytes` that does not split a UTF-8
// character.
std::string Utf8Prefix(const std::string& text, size_t max_bytes);

}  // namespace wagma
