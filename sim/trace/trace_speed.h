// sim/trace/trace_speed.h: faster (or slower) GPUs as shorter (or longer) jobs, for the
// trace transform `--vc-speed VC=F` (sim/trace/trace_transform.h) and for `plan --gpu-speed`
// (sim/planning/plan.h), which turns per-type speeds into per-VC factors when a VC moves.
//
// "VC's jobs run F times as fast": every job of the VC (pinned ones too: the whole VC is
// assumed to run on the new hardware) has its duration divided by F, rounded to the nearest
// second and at least 1 s. Submit times, gang sizes and ids are kept. F = 1 changes nothing;
// F > 1 is faster, F < 1 slower. Deterministic.
//
// Example:
//   absl::StatusOr<std::vector<std::pair<std::string, double>>> f =
//       ParseSpeedFactors("vc-speed", "prod=2");     // usage errors
//   ApplyVcSpeeds(*f, &trace);                       // prod's durations halved
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_SPEED_H_
#define HIVED_SIM_TRACE_TRACE_SPEED_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/trace/job.h"

namespace hived::sim {

// The largest factor accepted either way (1000x faster or 1000x slower).
inline constexpr double kMaxSpeedFactor = 1000;

// Parses "NAME=F,NAME=F" (NAME a VC or a GPU type, F in [1/1000, 1000]), each NAME once.
// kInvalidArgument naming `flag` and the bad item.
absl::StatusOr<std::vector<std::pair<std::string, double>>> ParseSpeedFactors(
    const std::string& flag, const std::string& text);

// Divides the duration of every job of each listed VC by its factor (nearest second, >= 1).
// Errors: kInvalidArgument naming a VC no job has (and the VCs present).
absl::Status ApplyVcSpeeds(const std::vector<std::pair<std::string, double>>& speeds, Trace* trace);

// The factor by which a VC's jobs speed up when it moves from GPUs of leaf type `from` to
// leaf type `to`, given per-type speeds (a type not listed has speed 1).
double SpeedRatio(const std::vector<std::pair<std::string, double>>& type_speeds,
                  const std::string& from, const std::string& to);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_SPEED_H_
