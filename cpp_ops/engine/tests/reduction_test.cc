// Unit test of the group reductions (group_reduction.h): DirectExchange and
// ScatterAllgather, every dtype, groups of 2 to 8 drawn from a larger world, in place
// and not, with messages cut into fragments (message_cut.h) and with the inclusion
// exchange that leaves stale values out (round_policy.h, DecideInclusion). Every
// member runs in this process over the loopback transport; every result is checked
// against exact values (inputs chosen so that each mean is exact in every dtype).
// Built and run by `make engine-unit-test`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "reduce/buffer.h"
#include "reduce/data_type.h"
#include "reduce/direct_exchange_reduction.h"
#include "reduce/group_reduction.h"
#include "reduce/reduction_factory.h"
#include "reduce/message_cut.h"
#include "reduce/scatter_allgather_reduction.h"
#include "check.h"
#include "loopback_transport.h"
#include "typed_values.h"

using namespace wagma;
using loopback::LoopbackTransport;
using loopback::Network;
using typed::Get;
using typed::kAllTypes;
using typed::Put;

namespace {

enum class Algorithm { kDirect, kScatterAllgather };

struct Case {
  Algorithm algorithm = Algorithm::kDirect;
  DataType dtype = DataType::kFloat32;
  std::vector<int> members;  // world ranks, sorted
  int world = 8;
  size_t count = 7;
  bool in_place = false;
  // Inclusion (wait-avoiding global rounds), by member index; empty: not shared.
  std::vector<int64_t> steps;
  std::vector<bool> stale;
  int64_t max_staleness = 0;
  const MessageCut* cuts = nullptr;  // one per world rank, or nullptr
};

struct Outcome {
  std::vector<std::vector<double>> results;  // by member index
  std::vector<int> included_count;
  std::vector<bool> self_included;
  std::vector<int64_t> steps_behind;
  std::vector<int64_t> messages_cut;
  std::vector<size_t> bytes_sent;
  bool finished = true;
  int size_mismatches = 0;
  size_t left_in_flight = 0;
  std::vector<std::vector<std::vector<size_t>>> traces;  // by member: steps' sends
};

// Member j's element i: 2 g (j + 1) + (i % 5), at most 132: exact in every dtype, and
// the mean over all g members, or over 1, 2 or 4 of them, is exact too.
double Input(int g, int j, size_t i) { return 2.0 * g * (j + 1) + static_cast<double>(i % 5); }

Outcome Run(const Case& c) {
  const int g = static_cast<int>(c.members.size());
  Network net(c.world);
  BufferPool pool(0);
  std::vector<std::unique_ptr<LoopbackTransport>> transports;
  for (int r = 0; r < c.world; ++r) transports.push_back(std::make_unique<LoopbackTransport>(&net, r));
  const size_t esize = ElementSize(c.dtype);
  std::vector<std::vector<char>> inputs(g), outputs(g);
  std::vector<std::unique_ptr<GroupReduction>> reductions;
  ReductionThresholds t;
  if (c.algorithm == Algorithm::kDirect) {
    t.small_bytes = t.pair_scatter_bytes = size_t(1) << 40;
  } else {
    t.small_bytes = t.pair_scatter_bytes = 0;
  }
  for (int j = 0; j < g; ++j) {
    inputs[j].resize(c.count * esize);
    for (size_t i = 0; i < c.count; ++i) Put(c.dtype, Input(g, j, i), inputs[j].data(), i);
    outputs[j].assign(c.count * esize, 0);
    ReductionArgs args;
    args.transport = transports[c.members[j]].get();
    args.tag = 11;
    args.members = c.members;
    args.my_index = j;
    args.dtype = c.dtype;
    args.count = c.count;
    args.contribution = inputs[j].data();
    args.result = c.in_place ? inputs[j].data() : outputs[j].data();
    args.pool = &pool;
    args.cut = c.cuts ? &c.cuts[c.members[j]] : nullptr;
    if (!c.steps.empty()) {
      args.share_inclusion = true;
      args.steps = c.steps[j];
      args.stale_in_rounds = c.stale[j];
      args.max_staleness = c.max_staleness;
    }
    reductions.push_back(MakeGroupReduction(std::move(args), t));
  }
  for (auto& r : reductions) r->Start();
  std::vector<bool> done(g, false);
  for (int pass = 0; pass < 1000; ++pass) {
    bool all = true;
    // Members progress in turn, last to first, so no member's order is privileged.
    for (int j = g - 1; j >= 0; --j) {
      if (!done[j]) done[j] = reductions[j]->Progress();
      all = all && done[j];
    }
    if (all) break;
  }
  Outcome o;
  for (int j = 0; j < g; ++j) {
    o.finished = o.finished && done[j];
    const void* res = c.in_place ? inputs[j].data() : outputs[j].data();
    std::vector<double> values(c.count);
    for (size_t i = 0; i < c.count; ++i) values[i] = Get(c.dtype, res, i);
    o.results.push_back(values);
    o.included_count.push_back(reductions[j]->included_count());
    o.self_included.push_back(reductions[j]->self_included());
    o.steps_behind.push_back(reductions[j]->self_steps_behind());
    o.messages_cut.push_back(reductions[j]->messages_cut());
    o.bytes_sent.push_back(reductions[j]->BytesSent());
    o.traces.push_back(net.trace(c.members[j]).steps);
  }
  o.size_mismatches = net.size_mismatches();
  o.left_in_flight = net.InFlight();
  return o;
}

// The exact mean over the included members (all, without inclusion), element i.
double Expected(const Case& c, const std::vector<bool>& included, size_t i) {
  const int g = static_cast<int>(c.members.size());
  double sum = 0;
  int n = 0;
  for (int j = 0; j < g; ++j) {
    if (!included[j]) continue;
    sum += Input(g, j, i);
    ++n;
  }
  return sum / n;
}

bool AllExact(const Case& c, const Outcome& o, const std::vector<bool>& included) {
  for (size_t j = 0; j < o.results.size(); ++j)
    for (size_t i = 0; i < c.count; ++i)
      if (o.results[j][i] != Expected(c, included, i)) {
        std::fprintf(stderr, "  member %zu element %zu: %g, expected %g\n", j, i,
                     o.results[j][i], Expected(c, included, i));
        return false;
      }
  return true;
}

// Every algorithm, dtype, group size (members spread over a world of 8), count (fewer
// elements than members too: empty chunks), in place or not: every member gets the
// exact mean, the messages match their receives in size, none is left over, and
// BytesSent() is what went on the wire.
void TestEveryAlgorithmDtypeAndGroup() {
  const std::vector<std::vector<int>> groups = {
      {0, 1}, {2, 5}, {0, 3, 6}, {1, 2, 4, 7}, {0, 2, 3, 5, 6}, {0, 1, 2, 3, 4, 5, 6, 7}};
  for (Algorithm a : {Algorithm::kDirect, Algorithm::kScatterAllgather})
    for (DataType dtype : kAllTypes)
      for (const auto& members : groups)
        for (size_t count : {size_t(1), size_t(3), size_t(37)})
          for (bool in_place : {false, true}) {
            Case c;
            c.algorithm = a;
            c.dtype = dtype;
            c.members = members;
            c.count = count;
            c.in_place = in_place;
            const Outcome o = Run(c);
            CHECK(o.finished);
            CHECK(AllExact(c, o, std::vector<bool>(members.size(), true)));
            CHECK_EQ(o.size_mismatches, 0);
            CHECK_EQ(o.left_in_flight, 0u);
            for (size_t j = 0; j < members.size(); ++j) {
              size_t wire = 0;
              for (const auto& step : o.traces[j])
                for (size_t b : step) wire += b;
              CHECK_EQ(o.bytes_sent[j], wire);
              CHECK_EQ(o.included_count[j], static_cast<int>(members.size()));
              CHECK(o.self_included[j]);
            }
          }
}

// The algorithms' traffic: a direct exchange sends each peer the whole tensor in one
// step; reduce-scatter + allgather sends each peer one chunk per step, 2 (g - 1) / g
// of the tensor in all.
void TestTrafficPerAlgorithm() {
  for (Algorithm a : {Algorithm::kDirect, Algorithm::kScatterAllgather}) {
    Case c;
    c.algorithm = a;
    c.members = {0, 1, 2, 3};
    c.count = 400;  // 100 per chunk
    const Outcome o = Run(c);
    CHECK(o.finished);
    const size_t whole = c.count * 4;
    for (size_t j = 0; j < 4; ++j) {
      int sending_steps = 0;
      for (const auto& step : o.traces[j]) {
        if (step.empty()) continue;
        ++sending_steps;
        CHECK_EQ(step.size(), 3u);  // one message per peer
        for (size_t b : step) CHECK_EQ(b, a == Algorithm::kDirect ? whole : whole / 4);
      }
      CHECK_EQ(sending_steps, a == Algorithm::kDirect ? 1 : 2);
      CHECK_EQ(o.bytes_sent[j], a == Algorithm::kDirect ? 3 * whole : 2 * 3 * whole / 4);
    }
  }
}

// Messages cut into fragments (scope "all", 64-byte fragments): the same exact means,
// every message on the wire at most one fragment, and messages_cut() counts the
// messages that went as several.
void TestMessageCut() {
  const int world = 4;
  Network setup(world);
  std::vector<std::unique_ptr<LoopbackTransport>> transports;
  for (int r = 0; r < world; ++r) transports.push_back(std::make_unique<LoopbackTransport>(&setup, r));
  MessageCut cuts[world];
  FragmentSettings s;
  s.fragment_bytes = 64;
  s.up_to_bytes = 1 << 20;
  s.cut_local = true;
  s.scope = "all";
  std::string errors[world];
  // Init is collective (it checks that every rank cuts alike): one thread per rank.
  loopback::RunRanks(world, [&](int r) { errors[r] = cuts[r].Init(*transports[r], s); });
  for (int r = 0; r < world; ++r) CHECK(errors[r].empty());
  CHECK_EQ(cuts[0].Pieces(200, 1), 4u);
  CHECK_EQ(cuts[0].Pieces(64, 1), 1u);
  for (Algorithm a : {Algorithm::kDirect, Algorithm::kScatterAllgather})
    for (DataType dtype : kAllTypes) {
      Case c;
      c.algorithm = a;
      c.dtype = dtype;
      c.world = world;
      c.members = {0, 1, 2, 3};
      c.count = 101;
      c.cuts = cuts;
      const Outcome o = Run(c);
      CHECK(o.finished);
      CHECK(AllExact(c, o, std::vector<bool>(4, true)));
      CHECK_EQ(o.size_mismatches, 0);
      const size_t bytes = c.count * ElementSize(dtype);
      for (size_t j = 0; j < 4; ++j) {
        size_t pieces = 0;
        for (const auto& step : o.traces[j])
          for (size_t b : step) {
            CHECK(b <= 64);
            ++pieces;
          }
        // Direct: 3 messages of `bytes`; scatter-allgather: 6 of a chunk each.
        const size_t message = a == Algorithm::kDirect ? bytes
                                                       : (c.count / 4) * ElementSize(dtype);
        const size_t per_message = (message + 63) / 64;
        if (a == Algorithm::kDirect) {
          CHECK_EQ(pieces, 3 * per_message);
          CHECK_EQ(o.messages_cut[j], per_message > 1 ? 3 : 0);
        } else {
          CHECK(o.messages_cut[j] >= (per_message > 1 ? 3 : 0));
        }
      }
    }
  // Settings that differ between ranks are refused on every rank.
  Network other(2);
  LoopbackTransport t0(&other, 0), t1(&other, 1);
  MessageCut c0, c1;
  FragmentSettings s1 = s;
  s1.fragment_bytes = 128;
  std::string e0, e1;
  loopback::RunRanks(2, [&](int r) { (r == 0 ? e0 : e1) = (r == 0 ? c0.Init(t0, s) : c1.Init(t1, s1)); });
  CHECK(Contains(e0, "differ between ranks"));
  CHECK(Contains(e1, "differ between ranks"));
}

// Remote peers only (the default scope): messages to a peer on the same node are not
// cut, messages to another node's are.
void TestMessageCutRemoteOnly() {
  Network setup(4, {0, 0, 1, 1});
  std::vector<std::unique_ptr<LoopbackTransport>> transports;
  for (int r = 0; r < 4; ++r) transports.push_back(std::make_unique<LoopbackTransport>(&setup, r));
  MessageCut cuts[4];
  FragmentSettings s;
  s.fragment_bytes = 64;
  loopback::RunRanks(4, [&](int r) { cuts[r].Init(*transports[r], s); });
  CHECK_EQ(cuts[0].Pieces(400, 1), 1u);
  CHECK_EQ(cuts[0].Pieces(400, 2), 7u);
  CHECK_EQ(cuts[3].Pieces(400, 0), 7u);
  CHECK_EQ(cuts[3].Pieces(400, 2), 1u);
  CHECK_EQ(cuts[0].Pieces(s.up_to_bytes + 1, 2), 1u);  // above up_to: never cut
}

// Leaving out (wait-avoiding global rounds): a value that is stale in rounds AND more
// than max_staleness steps behind the most advanced member is left out of the mean on
// every member alike; a stale-in-rounds value whose app is not behind stays in; the
// left-out member still gets the mean of the others.
void TestInclusion() {
  struct Pattern {
    std::vector<int64_t> steps;
    std::vector<bool> stale;
    std::vector<bool> included;  // expected
  };
  // Included counts of 1, 2 or 4, so that every mean is exact.
  const std::vector<Pattern> patterns = {
      // members 2 and 3 stale and 5 steps behind (max 2): out.
      {{10, 10, 5, 5}, {false, false, true, true}, {true, true, false, false}},
      // member 2 stale in rounds but only 2 behind: stays.
      {{10, 10, 8, 10}, {false, false, true, false}, {true, true, true, true}},
      // behind but not stale in rounds: stays.
      {{10, 10, 1, 10}, {false, false, false, false}, {true, true, true, true}},
      // two out, not the first ones.
      {{3, 12, 4, 12}, {true, false, true, false}, {false, true, false, true}},
      // all but the most advanced member out: it always stays.
      {{3, 12, 4, 5}, {true, false, true, true}, {false, true, false, false}},
  };
  for (Algorithm a : {Algorithm::kDirect, Algorithm::kScatterAllgather})
    for (DataType dtype : {DataType::kFloat32, DataType::kFloat64})
      for (const Pattern& p : patterns) {
        Case c;
        c.algorithm = a;
        c.dtype = dtype;
        c.world = 6;
        c.members = {0, 2, 3, 5};
        c.count = 9;
        c.steps = p.steps;
        c.stale = p.stale;
        c.max_staleness = 2;
        const Outcome o = Run(c);
        CHECK(o.finished);
        int expected_count = 0;
        int64_t most = 0;
        for (size_t j = 0; j < 4; ++j) {
          expected_count += p.included[j] ? 1 : 0;
          most = std::max(most, p.steps[j]);
        }
        CHECK(AllExact(c, o, p.included));
        for (size_t j = 0; j < 4; ++j) {
          CHECK_EQ(o.included_count[j], expected_count);
          CHECK(o.self_included[j] == p.included[j]);
          CHECK_EQ(o.steps_behind[j], most - p.steps[j]);
        }
        CHECK_EQ(o.size_mismatches, 0);
        CHECK_EQ(o.left_in_flight, 0u);
      }
}

}  // namespace

int main() {
  TestEveryAlgorithmDtypeAndGroup();
  TestTrafficPerAlgorithm();
  TestMessageCut();
  TestMessageCutRemoteOnly();
  TestInclusion();
  return Report("reduction_test");
}
