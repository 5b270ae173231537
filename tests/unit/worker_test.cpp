// What a worker does with a run that left its GPU unhealthy: it names the fault, takes the GPU
// out of service (no more claims) and says so in /metrics; a healthy or unchecked run changes
// nothing.
#include "worker/worker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace kj::worker {
namespace {

JudgedJob judged_with(bool checked, bool ok, std::string message) {
  JudgedJob judged;
  judged.gpu_health.checked = checked;
  judged.gpu_health.ok = ok;
  judged.gpu_health.message = std::move(message);
  return judged;
}

// A SQLite store file of the test's own, removed with its WAL files however the test ends.
class StoreFile {
 public:
  explicit StoreFile(const std::string& name)
      : path_(testing::TempDir() + "/kj-" + name + "-" + std::to_string(::getpid()) + ".db") {
    remove();
  }
  ~StoreFile() { remove(); }
  StoreFile(const StoreFile&) = delete;
  StoreFile& operator=(const StoreFile&) = delete;
  std::string url() const { return "sqlite:" + path_; }

 private:
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

// Queues one job: alice's test-mode submission to a new leaderboard `name` (H200); its id.
store::Id queue_submission(store::Store& store, const std::string& name,
                           const std::string& problem_dir, int gpus_needed = 1) {
  store::NewLeaderboard board;
  board.name = name;
  board.problem_dir = problem_dir;
  board.gpu_types = {"H200"};
  const auto leaderboard = store.create_leaderboard(board);
  const auto user = store.create_user("alice", false);
  store::NewSubmission submission;
  submission.user_id = user.id;
  submission.leaderboard_id = leaderboard.id;
  submission.file_name = "k.py";
  submission.code = "def custom_kernel(data):\n    return data\n";
  submission.gpu_type = "H200";
  submission.mode = "test";
  submission.gpus_needed = gpus_needed;
  return store.create_submission(submission).id;
}

TEST(GpuFault, AHealthyOrUncheckedDeviceKeepsWorking) {
  EXPECT_FALSE(gpu_fault(judged_with(true, true, "")));
  EXPECT_FALSE(gpu_fault(judged_with(false, true, "NVML not available")));
}

TEST(GpuFault, ALeftoverProcessOrMemoryStopsTheWorker) {
  const auto fault = gpu_fault(judged_with(true, false, "process 4242 still on the GPU"));
  ASSERT_TRUE(fault);
  EXPECT_EQ(*fault, "process 4242 still on the GPU");
  EXPECT_TRUE(gpu_fault(judged_with(true, false, "")));  // a fault without words is still one
}

TEST(GpuFault, MetricsNameTheWorkerOutOfService) {
  WorkerStats stats;
  stats.set_busy("host:1:cuda:0", false);
  stats.set_busy("host:1:cuda:1", false);
  stats.set_unhealthy("host:1:cuda:1", "memory did not return to baseline");
  const std::string text = stats.prometheus();
  EXPECT_NE(text.find("kj_worker_gpu_unhealthy{worker=\"host:1:cuda:0\"} 0"), std::string::npos);
  EXPECT_NE(text.find("kj_worker_gpu_unhealthy{worker=\"host:1:cuda:1\"} 1"), std::string::npos);
}

TEST(GpuFault, AWorkerOutOfServiceClaimsNothing) {
  const StoreFile db("worker-test");
  const auto store = store::open_store(db.url());
  const store::Id created = queue_submission(*store, "vectoradd", "problems/vectoradd");
  WorkerOptions options;
  options.worker_id = "host:1:cuda:0";
  options.device = "cuda:0";
  options.gpu_types = {"H200"};
  auto stats = std::make_shared<WorkerStats>();
  Worker worker(db.url(), options, stats);
  worker.take_out_of_service("process 4242 still on the GPU");
  EXPECT_EQ(worker.gpu_fault(), "process 4242 still on the GPU");
  EXPECT_FALSE(worker.run_one());  // the queued job is not taken
  const auto jobs = store->submission_jobs(created);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, store::JobState::queued);
  EXPECT_EQ(jobs[0].attempts, 0);
  worker.start();  // the loop starts, sees the fault, and waits for stop() without claiming
  worker.stop();
  EXPECT_EQ(store->submission_jobs(created)[0].state, store::JobState::queued);
  EXPECT_NE(stats->prometheus().find("kj_worker_gpu_unhealthy{worker=\"host:1:cuda:0\"} 1"),
            std::string::npos);
}

// The GPUs of one worker process: which are idle for a multi-GPU job, by type, and that a GPU
// held for another worker's job or out of service is not.
TEST(GpuPool, IdleGpusAreThoseOfTheTypeNotHeldNorOutOfService) {
  GpuPool pool;
  for (const char* device : {"cuda:0", "cuda:1", "cuda:10", "cuda:2"}) pool.add(device, "H200");
  pool.add("cuda:3", "B200");
  EXPECT_EQ(pool.count("H200"), 4);
  EXPECT_EQ(pool.count("B200"), 1);
  EXPECT_EQ(pool.idle_besides("cuda:0", "H200"),
            (std::vector<std::string>{"cuda:1", "cuda:2", "cuda:10"}));
  pool.set_busy({"cuda:0", "cuda:1"}, true);
  EXPECT_TRUE(pool.busy("cuda:1"));
  EXPECT_EQ(pool.idle_besides("cuda:2", "H200"), (std::vector<std::string>{"cuda:10"}));
  pool.set_busy({"cuda:0", "cuda:1"}, false);
  pool.set_out_of_service("cuda:10");
  EXPECT_EQ(pool.idle_besides("cuda:3", "H200"),
            (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2"}));
  EXPECT_TRUE(pool.idle_besides("cuda:3", "B200").empty());
}

// A job needing two GPUs waits while its worker's host has one free; a worker whose GPU is held
// for another worker's job claims nothing at all.
TEST(GpuPool, AMultiGpuJobWaitsForEnoughIdleGpus) {
  const StoreFile db("worker-pool-test");
  const auto store = store::open_store(db.url());
  const store::Id created = queue_submission(
      *store, "allreduce_mean", std::string(KJ_SOURCE_DIR) + "/problems/allreduce_mean", 2);
  auto pool = std::make_shared<GpuPool>();
  for (const char* device : {"cuda:0", "cuda:1"}) pool->add(device, "H200");
  WorkerOptions options;
  options.device = "cuda:0";
  options.gpu_types = {"H200"};
  options.worker_id = "host:1:cuda:0";
  Worker first(db.url(), options, nullptr, pool);
  options.device = "cuda:1";
  options.worker_id = "host:1:cuda:1";
  Worker second(db.url(), options, nullptr, pool);
  pool->set_busy({"cuda:1"}, true);  // judging a job of its own
  EXPECT_FALSE(first.run_one());     // one GPU free: the two-GPU job stays queued
  EXPECT_FALSE(second.run_one());    // its GPU is busy: it claims nothing
  const auto jobs = store->submission_jobs(created);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, store::JobState::queued);
  EXPECT_EQ(jobs[0].attempts, 0);
}

}  // namespace
}  // namespace kj::worker
