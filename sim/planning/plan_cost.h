// sim/planning/plan_cost.h: money and GPU speed in `hived-sim plan` (internal to
// sim/planning/).
//
// Prices: `--price TYPE=USD,...`, USD per GPU-hour of leaf type TYPE (K80=0.45,A100=3.1). A
// VC's cost is its reserved GPUs x its leaf type's price (a VC spanning types sums them).
// Speeds: `--gpu-speed TYPE=F,...`, F relative to 1 for a type not listed (F > 1 = faster).
// A VC moved to another type (`--move-vc VC=T`, or each of `--try-types`) runs its jobs
// speed(new) / speed(old) times as fast: the probes get `--vc-speed VC=F` (the trace
// transform of sim/trace/trace_speed.h), so durations shrink and the engine is unchanged.
// `--try-types P1,P2,...` (with --vc): the VC is planned on each cell type path P (moved
// there, sized in P cells) and the plans are ranked by cost (by GPUs without prices); the
// cheapest that meets the target is the answer. Ties: the earlier type in the list.
//
// Thread safety: single-threaded; the probes run as child processes.
#ifndef HIVED_SIM_PLANNING_PLAN_COST_H_
#define HIVED_SIM_PLANNING_PLAN_COST_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "sim/planning/plan_search.h"

namespace hived::sim {

struct CostModel {
  std::vector<std::pair<std::string, double>> prices;  // leaf type -> USD per GPU-hour
  std::vector<std::pair<std::string, double>> speeds;  // leaf type -> speed factor
  // USD per hour of `gpus` GPUs of `leaf`; none when prices are given but not for `leaf`,
  // or no prices are given.
  std::optional<double> UsdPerHour(const std::string& leaf, int64_t gpus) const;
};

// Parses `--price TYPE=USD,...` (USD >= 0, each type once). kInvalidArgument naming the item.
absl::StatusOr<std::vector<std::pair<std::string, double>>> ParsePrices(const std::string& text);

// The leaf type of the VC's reservation in `unit_type` (a dotted path), e.g. "P100".
std::string VcLeafType(const ClusterSpec& spec, const std::string& unit_type);

// The `--vc-speed` items (as "VC=F") for the VCs `moves` moves, given the unmoved config
// `before` and the moved one `after`: F = speed(leaf after) / speed(leaf before), omitted
// when 1. Errors: kInvalidArgument when a moved VC reserves several leaf types before.
absl::StatusOr<std::vector<std::string>> MovedVcSpeeds(
    const CostModel& cost, const ClusterSpec& before, const ClusterSpec& after,
    const std::vector<std::pair<std::string, std::string>>& moves);

// One type of --try-types: the VC moved there, its plan, and what it costs.
struct TypeOption {
  std::string path;  // the cell type path sized in
  std::string leaf;
  double speed = 1;  // the jobs' speed-up over the VC's current type
  PlanContext ctx;   // the base moved there, the probe flags with --move-vc and --vc-speed
  VcPlan plan;
  std::optional<double> usd_per_hour;  // at the chosen size
};

// Plans `vc` on each of `paths` (see the header comment), probes under ctx.out/type-N/.
// `best` is the index of the cheapest option meeting the target, or -1. Errors: a path that
// is not in the config (naming it), a probe that fails, as PlanOneVc.
struct TypeChoice {
  std::vector<TypeOption> options;
  int best = -1;
};
absl::StatusOr<TypeChoice> PlanAcrossTypes(const PlanContext& ctx, const CostModel& cost,
                                           const std::string& vc,
                                           const std::vector<std::string>& paths, int64_t min_size,
                                           int64_t max_size);

// The ranking table of a TypeChoice, cheapest first, the chosen one marked.
std::string TypeChoiceReport(const PlanContext& ctx, const std::string& vc,
                             const TypeChoice& choice);

// One line of the cost of a sized VC: "  cost: 256 P100 GPUs x $1.20 = $307.20/h (now ...)";
// empty without prices.
std::string CostLine(const CostModel& cost, const std::string& leaf, int64_t gpus,
                     int64_t now_gpus);

// `compare --price`: each VC's reserved GPUs by leaf type in the config file `config`
// (virtual cells, and pinned cells by the chain holding them). Errors: kInvalidArgument when
// the config does not load, naming it.
absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>> VcGpusByType(
    const std::string& config);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLAN_COST_H_
