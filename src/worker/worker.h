// A worker: claims jobs for its device from the store, judges them in the sandbox, reports
// progress and the outcome, and keeps its lease alive while it judges. Many workers may run in
// one process (one per GPU) or in several; each has its own store connection.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "judge/judge.h"
#include "judge/reference_times.h"
#include "store/store.h"

namespace kj::worker {

// The name a profile run's Nsight Compute report is stored under with the run.
inline constexpr char kProfileReportFile[] = "profile.ncu-rep";

struct WorkerOptions {
  std::string worker_id;               // unique per worker, e.g. "host:pid:cuda:0"
  std::string device = "cpu";          // "cpu" or "cuda:N"
  std::vector<std::string> gpu_types;  // the job GPU types it takes, e.g. {"cpu"} or {"H200"}
  std::optional<std::string> python;   // harness interpreter (default: $KJ_PYTHON, python3)
  std::optional<std::string> harness_dir;
  std::chrono::seconds lease{60};
  // An idle worker claims when the store signals a queued job (Store::wait_for_jobs); idle_poll
  // is the fallback pace when no signal comes (another process writing the same SQLite file).
  std::chrono::milliseconds idle_poll{2000};
  std::string host;  // the worker process's name (kj worker --name)
  // GPUs a job this worker claims may use: its own and the others of its type in its process
  // (see GpuPool); 0 for a CPU worker. Registered in the store, shown by `kj workers`.
  int gpu_count = 0;
  std::chrono::seconds heartbeat{5};  // how often an idle worker reports to the store
  nlohmann::json timing = nlohmann::json::object();  // benchmark settings for the harness
  // Keep the next job's harness started (sandbox set up, torch imported) while waiting.
  bool warm_start = true;
  // With warm_start on a GPU worker: the next job's harness is started as soon as a job begins,
  // so its start-up (CPU only: no CUDA before its job) overlaps the running job instead of
  // following it. On an H200, back-to-back leaderboard runs went from 19.1 s to 13.8 s each, the
  // medians unchanged (docs/perf.md). CPU workers never do it: their cores are few.
  bool warm_ahead = true;
  // A worker forks each job's harness from a zygote that imported torch once (docs/sandbox.md,
  // "Zygote"), instead of starting an interpreter per job: back-to-back jobs start in
  // milliseconds (on a GPU each run then creates its CUDA context). A zygote that fails is
  // replaced; the job it failed is judged in a harness started for it, and its run says so.
  // Off, or after zygotes failed in a row: the warm harness above.
  bool zygote = true;
  // Each user's compiled kernels (Triton's cache, torch extension builds) are kept between that
  // user's runs (judge/compile_cache.h); the scope is the store and the user, never shared.
  bool compile_cache = true;
  // Benchmark and leaderboard runs give their reference samples to the worker's next runs of the
  // same problem and settings for this long, which then skip the reference's job (judge/
  // reference_times.h); zero times the reference on every run.
  std::chrono::seconds reference_keep{600};
  std::string compile_cache_store;  // the store's identity in scopes; the Worker sets it
  // Profile mode: the Nsight Compute report is stored with the run up to this size (larger ones
  // stay on the worker's disk, and the result says so).
  std::size_t max_profile_report_bytes = std::size_t{32} << 20;
};

// Counters shared by the workers of one process, for /metrics.
class WorkerStats {
 public:
  // Upper bounds (seconds) of the job duration histogram.
  static constexpr double kDurationBuckets[] = {1, 2, 5, 10, 30, 60, 120, 300, 600, 1800};

  void record(const std::string& outcome, double seconds);  // completed, released, lost
  // Jobs completed so far (record("completed")), after the store committed them: the server's
  // rankings are recomputed when it changes.
  std::uint64_t completed_jobs() const;
  void set_busy(const std::string& worker_id, bool busy);
  // idle, busy, drained, out_of_service or stopped (the states the store records).
  void set_state(const std::string& worker_id, const std::string& state);
  // The worker's GPU failed its health check after a run: it takes no more jobs.
  void set_unhealthy(const std::string& worker_id, const std::string& message);
  // Prometheus text for these counters.
  std::string prometheus() const;

  // A worker recorded progress or an outcome: wakes wait_for_progress (the server's live event
  // streams answer at once instead of at their next poll).
  void progress_changed();
  std::uint64_t progress_count() const;
  // Waits until the count differs from `seen` or `timeout` passes; `seen` becomes the count.
  void wait_for_progress(std::uint64_t& seen, std::chrono::milliseconds timeout);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> outcomes_;
  std::vector<std::uint64_t> bucket_counts_ =
      std::vector<std::uint64_t>(std::size(kDurationBuckets) + 1, 0);
  double duration_sum_ = 0;
  std::uint64_t duration_count_ = 0;
  std::map<std::string, bool> busy_;
  mutable std::mutex progress_mutex_;
  std::condition_variable progress_wake_;
  std::uint64_t progress_count_ = 0;
  std::map<std::string, std::string> unhealthy_;  // worker id -> why
  std::map<std::string, std::string> states_;     // worker id -> state
};

// The GPUs of one `kj worker` process, shared by its Workers (one per GPU). A job that needs k
// GPUs (a multi_gpu problem's world_size) is claimed by one Worker, which asks the store for jobs
// needing at most 1 + (its type's GPUs idle now besides its own) and holds k - 1 of those idle
// GPUs for the run; a held GPU's own Worker claims nothing until they are given back. Claims of
// one process are serialised (claim_lock), so no idle GPU is counted twice. Thread-safe.
class GpuPool {
 public:
  void add(const std::string& device, const std::string& gpu_type);
  int count(const std::string& gpu_type) const;  // GPUs of that type in the pool

