// The journal's encoder (src/journal_codec.h) and `AppendJournalRecord`.
#include "src/journal_codec.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "hived/config.h"

namespace hived {
namespace internal {
namespace {

// The CRC-32 of zlib and Ethernet (reflected polynomial 0xEDB88320), a byte at a time.
constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

void PutFixed32(char* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xffu);
}

}  // namespace

uint32_t Crc32(std::string_view bytes) {
  uint32_t c = 0xffffffffu;
  for (char ch : bytes) c = kCrcTable[(c ^ static_cast<unsigned char>(ch)) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void PutVarint(std::string* out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

void PutSigned(std::string* out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s.data(), s.size());
}

size_t BeginFrame(std::string* out, JournalOp op, uint64_t sequence, uint64_t fingerprint) {
  const size_t start = out->size();
  out->append(kJournalFrameHeader, '\0');
  out->push_back(static_cast<char>(op));
  PutVarint(out, sequence);
  char fp[8];
  for (int i = 0; i < 8; ++i) fp[i] = static_cast<char>((fingerprint >> (8 * i)) & 0xffu);
  out->append(fp, 8);
  return start;
}

void EndFrame(std::string* out, size_t start) {
  const size_t body = start + kJournalFrameHeader;
  const std::string_view bytes(out->data() + body, out->size() - body);
  PutFixed32(out->data() + start, static_cast<uint32_t>(bytes.size()));
  PutFixed32(out->data() + start + 4, Crc32(bytes));
}

void PutRequest(std::string* out, const GroupRequest& r) {
  PutString(out, r.name);
  PutString(out, r.vc);
  PutSigned(out, r.priority);
  PutString(out, r.leaf_cell_type);
  PutVarint(out, r.leaf_cell_types.size());
  for (const std::string& t : r.leaf_cell_types) PutString(out, t);
  PutString(out, r.pinned_cell_id);
  out->push_back(
      static_cast<char>((r.lazy_preemption ? 1 : 0) | (r.suggested_nodes.has_value() ? 2 : 0)));
  PutVarint(out, r.members.size());
  for (const GroupMember& m : r.members) {
    PutSigned(out, m.pod_number);
    PutSigned(out, m.leaf_cell_number);
    PutSigned(out, m.gpu_milli);
    PutSigned(out, m.gpu_memory_mib);
    PutSigned(out, m.cpu_milli);
    PutSigned(out, m.memory_mib);
    PutString(out, m.mig_profile);
  }
  if (r.suggested_nodes.has_value()) {
    PutVarint(out, r.suggested_nodes->size());
    for (const std::string& n : *r.suggested_nodes) PutString(out, n);
  }
}

void PutPlacement(std::string* out, const Placement& p) {
  PutString(out, p.chain);
  PutVarint(out, p.pods.size());
  for (const PodPlacement& pod : p.pods) {
    PutSigned(out, pod.leaf_cell_number);
    PutString(out, pod.node);
    PutVarint(out, pod.leaf_cell_indices.size());
    for (int32_t i : pod.leaf_cell_indices) PutSigned(out, i);
    PutVarint(out, pod.preassigned_cell_types.size());
    for (const std::string& t : pod.preassigned_cell_types) PutString(out, t);
    PutString(out, pod.mig_profile);
    PutSigned(out, pod.mig_start);
  }
}

void PutRecord(std::string* out, const GroupRecord& r) {
  PutRequest(out, r.request);
  PutPlacement(out, r.placement);
  out->push_back(static_cast<char>(r.state));
  PutString(out, r.downgrade_reason);
  PutString(out, r.preemptor);
  PutVarint(out, r.virtual_leaf_cells.size());
  for (const std::string& v : r.virtual_leaf_cells) PutString(out, v);
}

uint64_t FingerprintValue(std::string_view hex) {
  uint64_t v = 0;
  if (hex.size() != 16) return 0;
  const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
  return ec == std::errc() && end == hex.data() + hex.size() ? v : 0;
}

}  // namespace internal

const char* JournalOpName(JournalOp op) {
  switch (op) {
    case JournalOp::kSchedule:
      return "Schedule";
    case JournalOp::kAllocate:
      return "Allocate";
    case JournalOp::kRecover:
      return "Recover";
    case JournalOp::kAllocateRecord:
      return "AllocateRecord";
    case JournalOp::kRelease:
      return "Release";
    case JournalOp::kUnreserve:
      return "Unreserve";
    case JournalOp::kCancelPreemption:
      return "CancelPreemption";
    case JournalOp::kSetNodeHealthy:
      return "SetNodeHealthy";
    case JournalOp::kApplyConfig:
      return "ApplyConfig";
  }
  return "unknown";
}

void AppendJournalRecord(const JournalRecord& record, std::string* out) {
  using namespace internal;  // NOLINT(google-build-using-namespace): the codec's own
  const size_t start = BeginFrame(out, record.op, record.sequence, record.fingerprint);
  switch (record.op) {
    case JournalOp::kSchedule:
      PutRequest(out, record.request);
      out->push_back(static_cast<char>(record.phase));
      break;
    case JournalOp::kAllocate:
    case JournalOp::kRecover:
      PutRequest(out, record.request);
      PutPlacement(out, record.placement);
      break;
    case JournalOp::kAllocateRecord:
      PutRecord(out, record.record);
      break;
    case JournalOp::kRelease:
    case JournalOp::kUnreserve:
    case JournalOp::kCancelPreemption:
      PutString(out, record.name);
      break;
    case JournalOp::kSetNodeHealthy:
      PutString(out, record.name);
      out->push_back(record.healthy ? 1 : 0);
      break;
    case JournalOp::kApplyConfig:
      PutString(out, ClusterSpecToYaml(record.spec));
      out->push_back(record.apply_stranded ? 1 : 0);
      break;
  }
  EndFrame(out, start);
}

}  // namespace hived
