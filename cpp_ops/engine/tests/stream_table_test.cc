// StreamTable's early activations (docs/semantics.md: an activation that reaches a rank
// before the registrar's id for its stream is kept and replayed, never dropped): what
// KeepEarly held for an id comes back from Assign, in arrival order, once; other ids'
// stay held; past kMaxEarly for one id, an error naming it and the sender.
#include <stdexcept>
#include <string>

#include "check.h"
#include "core/stream_table.h"

using wagma::Stream;
using wagma::StreamTable;

namespace {

void TestEarlyActivationsAreReplayedInOrderOnce() {
  StreamTable t;
  t.KeepEarly(5, {1, 0, "a"});
  t.KeepEarly(7, {2, 0, "other"});
  t.KeepEarly(5, {2, 0, "b"});
  t.KeepEarly(5, {1, 1, "c"});
  Stream& s = t.Create("s");
  CHECK(t.FindById(5) == nullptr);
  const auto replay = t.Assign(s, 5);
  CHECK_EQ(replay.size(), 3);
  if (replay.size() == 3) {
    CHECK(replay[0].source == 1 && replay[0].round == 0 && replay[0].payload == "a");
    CHECK(replay[1].source == 2 && replay[1].round == 0 && replay[1].payload == "b");
    CHECK(replay[2].source == 1 && replay[2].round == 1 && replay[2].payload == "c");
  }
  CHECK(t.FindById(5) == &s);
  CHECK_EQ(s.id, 5);
  // Replayed once: assigning again finds nothing held.
  CHECK(t.Assign(s, 5).empty());
  // The other id's activation is still held for its own stream.
  Stream& other = t.Create("other");
  const auto held = t.Assign(other, 7);
  CHECK_EQ(held.size(), 1);
  if (held.size() == 1) CHECK(held[0].payload == "other" && held[0].source == 2);
  // A stream with nothing early gets nothing.
  Stream& quiet = t.Create("quiet");
  CHECK(t.Assign(quiet, 9).empty());
}

void TestTooManyEarlyActivationsNameTheIdAndSender() {
  StreamTable t;
  for (size_t i = 0; i < StreamTable::kMaxEarly; ++i) t.KeepEarly(3, {1, int64_t(i), ""});
  std::string error;
  try {
    t.KeepEarly(3, {4, 0, ""});
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK(error.find("stream id 3") != std::string::npos);
  CHECK(error.find("from rank 4") != std::string::npos);
  Stream& s = t.Create("s");
  CHECK_EQ(t.Assign(s, 3).size(), StreamTable::kMaxEarly);  // none dropped below the cap
}

}  // namespace

int main() {
  TestEarlyActivationsAreReplayedInOrderOnce();
  TestTooManyEarlyActivationsNameTheIdAndSender();
  return Report("stream_table_test");
}
