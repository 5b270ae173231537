#include "worker/worker.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <sstream>

#include "judge/judge.h"
#include "problem/problem.h"

namespace kj::worker {
namespace {

using Clock = std::chrono::steady_clock;

store::Time now_us() {
  return std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
}

// Extends a lease on a thread of its own while a job is judged; joined on destruction.
class LeaseKeeper {
 public:
  LeaseKeeper(store::Store& store, store::JobLease lease, std::chrono::seconds duration)
      : store_(store), lease_(std::move(lease)), duration_(duration) {
    thread_ = std::thread([this] { run(); });
  }
  ~LeaseKeeper() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;
  bool lost() const { return lost_; }

 private:
  void run() {
    const auto interval =
        std::max<std::chrono::milliseconds>(duration_ / 3, std::chrono::seconds(1));
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      try {
        if (!store_.heartbeat(lease_, duration_)) lost_ = true;
        (void)store_.worker_heartbeat(lease_.worker_id, "busy");
      } catch (const store::StoreError&) {
        // A busy database: the next beat retries; the lease is longer than three intervals.
      }
    }
  }

  store::Store& store_;
  store::JobLease lease_;
  std::chrono::seconds duration_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> lost_{false};
  std::thread thread_;
};

bool all_pass(const std::vector<judge::CaseResult>& cases) {
  return std::all_of(cases.begin(), cases.end(),
                     [](const judge::CaseResult& c) { return c.status == "pass"; });
}

std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  std::array<char, 256> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe.get())) out += buffer.data();
  return out;
}

}  // namespace

void WorkerStats::record(const std::string& outcome, double seconds) {
  std::lock_guard lock(mutex_);
  ++outcomes_[outcome];
  std::size_t bucket = 0;
  while (bucket < std::size(kDurationBuckets) && seconds > kDurationBuckets[bucket]) ++bucket;
  ++bucket_counts_[bucket];
  duration_sum_ += seconds;
  ++duration_count_;
}

void WorkerStats::set_busy(const std::string& worker_id, bool busy) {
  std::lock_guard lock(mutex_);
  busy_[worker_id] = busy;
}

void WorkerStats::set_state(const std::string& worker_id, const std::string& state) {
  std::lock_guard lock(mutex_);
  states_[worker_id] = state;
}

void WorkerStats::set_unhealthy(const std::string& worker_id, const std::string& message) {
  std::lock_guard lock(mutex_);
  unhealthy_[worker_id] = message;
}

std::optional<std::string> gpu_fault(const JudgedJob& judged) {
  if (!judged.gpu_health.checked || judged.gpu_health.ok) return std::nullopt;
  return judged.gpu_health.message.empty() ? std::string("the GPU failed its health check")
                                           : judged.gpu_health.message;
}

std::uint64_t WorkerStats::completed_jobs() const {
  std::lock_guard lock(mutex_);
  const auto it = outcomes_.find("completed");
  return it == outcomes_.end() ? 0 : it->second;
}

