#include "sim/trace/openb_reader.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {
namespace {

constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model";
constexpr std::string_view kPodHeader5 = "name,cpu_milli,memory_mib,num_gpu,gpu_milli";
constexpr std::string_view kPodHeader11 =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";

// Field access with located errors for one row.
class Row {
 public:
  Row(std::vector<CsvField> fields, int32_t line, RowErrors* errors)
      : fields_(std::move(fields)), line_(line), errors_(errors) {}

  const CsvField& field(size_t i) const { return fields_[i]; }

  // A non-negative integer no larger than `max`; records an error and returns nullopt otherwise.
  std::optional<int64_t> Count(size_t i, std::string_view what, int64_t max) {
    const CsvField& f = fields_[i];
    std::optional<int64_t> v = ParseInt(f.text);
    if (!v || *v < 0 || *v > max) {
      Error(f.column,
            absl::StrCat(Av(what), " must be an integer in 0..", max, ", got '", Av(f.text), "'"));
      return std::nullopt;
    }
    return v;
  }
  void Error(int32_t column, std::string_view message) {
    ok_ = false;
    errors_->Add(line_, column, message);
  }
  bool ok() const { return ok_; }

 private:
  std::vector<CsvField> fields_;
  int32_t line_;
  RowErrors* errors_;
  bool ok_ = true;
};

// Reads the header line; returns false (with an error) on an empty file.
bool ReadHeader(LineReader* reader, std::string_view* header) {
  while (reader->Next(header)) {
    if (!IsBlank(*header)) return true;
  }
  return false;
}

constexpr int64_t kMaxQuantity = int64_t{1} << 40;  // CPU milli / MiB bound: no overflow in sums

template <typename Enum>
std::optional<Enum> ParseName(std::string_view text,
                              std::initializer_list<std::pair<std::string_view, Enum>> names) {
  for (const auto& [name, value] : names) {
    if (text == name) return value;
  }
  return std::nullopt;
}

// Adds (`sign` +1) or takes away (-1) `pod` in the per-kind counts of `st`.
void Tally(const OpenbPod& pod, int sign, OpenbPodStats* st) {
  st->pods += sign;
  if (pod.num_gpu == 0) st->cpu_only += sign;
  if (pod.IsSharing()) st->sharing += sign;
  if (pod.num_gpu > 0 && !pod.IsSharing()) st->whole_gpu += sign;
  st->total_gpu_milli += sign * pod.TotalGpuMilli();
  if (!pod.gpu_spec.empty()) st->with_gpu_spec += sign;
  if (pod.memory_mib == 0) st->zero_memory += sign;
  if (pod.duplicate_spec) st->duplicate_spec += sign;
  if (pod.phase == OpenbPhase::kPending) st->pending += sign;
}

bool IsCensored(const OpenbPod& pod, const OpenbPodStats& st) {
  return pod.phase == OpenbPhase::kRunning && pod.deletion_time == st.trace_end;
}

}  // namespace

std::string_view OpenbQosName(OpenbQos qos) {
  switch (qos) {
    case OpenbQos::kLS:
      return "LS";
    case OpenbQos::kBE:
      return "BE";
    case OpenbQos::kBurstable:
      return "Burstable";
    case OpenbQos::kGuaranteed:
      return "Guaranteed";
    case OpenbQos::kUnknown:
      break;
  }
  return "";
}

std::string_view OpenbPhaseName(OpenbPhase phase) {
  switch (phase) {
    case OpenbPhase::kSucceeded:
      return "Succeeded";
    case OpenbPhase::kRunning:
      return "Running";
    case OpenbPhase::kPending:
      return "Pending";
    case OpenbPhase::kFailed:
      return "Failed";
    case OpenbPhase::kUnknown:
      break;
  }
  return "";
}

