#include "message_cut.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace wagma {
namespace {

// Open MPI's TCP eager limit is 65,536 bytes including ob1's match header; 1 KiB of
// headroom keeps every fragment under it.
constexpr size_t kDefaultFragmentBytes = 63 * 1024;

// A non-negative whole number of bytes from the environment; "" or an error.
std::string EnvBytes(const char* name, size_t* value) {
  const char* v = std::getenv(name);
  if (!v || !*v) return "";
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= 0) || x > 1e15) {
    return std::string(name) + "='" + v + "' is not a byte count (a whole number >= 0)";
  }
  *value = static_cast<size_t>(x);
  return "";
}

}  // namespace

std::string MessageCut::Init(MPI_Comm comm) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  // Ranks sharing this node: a node-local communicator's members, in `comm`'s ranks.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  remote_.assign(static_cast<size_t>(size), 1);
  if (node != MPI_COMM_NULL) {
    int local = 0;
    MPI_Comm_size(node, &local);
    MPI_Group node_group, comm_group;
    MPI_Comm_group(node, &node_group);
    MPI_Comm_group(comm, &comm_group);
    std::vector<int> in_node(static_cast<size_t>(local)), in_comm(static_cast<size_t>(local));
    for (int i = 0; i < local; ++i) in_node[static_cast<size_t>(i)] = i;
    MPI_Group_translate_ranks(node_group, local, in_node.data(), comm_group, in_comm.data());
    for (int r : in_comm) {
      if (r >= 0 && r < size) remote_[static_cast<size_t>(r)] = 0;
    }
    MPI_Group_free(&node_group);
    MPI_Group_free(&comm_group);
    MPI_Comm_free(&node);
  }
  remote_[static_cast<size_t>(rank)] = 0;

  size_t fragment = kDefaultFragmentBytes, up_to = up_to_bytes_;
  std::string error = EnvBytes("HOROVOD_WAGMA_FRAGMENT_BYTES", &fragment);
  if (error.empty()) error = EnvBytes("HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES", &up_to);
  const char* scope = std::getenv("HOROVOD_WAGMA_FRAGMENT_SCOPE");
  const std::string scope_s = scope && *scope ? scope : "remote";
  if (error.empty() && scope_s != "remote" && scope_s != "all") {
    error = "HOROVOD_WAGMA_FRAGMENT_SCOPE='" + scope_s + "': expected 'remote' or 'all'";
  }
  // Every rank must cut alike, or fragments would match the wrong receives: compare
  // the settings (a rank with a bad one sends the flag value instead).
  const long long bad = -1;
  long long mine[3] = {error.empty() ? static_cast<long long>(fragment) : bad,
                       error.empty() ? static_cast<long long>(up_to) : bad,
                       error.empty() ? (scope_s == "all" ? 1LL : 0LL) : bad};
  long long lo[3], hi[3];
  MPI_Allreduce(mine, lo, 3, MPI_LONG_LONG, MPI_MIN, comm);
  MPI_Allreduce(mine, hi, 3, MPI_LONG_LONG, MPI_MAX, comm);
  if (!error.empty()) return error;
  if (lo[0] == bad) return "HOROVOD_WAGMA_FRAGMENT_* is malformed on another rank";
  if (std::memcmp(lo, hi, sizeof(lo)) != 0) {
    return "HOROVOD_WAGMA_FRAGMENT_BYTES, _UP_TO_BYTES and _SCOPE differ between ranks "
           "(this rank: " + std::to_string(fragment) + ", " + std::to_string(up_to) + ", " +
           scope_s + "); set them alike on every rank";
  }
  fragment_bytes_ = fragment;
  up_to_bytes_ = up_to;
  cut_local_ = scope_s == "all";
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

size_t MessageCut::PostReceive(void* buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                               std::vector<MPI_Request>& requests) const {
  char* p = static_cast<char*>(buf);
  return ForEachPiece(bytes, peer, [&](size_t off, size_t len) {
    requests.emplace_back();
    MPI_Irecv(p + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &requests.back());
  });
}

size_t MessageCut::PostSend(const void* buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                            std::vector<MPI_Request>& requests) const {
  const char* p = static_cast<const char*>(buf);
  return ForEachPiece(bytes, peer, [&](size_t off, size_t len) {
    requests.emplace_back();
    MPI_Isend(p + off, static_cast<int>(len), MPI_BYTE, peer, tag, comm, &requests.back());
  });
}

}  // namespace wagma
