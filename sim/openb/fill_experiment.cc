#include "sim/openb/fill_experiment.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/policies/fgd_frag.h"

namespace hived::sim {
namespace {

constexpr int64_t kMaxWorkloadPods = 50'000'000;

void Shuffle(std::vector<FillPod>* pods, std::mt19937_64& rng) {
  for (size_t i = pods->size(); i > 1; --i) {
    std::swap((*pods)[i - 1], (*pods)[UniformIndex(rng, i)]);
  }
}

}  // namespace

void AddOpenbInputFlags(FlagParser* parser, OpenbInputFlags* flags, const char* pods_help) {
  parser->String("nodes", &flags->nodes_path, "PATH", "openb node list");
  parser->String("pods", &flags->pods_path, "PATH", pods_help);
  parser->Bool("skip-bad-rows", &flags->skip_bad_rows,
               "drop and count bad trace rows (and pods whose gpu_spec names no model of the "
               "node list) instead of failing");
  parser->String("out", &flags->out_dir, "DIR", "output directory");
}

std::string MissingOpenbInput(const OpenbInputFlags& flags) {
  if (flags.nodes_path.empty() || flags.pods_path.empty() || flags.out_dir.empty()) {
    return "--nodes, --pods and --out are required";
  }
  return "";
}

absl::StatusOr<FillInputs> LoadFillInputs(const OpenbInputFlags& flags) {
  absl::StatusOr<FillInputs> in =
      LoadFillInputs(flags.nodes_path, flags.pods_path, flags.skip_bad_rows);
  if (in.ok()) {
    for (const std::string& line : in->Warnings()) std::fprintf(stderr, "%s\n", line.c_str());
  }
  return in;
}

std::vector<std::string> FillInputs::Warnings() const {
  std::vector<std::string> out = nodes.warnings;
  out.insert(out.end(), pods.warnings.begin(), pods.warnings.end());
  return out;
}

absl::StatusOr<FillInputs> LoadFillInputs(const std::string& nodes_path,
                                          const std::string& pods_path, bool skip_bad_rows) {
  FillInputs in;
  absl::StatusOr<OpenbNodeList> nodes = ReadOpenbNodesFile(nodes_path, skip_bad_rows);
  if (!nodes.ok()) return nodes.status();
  in.nodes = std::move(*nodes);
  if (in.nodes.total_gpus == 0) {
    return absl::InvalidArgumentError(absl::StrCat(nodes_path, ": no node has GPUs"));
  }
  absl::StatusOr<OpenbPodList> pods = ReadOpenbPodsFile(pods_path, skip_bad_rows);
  if (!pods.ok()) return pods.status();
  in.pods = std::move(*pods);
  if (absl::Status s = CheckPodSpecs(&in.pods, in.nodes, skip_bad_rows); !s.ok()) return s;
  absl::StatusOr<std::vector<FillPod>> fill_pods = MakeFillPods(in.pods, in.nodes);
  if (!fill_pods.ok()) return fill_pods.status();
  in.fill_pods = std::move(*fill_pods);
  return in;
}

int32_t AssignFillShapes(std::vector<FillPod>* workload) {
  std::map<std::tuple<int64_t, int64_t, int32_t, int32_t>, int32_t> ids;
  for (FillPod& p : *workload) {
    auto [it, inserted] =
        ids.emplace(std::make_tuple(p.cpu_milli, p.memory_mib, p.gpu_milli, p.num_gpu),
                    static_cast<int32_t>(ids.size()));
    p.shape = it->second;
  }
  return static_cast<int32_t>(ids.size());
}

absl::StatusOr<std::vector<FillPod>> DrawFillWorkload(const std::vector<FillPod>& pods,
                                                      int64_t capacity_milli, double inflate,
                                                      FillWorkload how, uint64_t seed) {
  if (!(inflate > 0 && inflate <= 10)) {
    return absl::InvalidArgumentError(absl::StrCat("--inflate must be in (0, 10], got ", inflate));
  }
  int64_t demand = 0;
  for (const FillPod& p : pods) demand += p.TotalGpuMilli();
  if (demand == 0) {
    return absl::InvalidArgumentError(
        "the pod list requests no GPU: the workload could never reach its GPU demand");
  }
  const int64_t target =
      static_cast<int64_t>(std::ceil(inflate * static_cast<double>(capacity_milli)));
  // Expected pods: target / mean request; refuse absurd sizes before drawing.
  const double mean = static_cast<double>(demand) / static_cast<double>(pods.size());
  if (static_cast<double>(target) / mean > static_cast<double>(kMaxWorkloadPods)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the workload would need about ", static_cast<int64_t>(static_cast<double>(target) / mean),
        " pods (more than ", kMaxWorkloadPods, "); lower --inflate"));
  }
  std::mt19937_64 rng(seed);
  std::vector<FillPod> out;
  int64_t drawn = 0;
  if (how == FillWorkload::kArtifact) {
    out = pods;
    Shuffle(&out, rng);
    size_t keep = 0;
    while (keep < out.size() && drawn < target) drawn += out[keep++].TotalGpuMilli();
    out.resize(keep);
  }
  while (drawn < target) {
    const FillPod& p = pods[UniformIndex(rng, pods.size())];
    out.push_back(p);
    drawn += p.TotalGpuMilli();
  }
  if (how == FillWorkload::kSample) Shuffle(&out, rng);
  return out;
}

