// server/force_bind.h: HiveD's force bind. A Binding pod (filtered to a node, not yet bound)
// is bound by the extender itself, asynchronously, when filter has been called for it
// `forcePodBindThreshold` times or its node is not among kube-scheduler's candidate nodes
// (hived-reference.md §3.2): kube-scheduler's own bind seems stuck or would be refused.
//
// `ForceBindQueue` is a bounded FIFO of such binds and one worker thread that performs them
// through the `Binder` (the API server's `binding` subresource) and reports each result to a
// callback. Invariants:
//   1. At most `capacity` jobs wait; `Push` refuses more (the caller counts the drop; a later
//      filter of the pod tries again).
//   2. Jobs run one at a time in push order; `done` is called once per job run, outside the
//      queue's lock, on the worker thread.
//   3. The destructor finishes the job in flight, drops the waiting ones and joins the worker.
//
// Example:
//   ForceBindQueue q(&binder, 1024, [](const ForceBindJob& job, const absl::Status& s) {...});
//   q.Push(ForceBindJob{"default", "p-0", "uid", "node-1", annotations});
//
// Thread safety: all methods may be called from any thread.
#ifndef HIVED_SERVER_FORCE_BIND_H_
#define HIVED_SERVER_FORCE_BIND_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace hived::server {

class Binder;

struct ForceBindJob {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;
  std::map<std::string, std::string> annotations;
};

class ForceBindQueue {
 public:
  using Done = std::function<void(const ForceBindJob&, const absl::Status&)>;
  // REQUIRES: `binder` outlives the queue; capacity > 0.
  ForceBindQueue(Binder* binder, size_t capacity, Done done);
  ~ForceBindQueue();
  ForceBindQueue(const ForceBindQueue&) = delete;
  ForceBindQueue& operator=(const ForceBindQueue&) = delete;

  // Queues `job`; false (and the job dropped) when `capacity` jobs already wait.
  bool Push(ForceBindJob job);
  // Blocks until no job waits or runs (tests, shutdown).
  void WaitIdle();

 private:
  void Work();

  Binder* binder_;
  const size_t capacity_;
  Done done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ForceBindJob> jobs_;
  bool running_job_ = false;
  bool stop_ = false;
  std::thread worker_;  // last: started after the rest is built
};

}  // namespace hived::server

#endif  // HIVED_SERVER_FORCE_BIND_H_
