// A changed cluster config applied off to the side (sharing/layered_config_change.h).
#include "sharing/layered_config_change.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/internal/status_macros.h"

namespace hived {
namespace {

// At most this many stranded groups are named in a refusal (the count is always given).
constexpr size_t kMaxNamedGroups = 10;

}  // namespace

absl::StatusOr<std::unique_ptr<LayeredScheduler>> BuildConfigChange(
    const LayeredScheduler& current, const ClusterSpec& new_spec, const ApplyConfigOptions& options,
    RestoreReport* report) {
  RestoreReport local;
  RestoreReport& out = report != nullptr ? *report : local;
  out = RestoreReport();
  const std::string saved = current.SaveState();
  RestoreOptions restore;
  restore.spec_mismatch = SpecMismatch::kRestoreAnyway;
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<LayeredScheduler> next,
                         LayeredScheduler::Restore(new_spec, saved, &out, restore));

  std::vector<const RestoreReport::Group*> stranded;
  for (const RestoreReport::Group& g : out.groups) {
    if (g.outcome != RestoreOutcome::kKept) stranded.push_back(&g);
  }
  if (!stranded.empty() && options.stranded == ApplyConfigOptions::Stranded::kRefuse) {
    std::string message = absl::StrCat("ApplyConfig: the new config would strand ", stranded.size(),
                                       " running group(s); nothing changed: ");
    for (size_t i = 0; i < stranded.size() && i < kMaxNamedGroups; ++i) {
      const RestoreReport::Group& g = *stranded[i];
      absl::StrAppend(&message, i == 0 ? "" : "; ", "group ", g.name, " would be ",
                      RestoreOutcomeName(g.outcome), " (", g.reason, ")");
    }
    if (stranded.size() > kMaxNamedGroups) {
      absl::StrAppend(&message, "; and ", stranded.size() - kMaxNamedGroups, " more");
    }
    absl::StrAppend(&message,
                    " (release them first, or pass ApplyConfigOptions::Stranded::kApply)");
    return absl::FailedPreconditionError(message);
  }

  // Reservations are not in a saved state: each is given up, as an expired one would be.
  for (const GroupStatus& g : current.Groups()) {
    if (g.state != GroupState::kReserved && g.state != GroupState::kPreempting) continue;
    RestoreReport::Group dropped;
    dropped.name = g.name;
    dropped.outcome = RestoreOutcome::kDropped;
    dropped.reason = absl::StrCat("its reservation (", GroupStateName(g.state),
                                  ") is not carried over a config change: Schedule it again");
    out.groups.push_back(std::move(dropped));
  }

  if (absl::Status s = next->CheckInvariants(); !s.ok()) {
    return absl::InternalError(absl::StrCat(
        "ApplyConfig: the new state breaks an invariant; nothing changed: ", s.message()));
  }
  return next;
}

}  // namespace hived