absl::StatusOr<OpenbNodeList> ParseOpenbNodes(std::string_view text, std::string_view file_name,
                                              bool skip_bad_rows) {
  OpenbNodeList list;
  list.file = std::string(file_name);
  RowErrors errors(file_name, skip_bad_rows);
  LineReader reader(text);
  std::string_view line;
  if (!ReadHeader(&reader, &line)) {
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ": empty node list"));
  }
  if (line != kNodeHeader) {
    return absl::InvalidArgumentError(absl::StrCat(
        errors.Locate(reader.line_number(), 1), ": not an openb node list: the header must be '",
        Av(kNodeHeader), "', got '", absl::CHexEscape(Av(line.substr(0, 120))), "'"));
  }
  std::map<std::string, int32_t, std::less<>> seen;  // name -> line
  while (reader.Next(&line)) {
    if (IsBlank(line)) continue;
    const int32_t line_number = reader.line_number();
    std::vector<CsvField> fields = SplitCsvLine(line);
    if (fields.size() != 5) {
      errors.Add(line_number, 1,
                 absl::StrCat("expected 5 columns (", Av(kNodeHeader), "), found ", fields.size()));
      continue;
    }
    Row row(std::move(fields), line_number, &errors);
    OpenbNode node;
    node.line = line_number;
    node.name = std::string(row.field(0).text);
    if (node.name.empty()) row.Error(1, "empty node name");
    std::optional<int64_t> cpu = row.Count(1, "cpu_milli", kMaxQuantity);
    std::optional<int64_t> mem = row.Count(2, "memory_mib", kMaxQuantity);
    std::optional<int64_t> gpus = row.Count(3, "gpu", kMaxGpusPerNode);
    node.model = std::string(row.field(4).text);
    if (gpus && *gpus > 0 && node.model.empty()) {
      row.Error(row.field(4).column, "a node with GPUs needs a model");
    }
    if (gpus && *gpus == 0 && !node.model.empty()) {
      row.Error(row.field(4).column,
                absl::StrCat("model '", node.model, "' given for a node without GPUs"));
    }
    if (!node.name.empty()) {
      auto [it, inserted] = seen.emplace(node.name, line_number);
      if (!inserted) {
        row.Error(1, absl::StrCat("duplicate node name '", node.name, "' (first on line ",
                                  it->second, ")"));
      }
    }
    if (!row.ok()) continue;
    node.cpu_milli = *cpu;
    node.memory_mib = *mem;
    node.gpus = static_cast<int32_t>(*gpus);
    if (node.gpus > 0) {
      ++list.gpu_nodes;
      list.total_gpus += node.gpus;
      auto m = std::find(list.models.begin(), list.models.end(), node.model);
      if (m == list.models.end()) {
        list.models.push_back(node.model);
        list.model_gpus.push_back(node.gpus);
      } else {
        list.model_gpus[static_cast<size_t>(m - list.models.begin())] += node.gpus;
      }
    }
    list.nodes.push_back(std::move(node));
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  list.skipped_rows = errors.count();
  list.warnings = errors.SkipWarnings();
  if (list.nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ": the node list has no nodes"));
  }
  return list;
}

