#include "sim/trace/trace_transform.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/trace_growth.h"
#include "sim/trace/trace_hash.h"
#include "sim/trace/trace_speed.h"

namespace hived::sim {
namespace {

std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    out.emplace_back(item);
  }
  return out;
}

absl::Status BadItem(const char* flag, const std::string& item, const char* expected) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": '", item, "' is not ", expected));
}

// Splits "K=V"; false when there is no '=' or either side is empty.
bool KeyValue(const std::string& item, std::string* key, std::string* value) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) return false;
  *key = item.substr(0, eq);
  *value = item.substr(eq + 1);
  return true;
}

// "VC" or "VC:KEY=V,..."; the options after ':' are comma separated, so the flag takes one
// tenant per ';'. Keys: jobs, load, seed (relative); per-day, sizes, max-gpus (absolute);
// like, scale (a copy of a VC's jobs).
absl::StatusOr<TenantSpec> ParseTenant(const std::string& text) {
  constexpr char kForms[] =
      "VC[:jobs=N,load=L,seed=S], VC:per-day=N[,jobs=M,sizes=G:W/G:W,max-gpus=G,seed=S] or "
      "VC:like=X[,scale=K,seed=S]";
  TenantSpec t;
  const size_t colon = text.find(':');
  t.vc = text.substr(0, colon);
  if (t.vc.empty()) return BadItem("add-tenant", text, kForms);
  if (colon == std::string::npos) return t;
  bool load_given = false, scale_given = false;
  for (const std::string& item : Items(text.substr(colon + 1))) {
    std::string k, v;
    if (!KeyValue(item, &k, &v)) return BadItem("add-tenant", item, "KEY=VALUE");
    if (k == "jobs") {
      const std::optional<int64_t> n = ParseInt(v);
      if (!n || *n < 1 || *n > kMaxGeneratedJobs) {
        return BadItem("add-tenant", item, "jobs=1..20000000 (kMaxGeneratedJobs)");
      }
      t.jobs = *n;
      t.jobs_given = true;
    } else if (k == "load") {
      const std::optional<double> l = ParseDouble(v);
      if (!l || !(*l > 0) || *l > 1000) return BadItem("add-tenant", item, "load=L with L > 0");
      t.load = *l;
      load_given = true;
    } else if (k == "seed") {
      const std::optional<int64_t> s = ParseInt(v);
      if (!s || *s < 0) return BadItem("add-tenant", item, "seed=S with S >= 0");
      t.seed = static_cast<uint64_t>(*s);
    } else if (k == "per-day") {
      const std::optional<double> n = ParseDouble(v);
      if (!n || !(*n > 0) || *n > 1e7) {
        return BadItem("add-tenant", item, "per-day=N with 0 < N <= 10000000 jobs a day");
      }
      t.per_day = *n;
    } else if (k == "max-gpus") {
      const std::optional<int64_t> n = ParseInt(v);
      if (!n || *n < 1 || *n > 1 << 20) return BadItem("add-tenant", item, "max-gpus=G >= 1");
      t.max_gpus = *n;
    } else if (k == "sizes") {
      for (absl::string_view entry : absl::StrSplit(v, '/')) {
        const std::vector<std::string> gw = absl::StrSplit(entry, absl::MaxSplits(':', 1));
        const std::optional<int64_t> g = ParseInt(gw[0]);
        const std::optional<double> w =
            gw.size() == 2 ? ParseDouble(gw[1]) : std::optional<double>();
        if (!g || *g < 1 || *g > 1 << 20 || !w || !(*w >= 0) || *w > 1e12) {
          return BadItem("add-tenant", item,
                         "sizes=G:W/G:W... (gang GPUs G >= 1, weight W >= 0; e.g. 1:90/8:10)");
        }
        t.sizes.emplace_back(static_cast<int32_t>(*g), *w);
      }
    } else if (k == "like") {
      t.like = v;
    } else if (k == "scale") {
      const std::optional<double> x = ParseDouble(v);
      if (!x || !(*x > 0) || *x > kMaxVcLoadScale) {
        return BadItem("add-tenant", item, "scale=K with 0 < K <= 1000");
      }
      t.scale = *x;
      scale_given = true;
    } else {
      return BadItem("add-tenant", item,
                     "one of jobs=, load=, seed=, per-day=, sizes=, max-gpus=, like=, scale=");
    }
  }
  auto conflict = [&](const char* why) {
    return absl::InvalidArgumentError(absl::StrCat("--add-tenant: '", text, "': ", why));
  };
  if (!t.like.empty() &&
      (t.jobs_given || load_given || t.per_day > 0 || !t.sizes.empty() || t.max_gpus > 0)) {
    return conflict("like= copies a VC's jobs; it takes only scale= and seed=");
  }
  if (scale_given && t.like.empty()) return conflict("scale= goes with like=VC");
  if (t.per_day > 0 && load_given) {
    return conflict("per-day= (absolute) and load= (relative to the VC's size) exclude each other");
  }
  if (t.per_day == 0 && (!t.sizes.empty() || t.max_gpus > 0)) {
    return conflict("sizes= and max-gpus= go with per-day=N");
  }
  if (t.sizes.size() > 64) return conflict("sizes= has more than 64 entries");
  bool any = false;
  for (const auto& [g, w] : t.sizes) any |= w > 0;
  if (!t.sizes.empty() && !any) return conflict("every weight of sizes= is 0");
  return t;
}

