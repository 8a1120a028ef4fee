// `ReadJournal`: the journal's decoder, validating every byte (hived/journal.h, invariants).
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/journal.h"
#include "src/internal/status_macros.h"
#include "src/journal_codec.h"

namespace hived {
namespace {

// Reads one record's body; every error names the field.
class BodyReader {
 public:
  explicit BodyReader(std::string_view body) : body_(body) {}

  absl::Status Varint(const char* what, uint64_t* v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= body_.size()) return Error(what, "ends inside a number");
      const auto byte = static_cast<unsigned char>(body_[pos_++]);
      if (shift == 63 && byte > 1) return Error(what, "a number over 64 bits");
      out |= static_cast<uint64_t>(byte & 0x7fu) << shift;
      if ((byte & 0x80u) == 0) {
        *v = out;
        return absl::OkStatus();
      }
    }
    return Error(what, "a number over 64 bits");
  }
  absl::Status Signed(const char* what, int64_t* v) {
    uint64_t z = 0;
    HIVED_RETURN_IF_ERROR(Varint(what, &z));
    *v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    return absl::OkStatus();
  }
  absl::Status Int32(const char* what, int32_t* v) {
    int64_t w = 0;
    HIVED_RETURN_IF_ERROR(Signed(what, &w));
    if (w < std::numeric_limits<int32_t>::min() || w > std::numeric_limits<int32_t>::max()) {
      return Error(what, absl::StrCat(w, " does not fit 32 bits"));
    }
    *v = static_cast<int32_t>(w);
    return absl::OkStatus();
  }
  absl::Status Byte(const char* what, uint8_t* v) {
    if (pos_ >= body_.size()) return Error(what, "missing");
    *v = static_cast<uint8_t>(body_[pos_++]);
    return absl::OkStatus();
  }
  // A count of items, each at least one byte: never more than the bytes left.
  absl::Status Count(const char* what, size_t* n) {
    uint64_t v = 0;
    HIVED_RETURN_IF_ERROR(Varint(what, &v));
    if (v > body_.size() - pos_) {
      return Error(what,
                   absl::StrCat("a count of ", v, " with ", body_.size() - pos_, " bytes left"));
    }
    *n = static_cast<size_t>(v);
    return absl::OkStatus();
  }
  absl::Status String(const char* what, int64_t limit, std::string* s) {
    uint64_t n = 0;
    HIVED_RETURN_IF_ERROR(Varint(what, &n));
    if (n > static_cast<uint64_t>(limit)) {
      return Error(what, absl::StrCat(n, " bytes, over the limit of ", limit));
    }
    if (n > body_.size() - pos_) return Error(what, "ends inside a string");
    s->assign(body_.data() + pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return absl::OkStatus();
  }
  absl::Status Name(const char* what, std::string* s) { return String(what, kMaxNameBytes, s); }
  absl::Status Text(const char* what, std::string* s) {
    return String(what, kMaxStateStringBytes, s);
  }
  absl::Status Names(const char* what, std::vector<std::string>* v) {
    size_t n = 0;
    HIVED_RETURN_IF_ERROR(Count(what, &n));
    v->resize(n);
    for (std::string& s : *v) HIVED_RETURN_IF_ERROR(Name(what, &s));
    return absl::OkStatus();
  }
  absl::Status Bool(const char* what, bool* b) {
    uint8_t v = 0;
    HIVED_RETURN_IF_ERROR(Byte(what, &v));
    if (v > 1) return Error(what, absl::StrCat("a boolean byte ", v));
    *b = v == 1;
    return absl::OkStatus();
  }

  absl::Status Request(GroupRequest* r) {
    HIVED_RETURN_IF_ERROR(Name("request.name", &r->name));
    HIVED_RETURN_IF_ERROR(Name("request.vc", &r->vc));
    HIVED_RETURN_IF_ERROR(Int32("request.priority", &r->priority));
    HIVED_RETURN_IF_ERROR(Name("request.leafCellType", &r->leaf_cell_type));
    HIVED_RETURN_IF_ERROR(Names("request.leafCellTypes", &r->leaf_cell_types));
    HIVED_RETURN_IF_ERROR(Name("request.pinnedCellId", &r->pinned_cell_id));
    uint8_t flags = 0;
    HIVED_RETURN_IF_ERROR(Byte("request.flags", &flags));
    if (flags > 3) return Error("request.flags", absl::StrCat("unknown bits in ", flags));
    r->lazy_preemption = (flags & 1u) != 0;
    size_t n = 0;
    HIVED_RETURN_IF_ERROR(Count("request.members", &n));
    r->members.resize(n);
    for (GroupMember& m : r->members) {
      HIVED_RETURN_IF_ERROR(Int32("member.podNumber", &m.pod_number));
      HIVED_RETURN_IF_ERROR(Int32("member.leafCellNumber", &m.leaf_cell_number));
      HIVED_RETURN_IF_ERROR(Int32("member.gpuMilli", &m.gpu_milli));
      HIVED_RETURN_IF_ERROR(Signed("member.gpuMemoryMiB", &m.gpu_memory_mib));
      HIVED_RETURN_IF_ERROR(Signed("member.cpuMilli", &m.cpu_milli));
      HIVED_RETURN_IF_ERROR(Signed("member.memoryMiB", &m.memory_mib));
      HIVED_RETURN_IF_ERROR(Name("member.migProfile", &m.mig_profile));
    }
    if ((flags & 2u) != 0) {
      r->suggested_nodes.emplace();
      HIVED_RETURN_IF_ERROR(Names("request.suggestedNodes", &*r->suggested_nodes));
    }
    return absl::OkStatus();
  }
  absl::Status Placement(hived::Placement* p) {
    HIVED_RETURN_IF_ERROR(Name("placement.chain", &p->chain));
    size_t n = 0;
    HIVED_RETURN_IF_ERROR(Count("placement.pods", &n));
    p->pods.resize(n);
    for (PodPlacement& pod : p->pods) {
      HIVED_RETURN_IF_ERROR(Int32("pod.leafCellNumber", &pod.leaf_cell_number));
      HIVED_RETURN_IF_ERROR(Name("pod.physicalNode", &pod.node));
      size_t k = 0;
      HIVED_RETURN_IF_ERROR(Count("pod.leafCellIndices", &k));
      pod.leaf_cell_indices.resize(k);
      for (int32_t& i : pod.leaf_cell_indices) {
        HIVED_RETURN_IF_ERROR(Int32("pod.leafCellIndices", &i));
      }
      HIVED_RETURN_IF_ERROR(Names("pod.preassignedCellTypes", &pod.preassigned_cell_types));
      HIVED_RETURN_IF_ERROR(Name("pod.migProfile", &pod.mig_profile));
      HIVED_RETURN_IF_ERROR(Int32("pod.migStart", &pod.mig_start));
    }
    return absl::OkStatus();
  }
  absl::Status Record(GroupRecord* r) {
    HIVED_RETURN_IF_ERROR(Request(&r->request));
    HIVED_RETURN_IF_ERROR(Placement(&r->placement));
    uint8_t state = 0;
    HIVED_RETURN_IF_ERROR(Byte("record.state", &state));
    if (state != static_cast<uint8_t>(GroupState::kAllocated) &&
        state != static_cast<uint8_t>(GroupState::kOpportunistic)) {
      return Error("record.state", absl::StrCat("state ", state, " is not a running one"));
    }
    r->state = static_cast<GroupState>(state);
    HIVED_RETURN_IF_ERROR(Text("record.downgradeReason", &r->downgrade_reason));
    HIVED_RETURN_IF_ERROR(Name("record.preemptor", &r->preemptor));
    size_t n = 0;
    HIVED_RETURN_IF_ERROR(Count("record.virtualLeafCells", &n));
    r->virtual_leaf_cells.resize(n);
    for (std::string& v : r->virtual_leaf_cells) {
      HIVED_RETURN_IF_ERROR(Text("record.virtualLeafCells", &v));
    }
    return absl::OkStatus();
  }

  bool done() const { return pos_ == body_.size(); }
  size_t left() const { return body_.size() - pos_; }

 private:
  static absl::Status Error(const char* what, absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", problem));
  }
  std::string_view body_;
  size_t pos_ = 0;
};

uint32_t Fixed32(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

// An ApplyConfig record's spec: valid, and exactly as `ClusterSpecToYaml` writes it (so a
// record reads back to the same bytes). The loader's errors are quoted to their first line.
absl::Status ReadSpec(BodyReader& in, ClusterSpec* spec) {
  std::string yaml;
  HIVED_RETURN_IF_ERROR(in.String("spec", kMaxJournalRecordBytes, &yaml));
  absl::StatusOr<ClusterSpec> loaded = LoadClusterSpecString(yaml, "journal spec");
  if (!loaded.ok()) {
    const absl::string_view message = loaded.status().message();
    const absl::string_view first = message.substr(0, message.find('\n'));
    return absl::InvalidArgumentError(absl::StrCat("spec: not a valid cluster spec: ",
                                                   first.substr(0, 2 * kMaxQuotedInputBytes)));
  }
  if (ClusterSpecToYaml(*loaded) != yaml) {
    return absl::InvalidArgumentError("spec: not the YAML ClusterSpecToYaml writes for it");
  }
  *spec = *std::move(loaded);
  return absl::OkStatus();
}

absl::Status ReadBody(std::string_view body, JournalRecord* rec) {
  BodyReader in(body);
  uint8_t op = 0;
  HIVED_RETURN_IF_ERROR(in.Byte("op", &op));
  if (op < static_cast<uint8_t>(JournalOp::kSchedule) ||
      op > static_cast<uint8_t>(JournalOp::kApplyConfig)) {
    return absl::InvalidArgumentError(absl::StrCat("op: unknown op ", op));
  }
  rec->op = static_cast<JournalOp>(op);
  HIVED_RETURN_IF_ERROR(in.Varint("sequence", &rec->sequence));
  if (in.left() < 8) return absl::InvalidArgumentError("fingerprint: missing");
  uint64_t fp = 0;
  for (int i = 0; i < 8; ++i) {
    uint8_t b = 0;
    HIVED_RETURN_IF_ERROR(in.Byte("fingerprint", &b));
    fp |= static_cast<uint64_t>(b) << (8 * i);
  }
  rec->fingerprint = fp;
  switch (rec->op) {
    case JournalOp::kSchedule: {
      HIVED_RETURN_IF_ERROR(in.Request(&rec->request));
      uint8_t phase = 0;
      HIVED_RETURN_IF_ERROR(in.Byte("phase", &phase));
      if (phase > static_cast<uint8_t>(Phase::kPreempting)) {
        return absl::InvalidArgumentError(absl::StrCat("phase: unknown phase ", phase));
      }
      rec->phase = static_cast<Phase>(phase);
      break;
    }
    case JournalOp::kAllocate:
    case JournalOp::kRecover:
      HIVED_RETURN_IF_ERROR(in.Request(&rec->request));
      HIVED_RETURN_IF_ERROR(in.Placement(&rec->placement));
      break;
    case JournalOp::kAllocateRecord:
      HIVED_RETURN_IF_ERROR(in.Record(&rec->record));
      break;
    case JournalOp::kRelease:
    case JournalOp::kUnreserve:
    case JournalOp::kCancelPreemption:
      HIVED_RETURN_IF_ERROR(in.Name("name", &rec->name));
      break;
    case JournalOp::kSetNodeHealthy:
      HIVED_RETURN_IF_ERROR(in.Name("node", &rec->name));
      HIVED_RETURN_IF_ERROR(in.Bool("healthy", &rec->healthy));
      break;
    case JournalOp::kApplyConfig:
      HIVED_RETURN_IF_ERROR(ReadSpec(in, &rec->spec));
      HIVED_RETURN_IF_ERROR(in.Bool("applyStranded", &rec->apply_stranded));
      break;
  }
  if (!in.done()) {
    return absl::InvalidArgumentError(absl::StrCat(in.left(), " bytes after the last field"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<JournalContents> ReadJournal(std::string_view bytes) {
  JournalContents out;
  size_t at = 0;
  for (int64_t n = 0; at < bytes.size(); ++n) {
    auto error = [&](absl::string_view problem) {
      return absl::InvalidArgumentError(
          absl::StrCat("journal record ", n, " at byte ", at, ": ", problem));
    };
    const size_t left = bytes.size() - at;
    if (left < internal::kJournalFrameHeader) {
      out.torn_tail_bytes = static_cast<int64_t>(left);
      break;
    }
    const uint32_t size = Fixed32(bytes, at);
    if (size > static_cast<uint64_t>(kMaxJournalRecordBytes)) {
      return error(
          absl::StrCat("a record of ", size, " bytes, over the limit of ", kMaxJournalRecordBytes));
    }
    if (size > left - internal::kJournalFrameHeader) {
      out.torn_tail_bytes = static_cast<int64_t>(left);
      break;
    }
    const std::string_view body = bytes.substr(at + internal::kJournalFrameHeader, size);
    if (internal::Crc32(body) != Fixed32(bytes, at + 4)) return error("checksum mismatch");
    JournalRecord rec;
    if (absl::Status s = ReadBody(body, &rec); !s.ok()) return error(s.message());
    out.records.push_back(std::move(rec));
    at += internal::kJournalFrameHeader + size;
  }
  return out;
}

}  // namespace hived