absl::StatusOr<OpenbPodList> ParseOpenbPods(std::string_view text, std::string_view file_name,
                                            bool skip_bad_rows) {
  OpenbPodList list;
  list.file = std::string(file_name);
  RowErrors errors(file_name, skip_bad_rows);
  LineReader reader(text);
  std::string_view line;
  if (!ReadHeader(&reader, &line)) {
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ": empty pod list"));
  }
  size_t columns = 0;
  if (line == kPodHeader11) {
    columns = 11;
  } else if (line == kPodHeader5) {
    columns = 5;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        errors.Locate(reader.line_number(), 1), ": not an openb pod list: the header must be '",
        Av(kPodHeader11), "' or its first 5 columns, got '",
        absl::CHexEscape(Av(line.substr(0, 160))), "'"));
  }
  OpenbPodStats& st = list.stats;
  st.has_times = columns == 11;
  std::map<std::string, int32_t, std::less<>> seen;
  while (reader.Next(&line)) {
    if (IsBlank(line)) continue;
    const int32_t line_number = reader.line_number();
    std::vector<CsvField> fields = SplitCsvLine(line);
    if (fields.size() != columns) {
      errors.Add(
          line_number, 1,
          absl::StrCat("expected ", columns, " columns like the header, found ", fields.size()));
      continue;
    }
    Row row(std::move(fields), line_number, &errors);
    OpenbPod pod;
    pod.line = line_number;
    pod.name = std::string(row.field(0).text);
    if (pod.name.empty()) row.Error(1, "empty pod name");
    std::optional<int64_t> cpu = row.Count(1, "cpu_milli", kMaxQuantity);
    std::optional<int64_t> mem = row.Count(2, "memory_mib", kMaxQuantity);
    std::optional<int64_t> num = row.Count(3, "num_gpu", kMaxGpusPerNode);
    std::optional<int64_t> milli = ParseInt(row.field(4).text);
    const int32_t milli_column = row.field(4).column;
    if (!milli) {
      row.Error(milli_column,
                absl::StrCat("gpu_milli must be an integer, got '", Av(row.field(4).text), "'"));
    } else if (num) {
      if (*num == 0 && *milli != 0) {
        row.Error(milli_column,
                  absl::StrCat("a CPU-only pod (num_gpu 0) must have gpu_milli 0, got ", *milli));
      } else if (*num == 1 && (*milli < 1 || *milli > kMilliPerGpu)) {
        row.Error(milli_column, absl::StrCat("GPU share outside 1..1000 thousandths: ", *milli));
      } else if (*num > 1 && *milli != kMilliPerGpu) {
        row.Error(milli_column,
                  absl::StrCat("a pod of ", *num,
                               " GPUs takes whole GPUs: gpu_milli must be 1000, got ", *milli));
      }
    }
    bool duplicate_spec = false;
    if (columns == 11) {
      const CsvField& spec = row.field(5);
      pod.spec_column = spec.column;
      if (!spec.text.empty()) {
        std::string joined(spec.text);
        std::replace(joined.begin(), joined.end(), '|', ',');
        const std::vector<CsvField> models = SplitCsvLine(joined);
        for (const CsvField& m : models) {
          if (m.text.empty()) {
            row.Error(spec.column + m.column - 1, "empty model name in gpu_spec");
          } else if (std::find(pod.gpu_spec.begin(), pod.gpu_spec.end(), m.text) !=
                     pod.gpu_spec.end()) {
            duplicate_spec = true;
          } else {
            pod.gpu_spec.emplace_back(m.text);
          }
        }
      }
      std::optional<OpenbQos> qos =
          ParseName<OpenbQos>(row.field(6).text, {{"LS", OpenbQos::kLS},
                                                  {"BE", OpenbQos::kBE},
                                                  {"Burstable", OpenbQos::kBurstable},
                                                  {"Guaranteed", OpenbQos::kGuaranteed}});
      if (!qos) {
        row.Error(row.field(6).column, absl::StrCat("unknown qos '", Av(row.field(6).text),
                                                    "' (LS, BE, Burstable or Guaranteed)"));
      } else {
        pod.qos = *qos;
      }
      std::optional<OpenbPhase> phase =
          ParseName<OpenbPhase>(row.field(7).text, {{"Succeeded", OpenbPhase::kSucceeded},
                                                    {"Running", OpenbPhase::kRunning},
                                                    {"Pending", OpenbPhase::kPending},
                                                    {"Failed", OpenbPhase::kFailed}});
      if (!phase) {
        row.Error(row.field(7).column, absl::StrCat("unknown pod_phase '", Av(row.field(7).text),
                                                    "' (Succeeded, Running, Pending or Failed)"));
      } else {
        pod.phase = *phase;
      }
      std::optional<int64_t> created = row.Count(8, "creation_time", kMaxQuantity);
      std::optional<int64_t> deleted = row.Count(9, "deletion_time", kMaxQuantity);
      if (created && deleted && *deleted < *created) {
        row.Error(row.field(9).column,
                  absl::StrCat("deletion_time ", *deleted, " is before creation_time ", *created));
      }
      pod.creation_time = created;
      pod.deletion_time = deleted;
      if (row.field(10).text.empty()) {
        if (phase && *phase != OpenbPhase::kPending) {
          row.Error(row.field(10).column, "only Pending pods may lack scheduled_time");
        }
      } else {
        if (phase && *phase == OpenbPhase::kPending) {
          row.Error(row.field(10).column, "a Pending pod has no scheduled_time");
        }
        pod.scheduled_time = row.Count(10, "scheduled_time", kMaxQuantity);
      }
    }
    if (!pod.name.empty()) {
      auto [it, inserted] = seen.emplace(pod.name, line_number);
      if (!inserted) {
        row.Error(1, absl::StrCat("duplicate pod name '", pod.name, "' (first on line ", it->second,
                                  ")"));
      }
    }
    if (!row.ok()) continue;
    pod.cpu_milli = *cpu;
    pod.memory_mib = *mem;
    pod.num_gpu = static_cast<int32_t>(*num);
    pod.gpu_milli = static_cast<int32_t>(*milli);
    pod.duplicate_spec = duplicate_spec;
    Tally(pod, +1, &st);
    if (pod.deletion_time) st.trace_end = std::max(st.trace_end, *pod.deletion_time);
    list.pods.push_back(std::move(pod));
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  st.skipped_rows = errors.count();
  list.warnings = errors.SkipWarnings();
  if (list.pods.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ": the pod list has no pods"));
  }
  for (const OpenbPod& pod : list.pods) st.censored += IsCensored(pod, st) ? 1 : 0;
  return list;
}