// The generated jobs of an absolute tenant (per-day=): independent of the VC's size.
absl::StatusOr<Trace> AbsoluteTenantJobs(const TenantSpec& tenant, const SpecInfo& info,
                                         uint64_t seed, const std::vector<TraceJob>& real) {
  GenTraceOptions o;
  o.arrival_rate_per_hour = tenant.per_day / 24;
  o.max_gang_gpus = tenant.max_gpus > 0 ? tenant.max_gpus : 8;
  o.size_weights = tenant.sizes;
  o.seed = tenant.seed.value_or(seed);
  o.vc_weights = {{tenant.vc, 1.0}};
  Time first = 0, last = 0;
  if (!real.empty()) {
    first = real.front().submit_time;
    last = real.back().submit_time;
  }
  o.jobs = tenant.jobs_given ? tenant.jobs
                             : std::clamp<int64_t>(
                                   static_cast<int64_t>(std::llround(
                                       tenant.per_day * static_cast<double>(last - first) / 86400)),
                                   1, kMaxGeneratedJobs);
  absl::StatusOr<Trace> generated = GenerateTrace(info, o);
  if (!generated.ok()) return generated.status();
  for (TraceJob& j : generated->jobs) j.submit_time += first;
  return generated;
}

// The VCs present in the trace, in order of first job.
std::vector<std::string> TraceVcs(const Trace& trace) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const TraceJob& j : trace.jobs) {
    if (seen.insert(j.vc.str()).second) out.push_back(j.vc.str());
  }
  return out;
}

absl::Status RequirePresent(const char* flag, const std::string& vc,
                            const std::set<std::string>& present, const Trace& trace) {
  if (present.count(vc) > 0) return absl::OkStatus();
  std::vector<std::string> vcs = TraceVcs(trace);
  if (vcs.size() > 30) {
    vcs.resize(30);
    vcs.push_back("...");
  }
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": no job of the trace has VC '", vc,
                                                 "' (VCs with jobs: ", absl::StrJoin(vcs, ", "),
                                                 ")"));
}

// The (VC, value) items of a transform as a map, each VC required to have jobs.
template <typename V>
absl::StatusOr<std::map<std::string, V>> ByPresentVc(
    const char* flag, const std::vector<std::pair<std::string, V>>& items, const Trace& trace) {
  std::set<std::string> present;
  for (const TraceJob& j : trace.jobs) present.insert(j.vc.str());
  std::map<std::string, V> out;
  for (const auto& [vc, value] : items) {
    if (absl::Status s = RequirePresent(flag, vc, present, trace); !s.ok()) return s;
    out[vc] = value;
  }
  return out;
}

}  // namespace

