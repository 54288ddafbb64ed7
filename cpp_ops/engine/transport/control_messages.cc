#include "transport/control_messages.h"

#include <cstring>
#include <stdexcept>

namespace wagma {
namespace {

struct Header {
  int32_t stream_id;
  int32_t pad;
  int64_t round;
};

}  // namespace

void ControlChannel::Send(int dest, const ControlMessage& msg) {
  Header h{msg.stream_id, 0, msg.round};
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  bytes += msg.payload;
  transport_.SendControl(dest, static_cast<int>(msg.kind), std::move(bytes));
}

bool ControlChannel::Poll(ControlMessage* out) {
  int source = -1, tag = 0;
  std::string bytes;
  if (!transport_.ReceiveControl(&source, &tag, &bytes)) return false;
  if (bytes.size() < sizeof(Header)) throw std::runtime_error("short control message");
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  out->kind = static_cast<ControlKind>(tag);
  out->source = source;
  out->stream_id = h.stream_id;
  out->round = h.round;
  out->payload = bytes.substr(sizeof(Header));
  return true;
}

std::string PackNameAndText(const std::string& name, const std::string& text) {
  const uint32_t n = static_cast<uint32_t>(name.size());
  std::string out(reinterpret_cast<const char*>(&n), sizeof(n));
  return out + name + text;
}

void UnpackNameAndText(const std::string& bytes, std::string* name, std::string* text) {
  uint32_t n = 0;
  if (bytes.size() < sizeof(n)) throw std::runtime_error("short control payload");
  std::memcpy(&n, bytes.data(), sizeof(n));
  *name = bytes.substr(sizeof(n), n);
  *text = bytes.substr(sizeof(n) + n);
}

std::string PackFingerprint(uint64_t fingerprint) {
  return std::string(reinterpret_cast<const char*>(&fingerprint), sizeof(fingerprint));
}

uint64_t UnpackFingerprint(const std::string& bytes) {
  uint64_t fingerprint = 0;
  if (bytes.size() == sizeof(fingerprint))
    std::memcpy(&fingerprint, bytes.data(), sizeof(fingerprint));
  return fingerprint;
}

std::string PackLastRounds(const std::map<int, int64_t>& last_round) {
  std::string out;
  for (const auto& kv : last_round) {
    const int32_t id = kv.first;
    const int64_t r = kv.second;
    out.append(reinterpret_cast<const char*>(&id), sizeof(id));
    out.append(reinterpret_cast<const char*>(&r), sizeof(r));
  }
  return out;
}

std::map<int, int64_t> UnpackLastRounds(const std::string& bytes) {
  constexpr size_t kPair = sizeof(int32_t) + sizeof(int64_t);
  if (bytes.size() % kPair != 0) throw std::runtime_error("malformed goodbye message");
  std::map<int, int64_t> out;
  for (size_t off = 0; off < bytes.size(); off += kPair) {
    int32_t id = 0;
    int64_t r = 0;
    std::memcpy(&id, bytes.data() + off, sizeof(id));
    std::memcpy(&r, bytes.data() + off + sizeof(id), sizeof(r));
    out[id] = r;
  }
  return out;
}

}  // namespace wagma