std::string WorkerStats::prometheus() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP kj_worker_gpu_unhealthy 1 for a worker whose GPU failed the health check after "
         "a run; it takes no more jobs.\n# TYPE kj_worker_gpu_unhealthy gauge\n";
  for (const auto& [id, b] : busy_) {
    out << "kj_worker_gpu_unhealthy{worker=\"" << id << "\"} " << (unhealthy_.contains(id) ? 1 : 0)
        << "\n";
  }
  out << "# HELP kj_worker_state 1 for the state each worker of this process is in.\n"
      << "# TYPE kj_worker_state gauge\n";
  for (const auto& [id, state] : states_) {
    out << "kj_worker_state{worker=\"" << id << "\",state=\"" << state << "\"} 1\n";
  }
  out << "# HELP kj_worker_jobs_total Jobs this process's workers finished, by outcome.\n"
      << "# TYPE kj_worker_jobs_total counter\n";
  for (const char* outcome : {"completed", "released", "lost"}) {
    const auto it = outcomes_.find(outcome);
    out << "kj_worker_jobs_total{outcome=\"" << outcome << "\"} "
        << (it == outcomes_.end() ? 0 : it->second) << "\n";
  }
  out << "# HELP kj_workers_busy Workers of this process judging a job now.\n"
      << "# TYPE kj_workers_busy gauge\n";
  int busy = 0;
  for (const auto& [id, b] : busy_) busy += b ? 1 : 0;
  out << "kj_workers_busy " << busy << "\n"
      << "# HELP kj_workers Workers in this process.\n# TYPE kj_workers gauge\nkj_workers "
      << busy_.size() << "\n";
  out << "# HELP kj_job_duration_seconds Wall time from claim to completion or release.\n"
      << "# TYPE kj_job_duration_seconds histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < std::size(kDurationBuckets); ++i) {
    cumulative += bucket_counts_[i];
    out << "kj_job_duration_seconds_bucket{le=\"" << kDurationBuckets[i] << "\"} " << cumulative
        << "\n";
  }
  cumulative += bucket_counts_.back();
  out << "kj_job_duration_seconds_bucket{le=\"+Inf\"} " << cumulative << "\n"
      << "kj_job_duration_seconds_sum " << duration_sum_ << "\n"
      << "kj_job_duration_seconds_count " << duration_count_ << "\n";
  return out.str();
}

void WorkerStats::progress_changed() {
  {
    std::lock_guard lock(progress_mutex_);
    ++progress_count_;
  }
  progress_wake_.notify_all();
}

std::uint64_t WorkerStats::progress_count() const {
  std::lock_guard lock(progress_mutex_);
  return progress_count_;
}

void WorkerStats::wait_for_progress(std::uint64_t& seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(progress_mutex_);
  progress_wake_.wait_for(lock, timeout, [&] { return progress_count_ != seen; });
  seen = progress_count_;
}

namespace {

// Profile mode: the report the judge kept on this host, read to be stored with the run (the
// server on another host serves it) and removed here once read; a larger one than the cap stays,
// and the profile says where. profile.stored_report names the stored file.
std::vector<store::RunFile> take_profile_report(nlohmann::json& profile, std::size_t max_bytes) {
  if (!profile.is_object() || !profile.contains("report") || !profile["report"].is_string()) {
    return {};
  }
  const std::filesystem::path path = profile["report"].get<std::string>();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return {};
  if (size > max_bytes) {
    profile["message"] = "the report (" + std::to_string(size) + " bytes) is over the " +
                         std::to_string(max_bytes) +
                         " bytes the server keeps; it stays on the worker at " + path.string();
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) return {};
  std::filesystem::remove(path, ec);
  profile.erase("report");
  profile["stored_report"] = {{"name", kProfileReportFile}, {"bytes", content.size()}};
  return {store::RunFile{kProfileReportFile, std::move(content)}};
}

}  // namespace