void RegisterTraceTransformFlags(FlagParser* parser, TraceTransformFlags* flags) {
  parser->String("only-vcs", &flags->only_vcs, "VC,...",
                 "trace transform: keep only these VCs' jobs");
  parser->String("rename-vcs", &flags->rename_vcs, "OLD=NEW,...",
                 "trace transform: rename VCs (several OLD to one NEW merge them)");
  parser->String("add-tenant", &flags->add_tenant, "VC[:jobs=N,load=L,seed=S];...",
                 "trace transform: add gen-trace jobs for VC (a VC of the config); load= is "
                 "relative to VC's size, VC:per-day=N[,sizes=1:90/8:10,max-gpus=G] absolute, "
                 "VC:like=X[,scale=K] copies VC X's jobs x K");
  parser->String("bootstrap", &flags->bootstrap, "days|weeks|jobs",
                 "trace transform: resample the trace, seeded by --seed (days or weeks of "
                 "arrivals, or single jobs, drawn with replacement), so seeds give intervals "
                 "that include the workload's own variation");
  parser->String("vc-load-scale", &flags->vc_load_scale, "VC=K,...",
                 "trace transform: VC's jobs x K over the same days (per-VC growth; K < 1 "
                 "thins them)");
  parser->String("vc-priority", &flags->vc_priority, "VC=P,...",
                 "trace transform: every job of VC gets priority P (-1..1000)");
  parser->String("vc-opportunistic", &flags->vc_opportunistic, "VC=F,...",
                 "trace transform: a fraction F of VC's jobs become opportunistic");
  parser->String("move-vc", &flags->move_vc, "VC=TYPE,...",
                 "config + trace transform: VC's cells become the same GPUs of cell type TYPE "
                 "(a path or a leaf type, e.g. A100), cells added as needed; its typed jobs "
                 "ask for TYPE's leaf type");
  parser->String("vc-speed", &flags->vc_speed, "VC=F,...",
                 "trace transform: VC's jobs run F x as fast (durations / F; 2 = a GPU twice "
                 "as fast)");
}

absl::StatusOr<TraceTransforms> ParseTraceTransforms(const TraceTransformFlags& flags) {
  TraceTransforms t;
  t.only_vcs = Items(flags.only_vcs);
  for (const std::string& item : Items(flags.rename_vcs)) {
    std::string from, to;
    if (!KeyValue(item, &from, &to)) return BadItem("rename-vcs", item, "OLD=NEW");
    t.rename_vcs.emplace_back(from, to);
  }
  for (absl::string_view text : absl::StrSplit(flags.add_tenant, ';', absl::SkipWhitespace())) {
    absl::StatusOr<TenantSpec> tenant = ParseTenant(std::string(text));
    if (!tenant.ok()) return tenant.status();
    t.tenants.push_back(std::move(*tenant));
  }
  for (const std::string& item : Items(flags.vc_priority)) {
    std::string vc, value;
    std::optional<int64_t> p;
    if (KeyValue(item, &vc, &value)) p = ParseInt(value);
    if (!p || *p < -1 || *p > 1000) return BadItem("vc-priority", item, "VC=P with P in -1..1000");
    t.vc_priority.emplace_back(vc, static_cast<Priority>(*p));
  }
  for (const std::string& item : Items(flags.vc_opportunistic)) {
    std::string vc, value;
    std::optional<double> f;
    if (KeyValue(item, &vc, &value)) f = ParseDouble(value);
    if (!f || !(*f >= 0 && *f <= 1)) {
      return BadItem("vc-opportunistic", item, "VC=F with F in [0, 1]");
    }
    t.vc_opportunistic.emplace_back(vc, *f);
  }
  for (const std::string& item : Items(flags.move_vc)) {
    std::string vc, type;
    if (!KeyValue(item, &vc, &type)) return BadItem("move-vc", item, "VC=TYPE");
    t.move_vcs.emplace_back(vc, type);
  }
  for (const std::string& item : Items(flags.vc_load_scale)) {
    std::string vc, value;
    std::optional<double> k;
    if (KeyValue(item, &vc, &value)) k = ParseDouble(value);
    if (!k || !(*k > 0) || *k > kMaxVcLoadScale) {
      return BadItem("vc-load-scale", item, "VC=K with 0 < K <= 1000 (1.5 = 50% more jobs)");
    }
    for (const auto& [other, x] : t.vc_load_scale) {
      if (other == vc) return BadItem("vc-load-scale", item, "given once per VC");
    }
    t.vc_load_scale.emplace_back(vc, *k);
  }
  absl::StatusOr<std::vector<std::pair<std::string, double>>> speeds =
      ParseSpeedFactors("vc-speed", flags.vc_speed);
  if (!speeds.ok()) return speeds.status();
  t.vc_speeds = std::move(*speeds);
  if (!flags.bootstrap.empty()) {
    if (flags.bootstrap == "days") {
      t.bootstrap_block = 86400;
    } else if (flags.bootstrap == "weeks") {
      t.bootstrap_block = 7 * 86400;
    } else if (flags.bootstrap == "jobs") {
      t.bootstrap_block = 0;
    } else {
      return BadItem("bootstrap", flags.bootstrap, "days, weeks or jobs");
    }
  }
  return t;
}