absl::StatusOr<FillRun> RunFill(const OpenbNodeList& nodes, const std::vector<FillPod>& pods,
                                const FillOptions& options, uint64_t seed) {
  FillCluster cluster(nodes);
  absl::StatusOr<std::vector<FillPod>> drawn =
      DrawFillWorkload(pods, cluster.capacity_milli(), options.inflate, options.workload, seed);
  if (!drawn.ok()) return drawn.status();
  std::vector<FillPod>& workload = *drawn;
  const int32_t shapes = AssignFillShapes(&workload);
  const std::vector<TypicalPod> typical = TypicalPods(workload, options.typical_coverage);
  const FragMeasure frag(typical, static_cast<int32_t>(nodes.models.size()));
  // The policy's own randomness is a second stream, so the workload of a seed is the same
  // for every policy.
  std::mt19937_64 policy_rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::unique_ptr<FillPolicy> policy =
      MakeFillPolicy(options.policy,
                     {&policy_rng, &frag, shapes, &workload, options.typical_coverage,
                      static_cast<int32_t>(nodes.models.size()), &nodes},
                     cluster.node_count());

  FillRun run;
  run.seed = seed;
  run.capacity_milli = cluster.capacity_milli();
  run.typical_pods = static_cast<int32_t>(typical.size());
  std::vector<double> node_frag(static_cast<size_t>(cluster.node_count()));
  double total_frag = 0;
  for (int32_t n = 0; n < cluster.node_count(); ++n) {
    const FillCluster::Node& nd = cluster.node(n);
    node_frag[static_cast<size_t>(n)] =
        frag.NodeFrag(nd.model, nd.cpu_left, cluster.gpu_left(n), nd.gpus);
    total_frag += node_frag[static_cast<size_t>(n)];
  }
  const double capacity = static_cast<double>(cluster.capacity_milli());
  const int32_t steps = static_cast<int32_t>(std::floor(options.inflate * 100 + 1e-9));
  int32_t next_step = 1;
  std::vector<int32_t> feasible;
  feasible.reserve(static_cast<size_t>(cluster.node_count()));
  // The library (`hived`) decides the node itself and ignores the list: the driver only
  // needs to know whether any node fits (ask it, or count the pod as unplaceable), so it
  // stops at the first fitting node and passes just that one.
  const bool library = options.policy == PolicyKind::kHived;
  for (const FillPod& pod : workload) {
    ++run.arrived_pods;
    run.arrived_milli += pod.TotalGpuMilli();
    feasible.clear();
    for (int32_t n = 0; n < cluster.node_count(); ++n) {
      if (!cluster.Fits(n, pod)) continue;
      feasible.push_back(n);
      if (library) break;
    }
    const FillChoice choice =
        feasible.empty() ? FillChoice() : policy->Choose(cluster, pod, feasible);
    if (choice.node < 0) {
      ++run.failed_pods;
      run.failed_milli += pod.TotalGpuMilli();
      ++run.failed_by_reason[static_cast<size_t>(feasible.empty() ? cluster.WhyNoFit(pod)
                                                                  : FillFailure::kDeclined)];
    } else {
      cluster.Place(pod, choice.node, choice.gpus);
      policy->Placed(cluster, pod, choice);
      ++run.placed_pods;
      const FillCluster::Node& nd = cluster.node(choice.node);
      double& f = node_frag[static_cast<size_t>(choice.node)];
      total_frag -= f;
      f = frag.NodeFrag(nd.model, nd.cpu_left, cluster.gpu_left(choice.node), nd.gpus);
      total_frag += f;
    }
    while (next_step <= steps &&
           static_cast<double>(run.arrived_milli) >= next_step * capacity / 100) {
      FillCurvePoint point;
      point.arrived_demand = next_step / 100.0;
      point.arrived_pods = run.arrived_pods;
      point.allocation_ratio = cluster.allocation_ratio();
      point.fragmentation = total_frag / capacity;
      const double idle = capacity - static_cast<double>(cluster.allocated_milli());
      point.frag_of_idle = idle > 0 ? total_frag / idle : 0;
      run.curve.push_back(point);
      ++next_step;
    }
  }
  if (absl::Status s = cluster.CheckInvariants(); !s.ok()) return s;
  if (absl::Status s = policy->Check(); !s.ok()) return s;
  if (run.placed_pods + run.failed_pods != run.arrived_pods) {
    return absl::InternalError("fill: placed + failed != arrived pods");
  }
  run.allocated_milli = cluster.allocated_milli();
  run.allocation_ratio = cluster.allocation_ratio();
  run.fragmentation = total_frag / capacity;
  return run;
}

}  // namespace hived::sim