JudgedJob judge_job(const store::ClaimedJob& job, const judge::Environment& environment,
                    const WorkerOptions& options, judge::WarmHarness* warm,
                    judge::HarnessZygote* zygote, judge::ReferenceTimes* reference_times) {
  JudgedJob judged;
  const auto mode = judge::mode_from_string(job.submission.mode);
  if (!mode || *mode == judge::Mode::compare) {
    judged.internal_error = "unknown submission mode '" + job.submission.mode + "'";
    return judged;
  }
  problem::Problem problem;
  try {
    problem = problem::load(job.problem_dir);
  } catch (const std::exception& e) {
    judged.internal_error = std::string("cannot load the leaderboard's problem: ") + e.what();
    return judged;
  }
  judge::EvalRequest request;
  request.problem = &problem;
  request.submission_source = job.code;
  request.submission_name = job.submission.file_name;
  request.mode = *mode;
  request.timing = options.timing;
  if (*mode == judge::Mode::leaderboard) request.secret_seed = job.secret_seed;
  if (options.compile_cache && !options.compile_cache_store.empty()) {
    request.compile_cache_scope = options.compile_cache_store + "\nuser " +
                                  std::to_string(job.submission.user_id) + " " +
                                  job.submission.user_name;
  }
  const auto start = now_us();
  judge::EvalResult result = reference_times != nullptr
                                 ? reference_times->evaluate(request, environment, warm, zygote)
                                 : judge::evaluate(request, environment, warm, zygote);
  const auto end = now_us();
  judged.gpu_health = result.gpu_health;
  judged.summary = {{"verdict", judge::to_string(result.verdict)}, {"reason", result.reason}};
  if (result.verdict == judge::Verdict::internal_error) {
    judged.internal_error = result.reason;
    return judged;
  }
  const bool accepted = result.verdict == judge::Verdict::accepted;
  // Scores are kept in seconds, as in the kernelbot-data export.
  std::optional<double> score;
  if (accepted && result.score_ns) score = *result.score_ns / 1e9;
  judged.summary["score"] = score ? nlohmann::json(*score) : nlohmann::json(nullptr);

  auto files = take_profile_report(result.profile, options.max_profile_report_bytes);
  store::NewRun run;
  run.mode = job.submission.mode;
  run.runner = job.submission.gpu_type;
  run.result_json = judge::to_json(result).dump();
  run.system_json = result.system.dump();
  run.start_time = start;
  run.end_time = end;
  run.files = std::move(files);
  store::JobOutcome outcome;
  outcome.verdict = judge::to_string(result.verdict);
  if (*mode == judge::Mode::leaderboard) {
    // The public run (public tests and shapes; ranked by its score) and the secret run (the
    // secret-seeded cases): the ranking leaves out a submission whose secret run failed.
    store::NewRun public_run = run;
    public_run.passed = all_pass(result.tests) && all_pass(result.public_benchmarks) &&
                        result.verdict != judge::Verdict::security_violation;
    public_run.score = score;
    store::NewRun secret_run = run;
    secret_run.secret = true;
    secret_run.passed = accepted;
    secret_run.score = score;
    outcome.runs = {public_run, secret_run};
    outcome.score = score;
  } else {
    run.passed = accepted;
    run.score = *mode == judge::Mode::benchmark ? score : std::nullopt;
    outcome.runs = {run};
    outcome.score = run.score;
  }
  judged.outcome = std::move(outcome);
  return judged;
}

// A CPU worker takes multi-rank jobs of any world_size (every rank runs on the CPU).
constexpr int kCpuRanks = 64;

void GpuPool::add(const std::string& device, const std::string& gpu_type) {
  std::lock_guard lock(mutex_);
  gpus_[device] = Gpu{gpu_type};
}

int GpuPool::count(const std::string& gpu_type) const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(gpus_.begin(), gpus_.end(), [&](const auto& entry) {
    return entry.second.gpu_type == gpu_type;
  }));
}

bool GpuPool::busy(const std::string& device) const {
  std::lock_guard lock(mutex_);
  const auto it = gpus_.find(device);
  return it != gpus_.end() && it->second.busy;
}

std::vector<std::string> GpuPool::idle_besides(const std::string& device,
                                               const std::string& gpu_type) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> idle;
  for (const auto& [name, gpu] : gpus_) {
    if (name != device && gpu.gpu_type == gpu_type && !gpu.busy && !gpu.out_of_service)
      idle.push_back(name);
  }
  // cuda:10 after cuda:9: by the number, not the text.
  std::sort(idle.begin(), idle.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return idle;
}

void GpuPool::set_busy(const std::vector<std::string>& devices, bool busy) {
  std::lock_guard lock(mutex_);
  for (const auto& device : devices) gpus_[device].busy = busy;
}

void GpuPool::set_out_of_service(const std::string& device) {
  std::lock_guard lock(mutex_);
  gpus_[device].out_of_service = true;
}

