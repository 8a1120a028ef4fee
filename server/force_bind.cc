// HiveD's force bind: a bounded queue of asynchronous binds and its worker.
#include "server/force_bind.h"

#include <utility>

#include "server/extender.h"

namespace hived::server {

ForceBindQueue::ForceBindQueue(Binder* binder, size_t capacity, Done done)
    : binder_(binder), capacity_(capacity > 0 ? capacity : 1), done_(std::move(done)) {
  worker_ = std::thread([this] { Work(); });
}

ForceBindQueue::~ForceBindQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    jobs_.clear();
  }
  cv_.notify_all();
  worker_.join();
}

bool ForceBindQueue::Push(ForceBindJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || jobs_.size() >= capacity_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
  return true;
}

void ForceBindQueue::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stop_ || (jobs_.empty() && !running_job_); });
}

void ForceBindQueue::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    ForceBindJob job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    absl::Status s = binder_->Bind(job.ns, job.name, job.uid, job.node, job.annotations);
    done_(job, s);
    lock.lock();
    running_job_ = false;
    cv_.notify_all();
  }
}

}  // namespace hived::server
