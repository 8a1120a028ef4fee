#include "sim/trace/trace_growth.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_hash.h"

namespace hived::sim {
namespace {

bool BySubmit(const TraceJob& a, const TraceJob& b) { return a.submit_time < b.submit_time; }

// Calls emit(original, copy number, submit time) for every copy of every job of `vc`.
template <typename Emit>
void ForEachCopy(const std::vector<TraceJob>& jobs, const std::string& vc, double k, uint64_t seed,
                 Emit emit) {
  std::vector<size_t> own;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].vc == vc) own.push_back(i);
  }
  if (own.empty()) return;
  const double whole = std::floor(k), part = k - whole;
  const double mean_gap =
      own.size() > 1
          ? static_cast<double>(jobs[own.back()].submit_time - jobs[own.front()].submit_time) /
                static_cast<double>(own.size() - 1)
          : 0;
  const uint64_t vc_hash = Mix(seed ^ HashString(vc));
  for (size_t n = 0; n < own.size(); ++n) {
    const TraceJob& job = jobs[own[n]];
    const double u = static_cast<double>(Mix(vc_hash + n) >> 11) * 0x1.0p-53;
    const int64_t copies = static_cast<int64_t>(whole) + (u < part ? 1 : 0);
    const double gap = n + 1 < own.size()
                           ? static_cast<double>(jobs[own[n + 1]].submit_time - job.submit_time)
                           : mean_gap;
    for (int64_t c = 0; c < copies; ++c) {
      emit(own[n], c,
           job.submit_time + static_cast<Time>(std::llround(gap * static_cast<double>(c) /
                                                            static_cast<double>(copies))));
    }
  }
}

TraceJob Copy(const TraceJob& job, int64_t c, Time submit) {
  TraceJob j = job;
  if (c > 0) j.id = absl::StrCat(Av(j.id), "-x", c);
  j.submit_time = submit;
  return j;
}

}  // namespace

std::vector<TraceJob> GrowVcJobs(const std::vector<TraceJob>& jobs, const std::string& vc, double k,
                                 uint64_t seed) {
  std::vector<TraceJob> out;
  ForEachCopy(jobs, vc, k, seed,
              [&](size_t i, int64_t c, Time t) { out.push_back(Copy(jobs[i], c, t)); });
  std::stable_sort(out.begin(), out.end(), BySubmit);
  return out;
}

void ScaleVcLoad(const std::string& vc, double k, uint64_t seed, Trace* trace) {
  if (k == 1) return;
  std::vector<TraceJob>& jobs = trace->jobs;
  // Copy 0 of a kept job stays in the job's place; the other copies are merged in after.
  std::vector<bool> kept(jobs.size(), false);
  std::vector<TraceJob> extra;
  ForEachCopy(jobs, vc, k, seed, [&](size_t i, int64_t c, Time t) {
    if (c == 0) {
      kept[i] = true;
    } else {
      extra.push_back(Copy(jobs[i], c, t));
    }
  });
  std::vector<TraceJob> base;
  base.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].vc != vc || kept[i]) base.push_back(std::move(jobs[i]));
  }
  std::stable_sort(extra.begin(), extra.end(), BySubmit);
  std::vector<TraceJob> out;
  out.reserve(base.size() + extra.size());
  std::merge(std::make_move_iterator(base.begin()), std::make_move_iterator(base.end()),
             std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()),
             std::back_inserter(out), BySubmit);
  jobs = std::move(out);
}

void BootstrapTrace(int64_t block_seconds, uint64_t seed, Trace* trace) {
  std::vector<TraceJob>& jobs = trace->jobs;
  if (jobs.empty()) return;
  const uint64_t h = Mix(seed ^ 0x626f6f7473747261ULL);  // "bootstra"
  auto draw = [&](uint64_t i, uint64_t n) {
    return static_cast<uint64_t>(static_cast<double>(Mix(h + i) >> 11) * 0x1.0p-53 *
                                 static_cast<double>(n));
  };
  std::vector<TraceJob> out;
  out.reserve(jobs.size());
  if (block_seconds <= 0) {
    const uint64_t n = jobs.size();
    for (uint64_t i = 0; i < n; ++i) {
      TraceJob j = jobs[std::min<uint64_t>(draw(i, n), n - 1)];
      j.id = absl::StrCat(Av(j.id), "-b", i);
      out.push_back(std::move(j));
    }
  } else {
    const Time first = jobs.front().submit_time;
    const auto blocks =
        static_cast<uint64_t>((jobs.back().submit_time - first) / block_seconds + 1);
    // The jobs of each block, as index ranges of the sorted trace.
    std::vector<size_t> start(blocks + 1, jobs.size());
    for (size_t i = jobs.size(); i-- > 0;) {
      start[static_cast<uint64_t>((jobs[i].submit_time - first) / block_seconds)] = i;
    }
    for (uint64_t b = blocks; b-- > 0;) start[b] = std::min(start[b], start[b + 1]);
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t d = std::min<uint64_t>(draw(b, blocks), blocks - 1);
      const Time shift = (static_cast<Time>(b) - static_cast<Time>(d)) * block_seconds;
      for (size_t i = start[d]; i < start[d + 1]; ++i) {
        TraceJob j = jobs[i];
        j.id = absl::StrCat(Av(j.id), "-b", b);
        j.submit_time += shift;
        out.push_back(std::move(j));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), BySubmit);
  jobs = std::move(out);
}

}  // namespace hived::sim
