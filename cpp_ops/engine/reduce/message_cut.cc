#include "reduce/message_cut.h"

#include <algorithm>
#include <cstring>

namespace wagma {

std::string MessageCut::Init(Transport& transport, const FragmentSettings& settings) {
  remote_ = transport.RemoteRanks();
  const std::string& error = settings.error;
  // Every rank must cut alike, or fragments would match the wrong receives: compare
  // the settings (a rank with a bad one sends the flag value instead).
  const int64_t bad = -1;
  const int64_t mine[3] = {error.empty() ? static_cast<int64_t>(settings.fragment_bytes) : bad,
                           error.empty() ? static_cast<int64_t>(settings.up_to_bytes) : bad,
                           error.empty() ? (settings.cut_local ? 1 : 0) : bad};
  int64_t lo[3], hi[3];
  transport.AllreduceMinMax(mine, lo, hi, 3);
  if (!error.empty()) return error;
  if (lo[0] == bad) return "HOROVOD_WAGMA_FRAGMENT_* is malformed on another rank";
  if (std::memcmp(lo, hi, sizeof(lo)) != 0) {
    return "HOROVOD_WAGMA_FRAGMENT_BYTES, _UP_TO_BYTES and _SCOPE differ between ranks "
           "(this rank: " + std::to_string(settings.fragment_bytes) + ", " +
           std::to_string(settings.up_to_bytes) + ", " + settings.scope +
           "); set them alike on every rank";
  }
  fragment_bytes_ = settings.fragment_bytes;
  up_to_bytes_ = settings.up_to_bytes;
  cut_local_ = settings.cut_local;
  return "";
}

size_t MessageCut::Pieces(size_t bytes, int peer) const {
  if (fragment_bytes_ == 0 || bytes <= fragment_bytes_ || bytes > up_to_bytes_) return 1;
  const bool remote = peer >= 0 && static_cast<size_t>(peer) < remote_.size() &&
                      remote_[static_cast<size_t>(peer)];
  if (!remote && !cut_local_) return 1;
  return (bytes + fragment_bytes_ - 1) / fragment_bytes_;
}

template <typename PostPiece>
size_t MessageCut::ForEachPiece(size_t bytes, int peer, PostPiece post) const {
  const size_t n = Pieces(bytes, peer);
  if (n == 1) {
    post(0, bytes);
    return 1;
  }
  for (size_t off = 0; off < bytes; off += fragment_bytes_) {
    post(off, std::min(fragment_bytes_, bytes - off));
  }
  return n;
}

size_t MessageCut::PostReceive(void* buf, size_t bytes, int peer, int tag,
                               RequestList& requests) const {
  char* p = static_cast<char*>(buf);
  return ForEachPiece(bytes, peer, [&](size_t off, size_t len) {
    requests.PostReceive(p + off, len, peer, tag);
  });
}

size_t MessageCut::PostSend(const void* buf, size_t bytes, int peer, int tag,
                            RequestList& requests) const {
  const char* p = static_cast<const char*>(buf);
  return ForEachPiece(bytes, peer, [&](size_t off, size_t len) {
    requests.PostSend(p + off, len, peer, tag);
  });
}

}  // namespace wagma
