// Wakes the workers of this process when a job is queued in a SQLite database they share: one
// signal per database file, a generation counter under a condition variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace kj::store::detail {

class QueueSignal {
 public:
  void notify() {
    {
      std::lock_guard lock(mutex_);
      ++generation_;
    }
    changed_.notify_all();
  }
  std::uint64_t generation() {
    std::lock_guard lock(mutex_);
    return generation_;
  }
  // Waits until the generation differs from `seen` or timeout; updates `seen`. True if it moved.
  bool wait_past(std::uint64_t& seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    const bool moved = changed_.wait_for(lock, timeout, [&] { return generation_ != seen; });
    seen = generation_;
    return moved;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t generation_ = 0;
};

// The signal of one database (keyed by its canonical path); lives while a store holds it.
std::shared_ptr<QueueSignal> queue_signal_for(const std::string& database_key);

}  // namespace kj::store::detail