absl::Status CheckPodSpecs(OpenbPodList* pods, const OpenbNodeList& nodes, bool drop_unrunnable) {
  RowErrors errors(pods->file, drop_unrunnable);
  std::string models;
  for (const std::string& m : nodes.models) absl::StrAppend(&models, models.empty() ? "" : ", ", m);
  std::vector<bool> runnable(pods->pods.size(), true);
  int64_t partly_unknown = 0;
  for (size_t i = 0; i < pods->pods.size(); ++i) {
    const OpenbPod& pod = pods->pods[i];
    int32_t known = 0;
    for (const std::string& m : pod.gpu_spec) {
      if (std::find(nodes.models.begin(), nodes.models.end(), m) != nodes.models.end()) ++known;
    }
    if (!pod.gpu_spec.empty() && known == 0) {
      runnable[i] = false;
      errors.Add(pod.line, pod.spec_column,
                 absl::StrCat("gpu_spec of pod '", pod.name, "' names no GPU model of ", nodes.file,
                              " (models there: ", models.empty() ? "none" : models, ")"));
    } else if (known < static_cast<int32_t>(pod.gpu_spec.size())) {
      ++partly_unknown;
    }
  }
  // Nothing changes unless every pod is runnable or the unrunnable ones are dropped.
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  if (errors.count() == static_cast<int64_t>(pods->pods.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        pods->file, ": no pod left: every gpu_spec names only models ", nodes.file, " lacks"));
  }
  OpenbPodStats& st = pods->stats;
  size_t keep = 0;
  for (size_t i = 0; i < pods->pods.size(); ++i) {
    if (!runnable[i]) {
      st.censored -= IsCensored(pods->pods[i], st) ? 1 : 0;
      Tally(pods->pods[i], -1, &st);
      continue;
    }
    if (keep != i) pods->pods[keep] = std::move(pods->pods[i]);
    ++keep;
  }
  pods->pods.resize(keep);
  st.unknown_spec_model = partly_unknown;
  st.dropped_unknown_spec = errors.count();
  for (std::string& w : errors.SkipWarnings()) pods->warnings.push_back(std::move(w));
  return absl::OkStatus();
}

absl::StatusOr<OpenbNodeList> ReadOpenbNodesFile(const std::string& path, bool skip_bad_rows) {
  std::string text;
  if (absl::Status s = ReadFileToString(path, &text); !s.ok()) return s;
  return ParseOpenbNodes(text, path, skip_bad_rows);
}

absl::StatusOr<OpenbPodList> ReadOpenbPodsFile(const std::string& path, bool skip_bad_rows) {
  std::string text;
  if (absl::Status s = ReadFileToString(path, &text); !s.ok()) return s;
  return ParseOpenbPods(text, path, skip_bad_rows);
}

}  // namespace hived::sim