std::vector<std::string> TraceTransformArgs(const TraceTransformFlags& flags) {
  std::vector<std::string> out;
  const std::pair<const char*, const std::string*> all[] = {
      {"only-vcs", &flags.only_vcs},
      {"rename-vcs", &flags.rename_vcs},
      {"add-tenant", &flags.add_tenant},
      {"vc-priority", &flags.vc_priority},
      {"vc-opportunistic", &flags.vc_opportunistic},
      {"move-vc", &flags.move_vc},
      {"vc-load-scale", &flags.vc_load_scale},
      {"bootstrap", &flags.bootstrap},
      {"vc-speed", &flags.vc_speed}};
  for (const auto& [name, value] : all) {
    if (!value->empty()) out.push_back(absl::StrCat("--", name, "=", *value));
  }
  return out;
}

absl::Status ApplyTraceTransforms(const TraceTransforms& t, const ClusterSpec& spec, uint64_t seed,
                                  Trace* trace) {
  if (t.empty()) return absl::OkStatus();
  std::vector<TraceJob>& jobs = trace->jobs;
  auto present = [&] {
    std::set<std::string> vcs;
    for (const TraceJob& j : jobs) vcs.insert(j.vc.str());
    return vcs;
  };
  if (t.bootstrap_block >= 0) BootstrapTrace(t.bootstrap_block, seed, trace);
  if (!t.only_vcs.empty()) {
    const std::set<std::string> vcs = present();
    for (const std::string& vc : t.only_vcs) {
      if (absl::Status s = RequirePresent("only-vcs", vc, vcs, *trace); !s.ok()) return s;
    }
    const std::set<std::string> keep(t.only_vcs.begin(), t.only_vcs.end());
    jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                              [&](const TraceJob& j) { return keep.count(j.vc.str()) == 0; }),
               jobs.end());
  }
  if (!t.rename_vcs.empty()) {
    absl::StatusOr<std::map<std::string, std::string>> rename =
        ByPresentVc("rename-vcs", t.rename_vcs, *trace);
    if (!rename.ok()) return rename.status();
    for (TraceJob& j : jobs) {
      auto it = rename->find(j.vc.str());
      if (it != rename->end()) j.vc = trace->Intern(it->second);
    }
  }
  for (const TenantSpec& tenant : t.tenants) {
    const SpecInfo info(spec);
    if (info.VcIndex(tenant.vc) < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--add-tenant: VC '", tenant.vc,
          "' is not in the config (add it with sweep --vc-cells VC@TYPE=N, or edit the config)"));
    }
    absl::StatusOr<Trace> generated;
    if (!tenant.like.empty()) {
      if (absl::Status s = RequirePresent("add-tenant like=", tenant.like, present(), *trace);
          !s.ok()) {
        return s;
      }
      generated = Trace();
      generated->jobs = GrowVcJobs(jobs, tenant.like, tenant.scale, tenant.seed.value_or(seed));
      for (TraceJob& j : generated->jobs) {
        j.vc = generated->Intern(tenant.vc);
        j.pinned_cell = generated->Intern("");  // the new VC has none of X's pinned cells
      }
    } else if (tenant.per_day > 0) {
      generated = AbsoluteTenantJobs(tenant, info, seed, jobs);
    } else {
      GenTraceOptions o;
      o.jobs = tenant.jobs;
      o.load = tenant.load;
      o.seed = tenant.seed.value_or(seed);
      o.vc_weights = {{tenant.vc, 1.0}};
      generated = GenerateTrace(info, o);
    }
    if (!generated.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--add-tenant ", tenant.vc, ": ", generated.status().message()));
    }
    const size_t real = jobs.size();
    for (TraceJob& j : generated->jobs) {
      j.id = absl::StrCat(tenant.vc, "-", Av(j.id));
      // Its names are the generated trace's, which goes: the trace's own from now on.
      j.vc = trace->Intern(j.vc);
      j.gpu_type = trace->Intern(j.gpu_type);
      j.pinned_cell = trace->Intern(j.pinned_cell);
      jobs.push_back(std::move(j));
    }
    std::inplace_merge(
        jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(real), jobs.end(),
        [](const TraceJob& a, const TraceJob& b) { return a.submit_time < b.submit_time; });
  }
  if (!t.vc_load_scale.empty()) {
    absl::StatusOr<std::map<std::string, double>> scale =
        ByPresentVc("vc-load-scale", t.vc_load_scale, *trace);
    if (!scale.ok()) return scale.status();
    for (const auto& [vc, k] : t.vc_load_scale) ScaleVcLoad(vc, k, seed, trace);
  }
  if (!t.vc_priority.empty()) {
    absl::StatusOr<std::map<std::string, Priority>> priority =
        ByPresentVc("vc-priority", t.vc_priority, *trace);
    if (!priority.ok()) return priority.status();
    for (TraceJob& j : jobs) {
      auto it = priority->find(j.vc.str());
      if (it != priority->end()) j.priority = it->second;
    }
  }
  if (!t.vc_opportunistic.empty()) {
    absl::StatusOr<std::map<std::string, double>> share =
        ByPresentVc("vc-opportunistic", t.vc_opportunistic, *trace);
    if (!share.ok()) return share.status();
    std::map<std::string, uint64_t> ordinal;
    for (TraceJob& j : jobs) {
      auto it = share->find(j.vc.str());
      if (it == share->end()) continue;
      const uint64_t k = ordinal[j.vc.str()]++;
      const uint64_t h = Mix(Mix(seed ^ HashString(j.vc)) + k);
      const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
      if (u < it->second) j.priority = kOpportunisticPriority;
    }
  }
  for (const auto& [vc, target] : t.move_vcs) {
    // On the moved config this changes nothing and returns the target's leaf type.
    ClusterSpec moved = spec;
    absl::StatusOr<std::string> leaf = MoveVc(&moved, vc, target);
    if (!leaf.ok()) return leaf.status();
    for (TraceJob& j : jobs) {
      // Pinned jobs stay on their pinned cells (hardware that does not move); untyped jobs
      // take any type the VC has, which is now only the target's.
      if (j.vc == vc && j.pinned_cell.empty() && !j.gpu_type.empty()) {
        j.gpu_type = trace->Intern(*leaf);
      }
    }
  }
  if (absl::Status s = ApplyVcSpeeds(t.vc_speeds, trace); !s.ok()) return s;
  if (jobs.empty()) {
    return absl::InvalidArgumentError("the trace transforms leave no jobs to replay");
  }
  return absl::OkStatus();
}