Worker::Worker(std::string store_url, WorkerOptions options, std::shared_ptr<WorkerStats> stats,
               std::shared_ptr<GpuPool> pool)
    : store_(store::open_store(store_url)),
      options_(std::move(options)),
      stats_(std::move(stats)),
      pool_(std::move(pool)),
      reference_times_(options_.reference_keep) {
  // A user's id means one user within one store: the store is part of every cache scope.
  std::error_code ec;
  if (store_url.starts_with("postgres://") || store_url.starts_with("postgresql://")) {
    options_.compile_cache_store = store_url;
  } else {
    const std::string path = store_url.starts_with("sqlite:") ? store_url.substr(7) : store_url;
    options_.compile_cache_store = std::filesystem::weakly_canonical(path, ec).string();
  }
  if (stats_) stats_->set_busy(options_.worker_id, false);
  std::string gpu_types;
  for (const auto& type : options_.gpu_types) gpu_types += (gpu_types.empty() ? "" : ",") + type;
  // Registering gives back what an earlier process under this name left running.
  store_->register_worker({options_.worker_id, options_.host, options_.device,
                           gpu_types.empty() ? std::string("cpu") : gpu_types, options_.gpu_count});
  if (stats_) stats_->set_state(options_.worker_id, "idle");
  last_report_ = Clock::now();
}

Worker::~Worker() { stop(); }

void Worker::start() {
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Worker::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  report("stopped");
}

std::string Worker::gpu_fault() const {
  std::lock_guard lock(fault_mutex_);
  return gpu_fault_;
}

void Worker::take_out_of_service(const std::string& why) {
  {
    std::lock_guard lock(fault_mutex_);
    gpu_fault_ = why.empty() ? "out of service" : why;
  }
  if (stats_) stats_->set_unhealthy(options_.worker_id, why);
  if (pool_) pool_->set_out_of_service(options_.device);
  wake_.notify_all();
}

const judge::Environment& Worker::environment() {
  if (!environment_)
    environment_ =
        judge::discover_environment(options_.python, options_.harness_dir, options_.device);
  return *environment_;
}

judge::HarnessZygote* Worker::prepare_zygote() {
  if (!options_.zygote) return nullptr;
  const auto say = [this](const std::string& line) {
    std::fprintf(stderr, "kj worker %s: %s\n", options_.worker_id.c_str(), line.c_str());
  };
  if (!zygote_) {
    try {
      zygote_.emplace(environment(), sandbox::Limits{}, say);
    } catch (const std::exception& e) {
      say(std::string("no zygote (jobs start their own harness): ") + e.what());
      options_.zygote = false;
      return nullptr;
    }
  }
  judge::HarnessZygote* const zygote = zygote_->get();
  if (zygote == nullptr) options_.zygote = false;  // the keeper gave up: warm harnesses instead
  return zygote;
}

void Worker::prepare_warm_harness() {
  if (!gpu_fault().empty()) return;
  if (prepare_zygote() != nullptr) return;
  if (!options_.warm_start || warm_) return;
  try {
    warm_ = std::make_unique<judge::WarmHarness>(environment(), sandbox::Limits{});
  } catch (const std::exception& e) {
    // The job then starts its harness itself, and reports what is wrong if it cannot.
    std::fprintf(stderr, "kj worker %s: no warm harness (jobs start their own): %s\n",
                 options_.worker_id.c_str(), e.what());
    options_.warm_start = false;
  }
}

void Worker::loop() {
  while (!stopping_) {
    prepare_warm_harness();
    if (!gpu_fault().empty()) {  // out of service: wait for stop(), claim nothing
      report("out_of_service");
      std::unique_lock lock(wake_mutex_);
      wake_.wait(lock, [this] { return stopping_.load(); });
      break;
    }
    bool worked = false;
    try {
      worked = run_one();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kj worker %s: %s\n", options_.worker_id.c_str(), e.what());
    }
    if (worked) continue;
    wait_idle();
    if (drained_) {  // its last job is recorded: claim nothing until stopped
      report("drained");
      std::fprintf(stderr, "kj worker %s: drained\n", options_.worker_id.c_str());
      std::unique_lock lock(wake_mutex_);
      wake_.wait(lock, [this] { return stopping_.load(); });
      break;
    }
  }
}

void Worker::report(const char* state) {
  if (stats_) stats_->set_state(options_.worker_id, state);
  last_report_ = Clock::now();
  try {
    if (store_->worker_heartbeat(options_.worker_id, state)) drained_ = true;
  } catch (const std::exception& e) {
    // The database is away: the next report retries (the store reconnects).
    std::fprintf(stderr, "kj worker %s: %s\n", options_.worker_id.c_str(), e.what());
  }
}