  // Held while a Worker counts idle GPUs, claims, and marks what it took busy.
  std::unique_lock<std::mutex> claim_lock() { return std::unique_lock(claim_mutex_); }
  bool busy(const std::string& device) const;
  // Idle (not busy, in service) GPUs of gpu_type other than `device`, in device order.
  std::vector<std::string> idle_besides(const std::string& device,
                                        const std::string& gpu_type) const;
  void set_busy(const std::vector<std::string>& devices, bool busy);
  void set_out_of_service(const std::string& device);

 private:
  struct Gpu {
    std::string gpu_type;
    bool busy = false;
    bool out_of_service = false;
  };
  std::mutex claim_mutex_;
  mutable std::mutex mutex_;
  std::map<std::string, Gpu> gpus_;
};

// What judging one claimed job produced: the outcome to record, or why it is given back.
struct JudgedJob {
  std::optional<store::JobOutcome> outcome;           // set unless an infrastructure fault
  std::string internal_error;                         // set when the job should be released
  nlohmann::json summary = nlohmann::json::object();  // verdict, reason, score for the final event
  judge::GpuHealth gpu_health;                        // the device after the run
};

// Why the worker must stop taking jobs after `judged` (its GPU was left with a process or
// memory of the run), or nothing when the device is fine or was not checked.
std::optional<std::string> gpu_fault(const JudgedJob& judged);

// Runs the judge on one claimed job (no store access): the submission against its leaderboard's
// problem, in its mode; a leaderboard submission with the leaderboard's secret seed.
// `reference_times`: the worker's kept reference times (none: the run times its reference).
JudgedJob judge_job(const store::ClaimedJob& job, const judge::Environment& environment,
                    const WorkerOptions& options, judge::WarmHarness* warm = nullptr,
                    judge::HarnessZygote* zygote = nullptr,
                    judge::ReferenceTimes* reference_times = nullptr);

class Worker {
 public:
  // Opens its own connection to `store_url`. `stats` may be null; `pool` (the GPUs of this
  // worker's process) may be null: the worker then takes jobs needing one GPU only.
  Worker(std::string store_url, WorkerOptions options, std::shared_ptr<WorkerStats> stats,
         std::shared_ptr<GpuPool> pool = nullptr);
  ~Worker();  // stops and joins
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the claim loop on a thread of its own.
  void start();
  // Asks the loop to stop after the current job and joins it.
  void stop();
  // Claims and judges one job on the calling thread; false when none was queued.
  bool run_one();

  const WorkerOptions& options() const { return options_; }
  // Empty while the worker takes jobs; else why its GPU was taken out of service.
  std::string gpu_fault() const;
  // Takes the worker's GPU out of service: it claims no more jobs (and wakes to say so).
  void take_out_of_service(const std::string& why);
  // An operator drained this worker (kj workers drain) and its last job is recorded: it claims
  // nothing more.
  bool drained() const { return drained_; }

 private:
  void loop();
  // Waits for a wake-up from the store, the fallback poll, stop() or a drain request.
  void wait_idle();
  // Records the worker's state and heartbeat in the store; notes a drain request.
  void report(const char* state);
  // The harness environment (found once) and a harness started for the next job.
  const judge::Environment& environment();
  void prepare_warm_harness();
  // The zygote for the next job (started, or replaced when it failed); nullptr without one.
  judge::HarnessZygote* prepare_zygote();

  std::unique_ptr<store::Store> store_;
  WorkerOptions options_;
  std::shared_ptr<WorkerStats> stats_;
  std::shared_ptr<GpuPool> pool_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex fault_mutex_;
  std::string gpu_fault_;  // set once: the worker claims nothing after it
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  std::atomic<bool> drained_{false};
  std::chrono::steady_clock::time_point last_report_{};
  std::optional<judge::Environment> environment_;
  std::unique_ptr<judge::WarmHarness> warm_;
  std::optional<judge::ZygoteKeeper> zygote_;
  judge::ReferenceTimes reference_times_;
};

// The devices of this host: "cuda:N" for each /dev/nvidiaN, with its GPU type (the name
// nvidia-smi reports, "NVIDIA " dropped, e.g. "H200"; "cuda" when nvidia-smi is missing).
struct Device {
  std::string device;
  std::string gpu_type;
};
std::vector<Device> detect_gpus();

// `kj worker`: one Worker per GPU of this host (or per --gpus), named NAME:DEVICE, on the
// store at store_url, until SIGINT/SIGTERM or until an operator drained all of them.
struct WorkerProcessOptions {
  std::string store_url;
  std::string name;       // default: the host name
  std::vector<int> gpus;  // GPU indices to use; empty: every GPU found
  bool cpu = false;       // one CPU worker, even where GPUs are present
  std::string gpu_type;   // the job GPU type to take; default: the GPU's (or "cpu")
  WorkerOptions worker;   // template (python, harness, lease, timing)
};
int run_worker_process(const WorkerProcessOptions& options);

// Blocks SIGINT and SIGTERM for this thread and the threads it starts, so that a process (`kj
// serve`, `kj worker`) takes them with wait() and stops in order; restores the mask on
// destruction.
class ShutdownSignals {
 public:
  ShutdownSignals();
  ~ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;
  // The signal taken; 0 when none came within `timeout` (none: waits until one comes).
  int wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt) const;

 private:
  sigset_t set_{};
  sigset_t previous_{};
};

// `kj workers`: the registered workers as a table.
std::string format_workers(const std::vector<store::WorkerStatus>& workers, store::Time now);

// Prometheus text for the workers registered in the store (every host on a shared database):
// state, heartbeat age and current job per worker.
std::string registered_workers_prometheus(const std::vector<store::WorkerStatus>& workers,
                                          store::Time now);

}  // namespace kj::worker
