// MakeGroupReduction: which algorithm a round of a given size runs (docs/api.md,
// HOROVOD_WAGMA_SMALL_BYTES and HOROVOD_WAGMA_PAIR_SCATTER_BYTES). Up to small_bytes
// (65536) a group exchanges everything in one step; above it, reduce-scatter then
// allgather (two steps, each member sending only chunks); groups of two switch at
// pair_scatter_bytes (8 MiB) instead. The reductions run for real, every member in
// this process over the loopback transport (loopback_transport.h), which records each
// step's sends, so the test sees the steps and message sizes the peers would, and
// checks the mean.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "reduce/buffer.h"
#include "check.h"
#include "loopback_transport.h"
#include "reduce/direct_exchange_reduction.h"
#include "core/engine_settings.h"
#include "reduce/group_reduction.h"
#include "reduce/reduction_factory.h"
#include "reduce/scatter_allgather_reduction.h"

using namespace wagma;

namespace {

enum class Algorithm { kDirect, kScatterAllgather };

// Runs one round of `count` float32 over a group of `g` members with `thresholds`;
// checks every member's mean and that all members took the same algorithm; returns it.
// `steps`: the message steps the round took (on member 0).
Algorithm Run(int g, size_t count, const ReductionThresholds& thresholds, int* steps) {
  loopback::Network net(g);
  BufferPool pool(0);
  std::vector<std::unique_ptr<loopback::LoopbackTransport>> transports;
  std::vector<std::vector<float>> inputs(g), results(g);
  std::vector<std::unique_ptr<GroupReduction>> reductions;
  std::vector<int> members(g);
  for (int j = 0; j < g; ++j) members[j] = j;
  for (int j = 0; j < g; ++j) {
    transports.push_back(std::make_unique<loopback::LoopbackTransport>(&net, j));
    // Member j contributes 2 * g * (j + 1) + i % 7: the mean, g * (g + 1) + i % 7, is
    // exact in float32.
    inputs[j].resize(count);
    for (size_t i = 0; i < count; ++i) inputs[j][i] = float(2 * g * (j + 1) + int(i % 7));
    results[j].assign(count, -1.0f);
    ReductionArgs args;
    args.transport = transports[j].get();
    args.tag = 5;
    args.members = members;
    args.my_index = j;
    args.dtype = DataType::kFloat32;
    args.count = count;
    args.contribution = inputs[j].data();
    args.result = results[j].data();
    args.pool = &pool;
    reductions.push_back(MakeGroupReduction(std::move(args), thresholds));
  }
  for (auto& r : reductions) r->Start();
  std::vector<bool> done(g, false);
  for (int pass = 0; pass < 100; ++pass) {
    bool all = true;
    for (int j = 0; j < g; ++j) {
      if (!done[j]) done[j] = reductions[j]->Progress();
      all = all && done[j];
    }
    if (all) break;
  }
  bool exact = true;
  for (int j = 0; j < g; ++j) {
    CHECK(done[j]);
    for (size_t i = 0; i < count && exact; ++i)
      exact = results[j][i] == float(g * (g + 1) + int(i % 7));
  }
  CHECK(exact);
  CHECK_EQ(net.size_mismatches(), 0);  // every message the size its receive expects
  const bool direct = dynamic_cast<DirectExchangeReduction*>(reductions[0].get()) != nullptr;
  for (int j = 1; j < g; ++j)
    CHECK((dynamic_cast<DirectExchangeReduction*>(reductions[j].get()) != nullptr) == direct);
  // Steps that sent something (a group of one sends nothing, in its one step).
  int sending = 0;
  for (const auto& s : net.trace(0).steps) sending += s.empty() ? 0 : 1;
  *steps = sending;
  // What each step sent to each peer: the whole tensor in a direct exchange; a chunk
  // of about count / g elements in each step of reduce-scatter + allgather.
  const size_t bytes = count * sizeof(float);
  for (const auto& s : net.trace(0).steps) {
    for (size_t sent : s) {
      if (direct) {
        CHECK_EQ(sent, bytes);
      } else {
        CHECK(sent <= (count + g - 1) / g * sizeof(float));
      }
    }
  }
  // stats()'s bytes_sent counts a round's reduction payload: each member's
  // BytesSent() is what it put on the wire, every step and every peer.
  for (int j = 0; j < g; ++j) {
    size_t wire = 0;
    for (const auto& step : net.trace(j).steps)
      for (size_t sent : step) wire += sent;
    CHECK_EQ(static_cast<size_t>(reductions[j]->BytesSent()), wire);
  }
  return direct ? Algorithm::kDirect : Algorithm::kScatterAllgather;
}

bool Direct(int g, size_t bytes, const ReductionThresholds& t) {
  int steps = 0;
  const Algorithm a = Run(g, bytes / sizeof(float), t, &steps);
  CHECK_EQ(steps, g == 1 ? 0 : (a == Algorithm::kDirect ? 1 : 2));
  return a == Algorithm::kDirect;
}

// The defaults: 65536 bytes for groups of three and more, 8 MiB for pairs.
void TestDefaultThresholds() {
  const ReductionThresholds t;  // as EngineSettings::FromEnv with nothing set
  for (int g : {3, 4, 8}) {
    CHECK(Direct(g, 4, t));
    CHECK(Direct(g, 65536, t));           // up to small_bytes: one step
    CHECK(!Direct(g, 65536 + 4, t));      // above it: reduce-scatter + allgather
    CHECK(!Direct(g, 1 << 20, t));
  }
  // Pairs: one step well past small_bytes, up to pair_scatter_bytes.
  CHECK(Direct(2, 65536 + 4, t));
  CHECK(Direct(2, 1 << 20, t));
  CHECK(Direct(2, 8 << 20, t));
  CHECK(!Direct(2, (8 << 20) + 4, t));
  // A group of one has nothing to exchange, whatever the size.
  CHECK(Direct(1, (8 << 20) + 4, t));
}

// The variables move the thresholds (EngineSettings::FromEnv, as the engine reads them).
void TestVariablesMoveThem() {
  setenv("HOROVOD_WAGMA_SMALL_BYTES", "1024", 1);
  setenv("HOROVOD_WAGMA_PAIR_SCATTER_BYTES", "4096", 1);
  const ReductionThresholds t = EngineSettings::FromEnv().thresholds;
  CHECK(Direct(3, 1024, t));
  CHECK(!Direct(3, 1028, t));
  CHECK(Direct(2, 4096, t));
  CHECK(!Direct(2, 4100, t));
  unsetenv("HOROVOD_WAGMA_SMALL_BYTES");
  unsetenv("HOROVOD_WAGMA_PAIR_SCATTER_BYTES");
  const ReductionThresholds defaults = EngineSettings::FromEnv().thresholds;
  CHECK_EQ(defaults.small_bytes, 65536);
  CHECK_EQ(defaults.pair_scatter_bytes, 8 << 20);
}

}  // namespace

int main() {
  TestDefaultThresholds();
  TestVariablesMoveThem();
  return Report("reduction_choice_test");
}
