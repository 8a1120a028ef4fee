// The replay's jobs (sim/engine/replay.h): read from the feed as the clock reaches them,
// kept in the slot table while live, handed to the sink once final.
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/engine/replay.h"

namespace hived::sim::replay_internal {

absl::StatusOr<bool> Replay::Pull() {
  absl::StatusOr<const TraceJob*> t = feed_->Next();
  if (!t.ok()) return t.status();
  if (*t == nullptr) {
    next_ = -1;
    if (pulled_ != expected_jobs_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the trace changed while it was replayed: ", pulled_, " jobs, not ", expected_jobs_));
    }
    return false;
  }
  const TraceJob& row = **t;
  if (pulled_ >= expected_jobs_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the trace changed while it was replayed: more than ", expected_jobs_, " jobs"));
  }
  if (pulled_ > 0 && row.submit_time < last_pulled_time_) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", row.id.str(), " (line ", row.line, ") is submitted at ",
                     row.submit_time, ", before the job read before it (", last_pulled_time_,
                     "): a replay reads jobs in submit-time order"));
  }
  last_pulled_time_ = row.submit_time;
  const JobIndex j = pulled_++;
  int32_t place;
  if (free_.empty()) {
    place = static_cast<int32_t>(live_.size());
    live_.emplace_back();
  } else {
    place = free_.back();
    free_.pop_back();
  }
  slot_.Set(j, place);
  LiveJob& live = live_[static_cast<size_t>(place)];
  resolver_->Resolve(row, j, &live.job, &reason_);
  if (!reason_.empty()) live.rec.rare.mutable_get().reason = reason_;
  live.rec.submit = row.submit_time;
  live.rec.remaining = row.duration;
  live.id = row.id;
  live.vc_name = row.vc;
  // Shapes: jobs with equal members, leaf type and priority are interchangeable. Numbered
  // in trace order, so a shape's number does not depend on when jobs leave.
  auto [it, inserted] = shapes_.try_emplace(
      ShapeKey{live.job.priority, live.job.gpu_type, live.job.pinned_cell, live.job.members},
      static_cast<int32_t>(shapes_.size()));
  live.shape = it->second;
  next_ = j;
  return true;
}

FinishedJob Replay::Finished(JobIndex j) const {
  const LiveJob& live = Live(j);
  FinishedJob f;
  f.index = j;
  f.id = live.id.view();
  f.vc = live.vc_name;
  f.job = &live.job;
  f.record = &live.rec;
  f.window_start = window_start_;
  f.window_end = std::max(window_start_, window_end_);
  f.run_end = ended_ ? r_.end : kMaxTime;
  return f;
}

absl::Status Replay::Finish(JobIndex j) {
  absl::Status s = sink_->Add(Finished(j));
  const int32_t place = slot_.Get(j);
  live_[static_cast<size_t>(place)] = LiveJob();
  free_.push_back(place);
  slot_.Set(j, -1);
  return s;
}

}  // namespace hived::sim::replay_internal