absl::Status ApplyVcMoves(const TraceTransforms& t, ClusterSpec* spec) {
  for (const auto& [vc, target] : t.move_vcs) {
    if (absl::StatusOr<std::string> leaf = MoveVc(spec, vc, target); !leaf.ok()) {
      return absl::Status(leaf.status().code(), absl::StrCat("--move-vc ", vc, "=", target, ": ",
                                                             leaf.status().message()));
    }
  }
  return absl::OkStatus();
}

std::string PinnedCellProblem(const SpecInfo& info, const TraceJob& j) {
  const int32_t vc = info.VcIndex(j.vc);
  // A job of a VC the config lacks is rejected at submission for that reason.
  if (j.pinned_cell.empty() || vc < 0) return "";
  const int32_t owner = info.PinnedVc(j.pinned_cell);
  if (info.PinnedGpus(j.pinned_cell) == 0) {
    return absl::StrCat("pinned cell '", j.pinned_cell.str(), "' is not in the config");
  }
  if (owner != vc) {
    return absl::StrCat("pinned cell '", j.pinned_cell.str(), "' belongs to ",
                        owner < 0 ? "no VC" : absl::StrCat("VC ", info.vc_name(owner)),
                        ", not to the job's VC ", j.vc.str());
  }
  return "";
}

absl::Status CheckPinnedCells(const SpecInfo& info, bool skip_bad_rows, Trace* trace) {
  RowErrors errors(trace->file.empty() ? "trace" : trace->file, skip_bad_rows);
  std::vector<TraceJob>& jobs = trace->jobs;
  std::vector<bool> bad(jobs.size(), false);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    const std::string why = PinnedCellProblem(info, j);
    if (why.empty()) continue;
    errors.Add(j.line, j.pinned_column, why);
    bad[i] = true;
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  if (errors.empty()) return absl::OkStatus();
  size_t kept = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (bad[i]) continue;
    if (kept != i) jobs[kept] = std::move(jobs[i]);
    ++kept;
  }
  jobs.resize(kept);
  trace->skipped_rows += errors.count();
  for (std::string& w : errors.SkipWarnings()) trace->warnings.push_back(std::move(w));
  if (jobs.empty()) return absl::InvalidArgumentError("every trace row names a bad pinned cell");
  return absl::OkStatus();
}

}  // namespace hived::sim