void Worker::wait_idle() {
  using namespace std::chrono_literals;
  const auto poll_at = Clock::now() + options_.idle_poll;
  // A claim just came back empty: a drain request shows within a second.
  if (Clock::now() - last_report_ >= 1s) report("idle");
  while (!stopping_ && !drained_) {
    const auto now = Clock::now();
    if (now - last_report_ >= options_.heartbeat) {
      report("idle");
      continue;
    }
    if (now >= poll_at) return;
    const auto slice = std::min<Clock::duration>(
        {poll_at - now, last_report_ + options_.heartbeat - now, Clock::duration(250ms)});
    try {
      if (store_->wait_for_jobs(options_.gpu_types,
                                std::chrono::ceil<std::chrono::milliseconds>(slice))) {
        return;
      }
    } catch (const std::exception&) {
      std::this_thread::sleep_for(slice);
    }
  }
}

bool Worker::run_one() {
  if (!gpu_fault().empty()) return false;
  // The GPUs this job runs on: this worker's, then those held for a multi-GPU job.
  std::vector<std::string> devices = {options_.device};
  std::optional<store::ClaimedJob> claimed;
  if (pool_ && !options_.gpu_types.empty()) {
    auto lock = pool_->claim_lock();
    if (pool_->busy(options_.device)) return false;  // held for another worker's job
    const auto idle = pool_->idle_besides(options_.device, options_.gpu_types.front());
    claimed = store_->claim_next_job(options_.worker_id, options_.gpu_types, options_.lease,
                                     1 + static_cast<int>(idle.size()));
    if (!claimed) return false;
    // The store claimed it for at most 1 + idle GPUs; the problem says how many it takes (a
    // problem that does not load is judged, and reported, as one GPU's).
    int needed = 1;
    try {
      needed = problem::load(claimed->problem_dir).gpus_needed();
    } catch (const std::exception&) {
    }
    const auto extra = static_cast<std::size_t>(std::max(0, needed - 1));
    devices.insert(devices.end(), idle.begin(),
                   idle.begin() + static_cast<std::ptrdiff_t>(std::min(extra, idle.size())));
    pool_->set_busy(devices, true);
  } else {
    // A CPU worker runs every rank of a multi-rank job on the CPU; a GPU worker outside a pool
    // has its own GPU only.
    const int max_gpus = options_.device == "cpu" ? kCpuRanks : 1;
    claimed =
        store_->claim_next_job(options_.worker_id, options_.gpu_types, options_.lease, max_gpus);
    if (!claimed) return false;
  }
  // Given back however the job ends; their workers were woken by nothing, they poll.
  struct Held {
    GpuPool* pool;
    std::vector<std::string> devices;
    ~Held() {
      if (pool != nullptr) pool->set_busy(devices, false);
    }
  } held{pool_.get(), devices};
  const auto started = Clock::now();
  if (stats_) stats_->set_busy(options_.worker_id, true);
  if (stats_) stats_->set_state(options_.worker_id, "busy");
  const auto& lease = claimed->lease;
  auto progress = [&](const nlohmann::json& event) {
    try {
      (void)store_->append_progress(lease, event.dump());
      if (stats_) stats_->progress_changed();
    } catch (const store::StoreError&) {
      // Progress is for display only; the outcome below is what counts.
    }
  };
  std::string outcome_name;
  {
    LeaseKeeper keeper(*store_, lease, options_.lease);
    std::string device_list;
    for (const auto& d : devices) device_list += (device_list.empty() ? "" : ",") + d;
    progress({{"event", "claimed"},
              {"worker", options_.worker_id},
              {"device", device_list},
              {"attempt", lease.attempt}});
    progress({{"event", "stage"},
              {"stage", "evaluate"},
              {"state", "started"},
              {"mode", claimed->submission.mode}});
    JudgedJob judged;
    try {
      // A warm harness serves one job. The next is started now on a GPU worker (its imports
      // run on the host's other cores while this job runs), else once this one is recorded.
      // With a zygote there is none: each job is forked from it.
      std::unique_ptr<judge::WarmHarness> warm = std::move(warm_);
      if (options_.warm_ahead && options_.device.starts_with("cuda")) prepare_warm_harness();
      judge::Environment run_environment = environment();
      if (devices.size() > 1) run_environment.rank_devices = devices;
      judge::HarnessZygote* const zygote = prepare_zygote();
      judged =
          judge_job(*claimed, run_environment, options_, warm.get(), zygote, &reference_times_);
    } catch (const std::exception& e) {
      judged.internal_error = e.what();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    progress({{"event", "stage"},
              {"stage", "evaluate"},
              {"state", "finished"},
              {"seconds", seconds},
              {"verdict", judged.summary.value("verdict", "internal_error")}});
    if (judged.outcome) {
      progress({{"event", "verdict"},
                {"verdict", judged.outcome->verdict},
                {"reason", judged.summary.value("reason", "")},
                {"score", judged.summary.value("score", nlohmann::json(nullptr))}});
      outcome_name = store_->complete(lease, *judged.outcome) ? "completed" : "lost";
    } else {
      progress({{"event", "released"}, {"error", judged.internal_error}});
      outcome_name = store_->release(lease, judged.internal_error) ? "released" : "lost";
    }
    if (stats_) stats_->progress_changed();  // the submission's status changed too
    if (const auto fault = worker::gpu_fault(judged)) {
      // The verdict stands; the device does not take another job (docs/sandbox.md).
      progress({{"event", "gpu_unhealthy"}, {"device", options_.device}, {"message", *fault}});
      std::fprintf(stderr, "kj worker %s: %s is out of service: %s\n", options_.worker_id.c_str(),
                   options_.device.c_str(), fault->c_str());
      take_out_of_service(*fault);
    }
  }
  if (stats_) {
    stats_->record(outcome_name, std::chrono::duration<double>(Clock::now() - started).count());
    stats_->set_busy(options_.worker_id, false);
    stats_->set_state(options_.worker_id, "idle");
  }
  return true;
}

std::string registered_workers_prometheus(const std::vector<store::WorkerStatus>& workers,
                                          store::Time now) {
  std::ostringstream out;
  out << "# HELP kj_registered_worker 1 per worker registered in the store (every host), with its "
         "state.\n# TYPE kj_registered_worker gauge\n";
  for (const auto& w : workers) {
    out << "kj_registered_worker{worker=\"" << w.name << "\",host=\"" << w.host << "\",gpu_type=\""
        << w.gpu_type << "\",state=\"" << w.state << "\"} 1\n";
  }
  out << "# HELP kj_registered_worker_heartbeat_age_seconds Seconds since the worker last "
         "reported.\n# TYPE kj_registered_worker_heartbeat_age_seconds gauge\n";
  for (const auto& w : workers) {
    out << "kj_registered_worker_heartbeat_age_seconds{worker=\"" << w.name << "\"} "
        << std::chrono::duration<double>(now - w.heartbeat_at).count() << "\n";
  }
  out << "# HELP kj_registered_worker_current_job The job a busy worker judges (0: none).\n"
      << "# TYPE kj_registered_worker_current_job gauge\n";
  for (const auto& w : workers) {
    out << "kj_registered_worker_current_job{worker=\"" << w.name << "\"} "
        << w.current_job.value_or(0) << "\n";
  }
  return out.str();
}

std::vector<Device> detect_gpus() {
  std::vector<int> minors;
  const std::regex node("nvidia([0-9]+)");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, node)) minors.push_back(std::stoi(match[1]));
  }
  std::sort(minors.begin(), minors.end());
  std::vector<Device> devices;
  for (const int minor : minors) {
    // Assumes nvidia-smi's index equals the minor number (both follow PCI order on one host).
    std::string name = run_command("nvidia-smi --query-gpu=name --format=csv,noheader -i " +
                                   std::to_string(minor) + " 2>/dev/null");
    name.erase(std::remove(name.begin(), name.end(), '\n'), name.end());
    if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
    std::replace(name.begin(), name.end(), ' ', '_');
    devices.push_back({"cuda:" + std::to_string(minor), name.empty() ? "cuda" : name});
  }
  return devices;
}

}  // namespace kj::worker
