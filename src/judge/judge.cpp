#include "judge/judge.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "judge/compile_cache.h"
#include "judge/detail/cuda.h"
#include "judge/detail/digest.h"
#include "judge/detail/harness_run.h"
#include "judge/detail/not_started.h"
#include "judge/detail/profile.h"
#include "judge/detail/reference_alone.h"
#include "judge/detail/temp_dir.h"
#include "judge/detail/text.h"

namespace kj::judge {
namespace fs = std::filesystem;

namespace {

// Paths inside the sandbox.
constexpr const char* kHarnessMount = "/kj/harness";
constexpr const char* kTaskMount = "/kj/task";
constexpr const char* kTaskBMount = "/kj/task_b";
constexpr const char* kCacheMount = "/kj/cache";  // harness/kj_harness/compile_cache.py
constexpr const char* kCacheFile = "entries.json";
constexpr int kRankedRechecks = 64;
// How long the driver may take to release a killed run's GPU memory and contexts.
constexpr std::chrono::seconds kGpuHealthGrace{5};

using detail::TempDir;

struct PipeCloser {
  void operator()(FILE* f) const {
    if (f != nullptr) pclose(f);
  }
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs a trusted command (our own interpreter query) and returns its stdout.
std::string capture(const std::string& command) {
  std::unique_ptr<FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  const int status = pclose(pipe.release());
  if (status != 0)
    throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command);
  return out;
}

std::optional<fs::path> find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::absolute(name);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate);
  }
  return std::nullopt;
}

fs::path self_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path find_harness(const std::optional<std::string>& explicit_dir) {
  auto valid = [](const fs::path& dir) {
    return fs::is_regular_file(dir / "kj_harness" / "__init__.py");
  };
  if (explicit_dir) {
    if (!valid(*explicit_dir)) {
      throw std::runtime_error("no kj_harness package in " + *explicit_dir);
    }
    return fs::absolute(*explicit_dir);
  }
  if (const char* env = std::getenv("KJ_HARNESS_DIR"); env != nullptr && *env != '\0') {
    if (!valid(env))
      throw std::runtime_error(std::string("KJ_HARNESS_DIR=") + env +
                               " holds no kj_harness package");
    return fs::absolute(env);
  }
  // Beside or above the executable: build/kj finds ../harness, an install finds
  // ../share/kj/harness.
  for (fs::path dir = self_executable().parent_path(); !dir.empty(); dir = dir.parent_path()) {
    for (const fs::path& candidate : {dir / "harness", dir / "share" / "kj" / "harness"}) {
      if (valid(candidate)) return candidate;
    }
    if (dir == dir.root_path()) break;
  }
  throw std::runtime_error("cannot find the harness (kj_harness); set KJ_HARNESS_DIR or --harness");
}

bool is_under(const fs::path& path, const fs::path& dir) {
  const auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// Sealed timing's recording shim for a run on `device`: $KJ_RECORD_SHIM when set (`off` or empty:
// none), else libkj_record.so beside the kj executable when it is there. A $KJ_RECORD_SHIM that
// names no file is an error on every device, so a server started with a bad one fails at once.
fs::path find_record_shim(const std::string& device) {
  if (const char* env = std::getenv("KJ_RECORD_SHIM"); env != nullptr) {
    const std::string value = env;
    if (value.empty() || value == "off") return {};
    std::error_code ec;
    if (!fs::is_regular_file(value, ec)) {
      throw std::runtime_error("KJ_RECORD_SHIM=" + value +
                               " is not a file (the recording shim of sealed timing, "
                               "libkj_record.so; unset it to use the one beside kj, or set it to "
                               "off to time in process)");
    }
    return device == "cpu" ? fs::path() : fs::absolute(value);
  }
  if (device == "cpu") return {};
  const fs::path exe = self_executable();
  if (exe.empty()) return {};
  const fs::path beside = exe.parent_path() / "libkj_record.so";
  std::error_code ec;
  return fs::is_regular_file(beside, ec) ? beside : fs::path();
}

void add_bind(std::vector<sandbox::Bind>& binds, const fs::path& path) {
  if (path.empty() || !fs::exists(path)) return;
  for (const auto& b : binds) {
    if (is_under(path, b.source) || path == b.source) return;
  }
  binds.push_back({path.string(), "", false, true});
}

}  // namespace

nlohmann::json default_timing(std::string_view device) {
  if (device.starts_with("cuda")) return {{"max_samples", 1000}, {"max_seconds", 15.0}};
  return {{"max_samples", 100}, {"max_seconds", 1.0}};
}

Environment discover_environment(const std::optional<std::string>& python,
                                 const std::optional<std::string>& harness_dir,
                                 const std::string& device) {
  Environment env;
  env.device = device;
  if (device != "cpu" && !(device.starts_with("cuda:") && device.size() > 5 &&
                           device.find_first_not_of("0123456789", 5) == std::string::npos)) {
    throw std::runtime_error("device must be cpu or cuda:N, got '" + device + "'");
  }
  env.record_shim = find_record_shim(device);
  std::string interpreter = python.value_or("");
  if (interpreter.empty()) {
    const char* from_env = std::getenv("KJ_PYTHON");
    interpreter = from_env != nullptr && *from_env != '\0' ? from_env : "python3";
  }
  const auto resolved = find_on_path(interpreter);
  if (!resolved || access(resolved->c_str(), X_OK) != 0) {
    throw std::runtime_error("harness interpreter '" + interpreter +
                             "' not found (set --python or KJ_PYTHON)");
  }
  env.python = *resolved;
  env.harness_dir = find_harness(harness_dir);

  // Ask the interpreter (ours, trusted) where it lives so exactly that becomes visible.
  const std::string query =
      "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, "
      "sys.base_exec_prefix, [p for p in sys.path if p]]))";
  nlohmann::json prefixes;
  try {
    prefixes = nlohmann::json::parse(
        capture(shell_quote(env.python.string()) + " -I -c " + shell_quote(query)));
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot query the harness interpreter " + env.python.string() + ": " +
                             e.what());
  }

  auto& binds = env.binds;
  for (const char* dir : {"/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin"})
    add_bind(binds, dir);
  for (int i = 0; i < 4; ++i)
    add_bind(binds, prefixes[static_cast<std::size_t>(i)].get<std::string>());
  std::error_code ec;
  add_bind(binds, fs::canonical(env.python, ec).parent_path());
  std::string extra_pythonpath;
  if (const char* pp = std::getenv("PYTHONPATH"); pp != nullptr && *pp != '\0') {
    std::istringstream entries(pp);
    std::string entry;
    while (std::getline(entries, entry, ':')) {
      if (entry.empty() || !fs::is_directory(entry)) continue;
      const fs::path abs = fs::absolute(entry);
      add_bind(binds, abs);
      extra_pythonpath += ":" + abs.string();
    }
  }
  const bool gpu = device != "cpu";
  if (gpu) {
    add_bind(binds, "/usr/local/nvidia");
    add_bind(binds, "/sys");  // the CUDA driver reads PCI topology there
  } else {
    add_bind(binds, "/sys/devices/system/cpu");
  }

  const std::string python_dir = env.python.parent_path().string();
  // nvcc for torch.utils.cpp_extension.load_inline submissions, where a CUDA toolkit exists.
  const std::string cuda_bin =
      fs::is_directory("/usr/local/cuda/bin") ? ":/usr/local/cuda/bin" : "";
  env.env = {
      "PATH=" + python_dir + ":/usr/local/bin:/usr/bin:/bin" + cuda_bin,
      "HOME=/tmp/home",
      "TMPDIR=/tmp",
      "LANG=C.UTF-8",
      std::string("PYTHONPATH=") + kHarnessMount + extra_pythonpath,
      "PYTHONDONTWRITEBYTECODE=1",
      "PYTHONUNBUFFERED=1",
      "PYTHONNOUSERSITE=1",
      "TRITON_CACHE_DIR=/tmp/.triton",
      "TORCH_EXTENSIONS_DIR=/tmp/.torch_extensions",
      // Set, so torch never probes the scratch for a temporary directory: the check would
      // fail once a submission filled the scratch.
      "TORCHINDUCTOR_CACHE_DIR=/tmp/.torchinductor",
      "XDG_CACHE_HOME=/tmp/.cache",
      "MPLCONFIGDIR=/tmp/.matplotlib",
      // NVLink multicast off in every harness: it can take a shared GPU out of service.
      "NCCL_NVLS_ENABLE=0",
      "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
      "NVSHMEM_DISABLE_NVLS=1",
      // Process groups of a multi-rank run talk over loopback, the only interface there is.
      "GLOO_SOCKET_IFNAME=lo",
      "NCCL_SOCKET_IFNAME=lo",
  };
  if (!gpu) {
    env.env.emplace_back("TRITON_INTERPRET=1");
    env.env.emplace_back("CUDA_VISIBLE_DEVICES=");
  }
  // Sealed timing (docs/sealed-timing.md): the harness records the submission's launches through
  // the shim, bound at kRecordShimMount by harness_sandbox.
  if (!env.record_shim.empty()) {
    env.env.push_back(std::string("LD_PRELOAD=") + kRecordShimMount);
    env.env.push_back(std::string("KJ_RECORD_SHIM=") + kRecordShimMount);
  }
  // Host settings the toolchain needs (library paths, CPU quirks); nothing secret is passed.
  for (const char* name :
       {"LD_LIBRARY_PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_HOME", "CUDA_PATH",
        "TRITON_LIBCUDA_PATH", "TRITON_PTXAS_PATH", "OMP_NUM_THREADS"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      env.env.push_back(std::string(name) + "=" + value);
    }
  }
  return env;
}

std::vector<std::string> gpu_device_nodes(std::string_view device) {
  if (!device.starts_with("cuda:")) return {};
  return {"/dev/nvidia" + std::string(device.substr(5)), "/dev/nvidiactl", "/dev/nvidia-uvm",
          "/dev/nvidia-uvm-tools"};
}

sandbox::Spec harness_sandbox(const Environment& environment) {
  sandbox::Spec spec;
  spec.env = environment.env;
  spec.binds = environment.binds;
  spec.binds.push_back({environment.harness_dir.string(), kHarnessMount, false, false});
  // Here, not in `binds`: the lang: cu programs' sandboxes (cuda.cpp) take `binds` and get no
  // shim.
  if (!environment.record_shim.empty())
    spec.binds.push_back({environment.record_shim.string(), kRecordShimMount, false, false});
  spec.devices = gpu_device_nodes(environment.device);
  return spec;
}

namespace detail {

// The sandbox for one harness run; the task directories are bound read-only from task_root.
sandbox::Spec harness_spec(const Environment& environment, const fs::path& task_root,
                           bool with_task_b, const sandbox::Limits& limits) {
  sandbox::Spec spec = harness_sandbox(environment);
  spec.argv = environment.wrapper;
  spec.argv.insert(spec.argv.end(), {environment.python.string(), "-m", "kj_harness"});
  // `python -m` puts its starting directory first on the import path: a writable one would let
  // the submission plant modules that the harness imports later. The task is read-only.
  spec.workdir = kTaskMount;
  spec.binds.push_back({(task_root / "task").string(), kTaskMount, false, false});
  if (with_task_b)
    spec.binds.push_back({(task_root / "task_b").string(), kTaskBMount, false, false});
  // The compile cache's file (entries.json), written there before the job is sent.
  if (fs::is_directory(task_root / "cache"))
    spec.binds.push_back({(task_root / "cache").string(), kCacheMount, false, false});
  spec.limits = limits;
  spec.result_fd = 3;
  return spec;
}

nlohmann::json harness_job(const EvalRequest& request, bool gpu) {
  const problem::Problem& problem = *request.problem;
  nlohmann::json job = {
      {"protocol", 1},
      {"mode", to_string(request.mode)},
      {"device", gpu ? "cuda:0" : "cpu"},  // the assigned GPU is the only one inside
      {"task_dir", kTaskMount},
      {"workdir", "/tmp/work"},
      {"result_fd", 3},
      {"tests", problem.tests},
      {"benchmarks", problem.benchmarks},
      {"timing", request.timing},
      {"kernel_language", problem.kernel_language},
  };
  if (problem.seed) job["seed"] = *problem.seed;
  // A ranked run re-checks a random 64 of the kept timed outputs (the runner keeps a reservoir,
  // so every call is equally likely to be among them), not just one.
  if (request.mode == Mode::leaderboard && !job["timing"].contains("recheck")) {
    job["timing"]["recheck"] = kRankedRechecks;
  }
  // task.yml's ranked_timing: sealed: a ranked benchmark the harness cannot time sealed fails.
  // On a CPU there is no sealed timing: the result says in_process, with the harness's note.
  if (problem.ranked_timing == "sealed" && request.mode == Mode::leaderboard && gpu) {
    job["timing"]["require_sealed"] = 1;
  }
  if (request.mode == Mode::compare) {
    job["submission_dirs"] = {kTaskMount, kTaskBMount};
    job["trials"] = std::max(1, request.trials);
  }
  return job;
}

std::string secret_line(const EvalRequest& request) {
  if (request.mode != Mode::leaderboard) return "";
  std::int64_t secret = 0;
  if (request.secret_seed) {
    secret = *request.secret_seed;
  } else {
    std::random_device random;
    secret = static_cast<std::int64_t>((static_cast<std::uint64_t>(random()) << 31) ^ random()) &
             0x7fffffffffffLL;
  }
  return std::to_string(secret) + "\n";
}

std::chrono::milliseconds harness_wall(const EvalRequest& request) {
  const problem::Problem& problem = *request.problem;
  std::chrono::seconds timeout = problem.test_timeout;
  if (request.mode == Mode::benchmark) timeout = problem.benchmark_timeout;
  if (request.mode == Mode::leaderboard) timeout = problem.ranked_timeout;
  if (request.mode == Mode::compare) timeout = problem.ranked_timeout * std::max(1, request.trials);
  return request.timeout.value_or(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

}  // namespace detail

namespace {

using detail::harness_spec;

bool same_limits_but_wall(const sandbox::Limits& a, const sandbox::Limits& b) {
  return a.cpu == b.cpu && a.memory_bytes == b.memory_bytes && a.max_processes == b.max_processes &&
         a.file_size_bytes == b.file_size_bytes && a.open_files == b.open_files &&
         a.scratch_bytes == b.scratch_bytes && a.output_bytes == b.output_bytes &&
         a.result_bytes == b.result_bytes;
}

}  // namespace

struct WarmHarness::State {
  std::string device;
  sandbox::Limits limits;
  TempDir task_root;  // task/ and task_b/, empty until the job is written into them
  std::shared_ptr<sandbox::StdinFeed> feed = std::make_shared<sandbox::StdinFeed>();
  std::future<sandbox::Outcome> outcome;
  bool used = false;
};

WarmHarness::WarmHarness(const Environment& environment, const sandbox::Limits& limits)
    : state_(std::make_unique<State>()) {
  state_->device = environment.device;
  state_->limits = limits;
  for (const char* sub : {"task", "task_b", "cache"})
    fs::create_directories(state_->task_root.path() / sub);
  sandbox::Spec spec = harness_spec(environment, state_->task_root.path(), true, limits);
  spec.stdin_feed = state_->feed;
  state_->outcome =
      std::async(std::launch::async, [spec = std::move(spec)] { return sandbox::run(spec); });
}

WarmHarness::~WarmHarness() {
  if (!state_) return;
  state_->feed->abandon();
  if (state_->outcome.valid()) state_->outcome.wait();
}

bool WarmHarness::fits(const EvalRequest& request, const Environment& environment) const {
  return state_ && !state_->used && state_->device == environment.device &&
         same_limits_but_wall(state_->limits, request.limits) && state_->outcome.valid() &&
         state_->outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

namespace {

// The zygote's own sandbox: its lifetime is the worker's, so no CPU limit of a run applies to it
// (each run it forks gets the job's).
constexpr std::chrono::hours kZygoteCpu{24 * 365};

}  // namespace

struct HarnessZygote::State {
  std::string device;
  sandbox::Limits limits;
  TempDir mount_points;  // empty task/, task_b/, cache/: each run covers them with its own files
  std::unique_ptr<sandbox::Zygote> zygote;
};

HarnessZygote::HarnessZygote(const Environment& environment, const sandbox::Limits& limits)
    : state_(std::make_unique<State>()) {
  state_->device = environment.device;
  state_->limits = limits;
  for (const char* sub : {"task", "task_b", "cache"})
    fs::create_directories(state_->mount_points.path() / sub);
  sandbox::Limits own = limits;
  own.cpu = kZygoteCpu;
  sandbox::Spec spec = harness_spec(environment, state_->mount_points.path(), true, own);
  spec.argv = {environment.python.string(), "-m", "kj_harness.zygote"};
  state_->zygote = std::make_unique<sandbox::Zygote>(std::move(spec));
}

HarnessZygote::~HarnessZygote() = default;

bool HarnessZygote::fits(const EvalRequest& request, const Environment& environment) const {
  return state_->device == environment.device && environment.wrapper.empty() &&
         same_limits_but_wall(state_->limits, request.limits) && !state_->zygote->failed();
}

bool HarnessZygote::wait_ready(std::chrono::milliseconds timeout) {
  return state_->zygote->wait_ready(timeout);
}

sandbox::Outcome HarnessZygote::fork_run(std::vector<std::pair<std::string, std::string>> task,
                                         const std::string& job, const sandbox::Limits& limits) {
  sandbox::ForkSpec fork;
  fork.files.push_back({kTaskMount, std::move(task)});
  fork.stdin_data = job + "\n";
  fork.limits = limits;
  fork.result_fd = 3;
  return state_->zygote->run(fork);
}

bool HarnessZygote::failed() const { return state_->zygote->failed(); }

ZygoteKeeper::ZygoteKeeper(Environment environment, sandbox::Limits limits,
                           std::function<void(const std::string&)> say)
    : environment_(std::move(environment)), limits_(limits), say_(std::move(say)) {}

HarnessZygote* ZygoteKeeper::get() {
  if (gave_up_) return nullptr;
  if (zygote_ && !zygote_->failed()) {
    failures_ = 0;
    return zygote_.get();
  }
  if (zygote_) {
    say_("the zygote failed: " + zygote_->failure());
    zygote_.reset();
    if (++failures_ >= kMaxFailures) {
      gave_up_ = true;
      say_(std::to_string(failures_) + " zygotes failed in a row; runs start their own harness");
      return nullptr;
    }
  }
  try {
    zygote_ = std::make_unique<HarnessZygote>(environment_, limits_);
  } catch (const std::exception& e) {
    gave_up_ = true;
    say_(std::string("no zygote (runs start their own harness): ") + e.what());
    return nullptr;
  }
  return zygote_.get();
}

std::string HarnessZygote::failure() const { return state_->zygote->failure(); }

int HarnessZygote::pid() const { return state_->zygote->pid(); }

namespace {

// Runs the job's harness on a prepared task in the harness `state` (warm or started now).
sandbox::Outcome run_in_harness(WarmHarness::State& state, const EvalRequest& request,
                                const std::string& stdin_data, const std::string& cache_entries,
                                std::chrono::milliseconds wall) {
  state.used = true;
  try {
    problem::materialize(*request.problem, request.submission_source,
                         state.task_root.path() / "task");
    if (request.mode == Mode::compare)
      problem::materialize(*request.problem, request.second_source,
                           state.task_root.path() / "task_b");
    if (!cache_entries.empty()) {
      const fs::path target = state.task_root.path() / "cache" / kCacheFile;
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      out << cache_entries;
      if (!out) throw std::runtime_error("cannot write " + target.string());
    }
  } catch (const std::exception& e) {
    state.feed->abandon();
    sandbox::Outcome outcome;
    outcome.setup_error = std::string("cannot prepare the task files: ") + e.what();
    return outcome;
  }
  state.feed->send(stdin_data, wall);
  return state.outcome.get();
}

// The job's harness forked from the zygote, its task files in read-only tmpfs directories.
sandbox::Outcome run_in_zygote(sandbox::Zygote& zygote, const EvalRequest& request,
                               const std::string& stdin_data, const std::string& cache_entries,
                               std::chrono::milliseconds wall) {
  sandbox::ForkSpec fork;
  try {
    fork.files.push_back(
        {kTaskMount, problem::task_files(*request.problem, request.submission_source)});
    if (request.mode == Mode::compare)
      fork.files.push_back(
          {kTaskBMount, problem::task_files(*request.problem, request.second_source)});
    if (!cache_entries.empty()) fork.files.push_back({kCacheMount, {{kCacheFile, cache_entries}}});
  } catch (const std::exception& e) {
    sandbox::Outcome outcome;
    outcome.setup_error = std::string("cannot prepare the task files: ") + e.what();
    return outcome;
  }
  // As harness_spec: the harness starts in the read-only task directory.
  fork.workdir = kTaskMount;
  fork.stdin_data = stdin_data;
  fork.limits = request.limits;
  fork.limits.wall = wall;
  fork.result_fd = 3;
  return zygote.run(fork);
}

// Stores what the run compiled (its compile_cache event) under its scope; the record's summary.
nlohmann::json store_compiled(const CompileCache& cache, const std::string& scope,
                              const std::vector<nlohmann::json>& events) {
  const auto event = std::find_if(events.rbegin(), events.rend(), [](const nlohmann::json& e) {
    return e["event"] == "compile_cache";
  });
  if (event == events.rend()) return {{"reported", 0}, {"stored", 0}, {"refused", 0}};
  nlohmann::json summary = cache.store(scope, *event);
  const auto files = event->find("files");
  summary["reported"] = files != event->end() && files->is_array() ? files->size() : 0;
  for (const char* key : {"offered", "restored", "stale", "too_large"}) {
    const auto value = event->find(key);
    if (value != event->end() && value->is_number_unsigned()) summary[key] = *value;
  }
  // How long stopping the runners and gathering the files took (the run's wall time).
  if (const auto seconds = event->find("seconds");
      seconds != event->end() && seconds->is_object() && seconds->size() <= 4) {
    for (const auto& [key, value] : seconds->items())
      if (value.is_number()) summary["seconds"][detail::cut(key, 32)] = value;
  }
  // The harness's own trouble with the cache (it went on without it): restoring, or reporting.
  for (const auto& [key, as] :
       {std::pair{"restore_error", "restore_error"}, {"error", "report_error"}}) {
    const auto value = event->find(key);
    if (value != event->end() && value->is_string())
      summary[as] = detail::cut(value->get<std::string>(), 300);
  }
  return summary;
}

// The reference's timing in a job of its own (detail/reference_alone.h), once the submission's
// run has ended: forked from the zygote when there is one, else in `harness` (a fresh sandbox,
// started beside the submission's or now), under the caller's GPU lease. Its samples, the
// speedup and its wall time go into `result`; its failure leaves the verdict as it is.
void time_reference_alone(const EvalRequest& request, const Environment& environment,
                          std::span<const nlohmann::json> events, const std::string& secret,
                          std::chrono::milliseconds wall, sandbox::Zygote* zygote,
                          const std::function<WarmHarness::State*()>& harness, EvalResult& result) {
  std::string why;
  const auto job =
      detail::reference_job(request, environment.device != "cpu", result, events, &why);
  if (!job) return detail::omit_speedup(result, why);
  // Nothing of the submission goes into the reference's sandbox: its submission.py is empty.
  EvalRequest alone = request;
  alone.mode = Mode::benchmark;  // one task directory
  alone.submission_source.clear();
  alone.second_source.clear();
  const std::string stdin_data = job->dump() + "\n" + secret;
  sandbox::Outcome outcome;
  if (zygote != nullptr && !zygote->failed()) {
    outcome = run_in_zygote(*zygote, alone, stdin_data, {}, wall);
    if (!outcome.started && outcome.setup_error.starts_with("zygote")) {
      const std::string why_not = outcome.setup_error;
      outcome = run_in_harness(*harness(), alone, stdin_data, {}, wall);
      outcome.warnings.insert(outcome.warnings.begin(),
                              why_not + "; run in a harness started for it instead");
    }
  } else {
    outcome = run_in_harness(*harness(), alone, stdin_data, {}, wall);
  }
  detail::merge_reference(result, outcome);
}

// One evaluation of the problem as given (evaluate picks the benchmark cases for the device).
// `harness` gives the harness to run in: a warm one that fits, else one started then;
// `reference_harness` a fresh one for the reference's job when there is no zygote.
EvalResult evaluate_as_given(const EvalRequest& request, const Environment& environment,
                             const std::function<WarmHarness::State*()>& harness,
                             const std::function<WarmHarness::State*()>& reference_harness,
                             sandbox::Zygote* zygote) {
  if (request.mode == Mode::profile) return detail::evaluate_profile(request, environment);
  const problem::Problem& problem = *request.problem;
  const bool compare = request.mode == Mode::compare;
  for (const auto* source : {&request.submission_source, &request.second_source}) {
    if (source->size() <= request.max_source_bytes) continue;
    return detail::not_started(
        request, environment, Verdict::compile_error,
        "the source is " + std::to_string(source->size()) + " bytes, over the limit of " +
            std::to_string(request.max_source_bytes) + " bytes; nothing was run");
  }
  // CUDA C++ problems: compiled with our C++ harness, no Python involved (src/judge/cuda.cpp).
  if (problem.lang == "cu") return detail::evaluate_cuda(request, environment);
  std::vector<ScreenFinding> findings;
  // The problem's kernel_language is a rule of the problem, not a screen heuristic: it applies
  // with --no-screen too (and is checked again at run time).
  for (const auto* source : {&request.submission_source, &request.second_source}) {
    if (source->empty()) continue;
    if (auto broken = screen_kernel_language(*source, problem.kernel_language)) {
      std::string reason = "kernel_language: " + problem.kernel_language + ": " + broken->reason +
                           (broken->line > 0 ? " (line " + std::to_string(broken->line) + ": " +
                                                   broken->excerpt + ")"
                                             : "");
      return detail::not_started(request, environment, Verdict::compile_error, std::move(reason),
                                 {std::move(*broken)});
    }
  }
  if (request.screen) {
    for (const auto* source : {&request.submission_source, &request.second_source}) {
      if (source->empty()) continue;
      for (auto finding : screen_python(*source)) {
        if (compare)
          finding.excerpt = (source == &request.second_source ? "B: " : "A: ") + finding.excerpt;
        findings.push_back(std::move(finding));
      }
    }
    const auto reject = std::find_if(findings.begin(), findings.end(),
                                     [](const ScreenFinding& f) { return f.reject; });
    if (reject != findings.end()) {
      std::string reason = "static screen, rule " + reject->rule + " (line " +
                           std::to_string(reject->line) + "): " + reject->reason + ": " +
                           reject->excerpt;
      return detail::not_started(request, environment, Verdict::security_violation,
                                 std::move(reason), std::move(findings));
    }
  }
  // world_size sandboxes, one per rank (src/judge/ranks.cpp); never a warm harness.
  if (problem.multi_gpu) return detail::evaluate_ranks(request, environment, std::move(findings));
  // Every run is a harness started before its job (or forked from the zygote): while it
  // imports torch, this run waits for the GPU's lease.
  WarmHarness::State* const state = zygote != nullptr ? nullptr : harness();

  const bool gpu = environment.device != "cpu";
  nlohmann::json job = detail::harness_job(request, gpu);
  // The scope's compiled kernels go in with the task; what the run compiles comes back in its
  // compile_cache event, stored below (compile_cache.h).
  std::optional<CompileCache> cache;
  std::string cache_scope, cache_entries, cache_error;
  if (!request.compile_cache_scope.empty()) {
    // One owner's runs of this exact code (compile_cache.h).
    cache_scope = request.compile_cache_scope + "\nsource " +
                  detail::sha256_hex(request.submission_source) +
                  (compare ? " " + detail::sha256_hex(request.second_source) : "");
    cache.emplace(CompileCache::default_root());
    job["compile_cache"] = true;
    try {
      cache_entries = cache->entries_for(cache_scope);
    } catch (const std::exception& e) {
      cache_error = std::string("the compile cache could not be read: ") + e.what();
    }
  }
  // The secret travels on stdin's second line, which the harness reads only after the
  // submission's process exists without access to it. The reference's job gets the same one.
  const std::string secret = detail::secret_line(request);
  const std::string stdin_data = job.dump() + "\n" + secret;
  const auto wall = detail::harness_wall(request);

  std::optional<GpuLease> lease;
  try {
    lease.emplace(environment.device);
  } catch (const std::exception& e) {
    return detail::not_started(request, environment, Verdict::internal_error, e.what(),
                               std::move(findings));
  }
  // The GPU before the run, to compare with after it (docs/sandbox.md, "GPU health").
  std::optional<GpuMonitor> monitor;
  std::optional<GpuReading> gpu_before;
  std::string gpu_error;
  if (gpu) {
    monitor.emplace(std::stoi(environment.device.substr(5)));
    gpu_before = monitor->read(&gpu_error);
  }
  sandbox::Outcome outcome;
  if (zygote != nullptr) {
    outcome = run_in_zygote(*zygote, request, stdin_data, cache_entries, wall);
    if (!outcome.started && outcome.setup_error.starts_with("zygote")) {
      // Not the submission's doing: judged the way a zygote-less worker judges it.
      const std::string why = outcome.setup_error;
      outcome = run_in_harness(*harness(), request, stdin_data, cache_entries, wall);
      outcome.warnings.insert(outcome.warnings.begin(),
                              why + "; judged in a harness started for this run instead");
    }
  } else {
    outcome = run_in_harness(*state, request, stdin_data, cache_entries, wall);
  }
  if (!outcome.started && outcome.setup_error.starts_with("cannot prepare the task files")) {
    EvalResult result =
        detail::not_started(request, environment, Verdict::internal_error,
                            "sandbox setup failed: " + outcome.setup_error, std::move(findings));
    result.outcome.setup_error = outcome.setup_error;
    return result;
  }
  std::string parse_error;
  const auto events = parse_events(outcome.result_data, &parse_error);
  EvalResult result = decide(outcome, events, request.mode, problem);
  if (!parse_error.empty() && result.verdict == Verdict::accepted) {
    result.verdict = Verdict::internal_error;
    result.reason = parse_error;
  }
  if (cache) {
    result.compile_cache = store_compiled(*cache, cache_scope, events);
    if (!cache_error.empty()) result.compile_cache["error"] = cache_error;
  }
  result.submission = request.submission_name;
  if (compare) result.submission += " vs " + request.second_name;
  result.device = environment.device;
  result.screen = std::move(findings);
  if (gpu) result.process_times["gpu_wait_s"] = lease->waited_s();
  if (monitor) {
    result.gpu_health = check_gpu_after_run(*monitor, gpu_before, kGpuHealthGrace);
    if (!gpu_before && !gpu_error.empty()) result.gpu_health.message = gpu_error;
  } else {
    result.gpu_health.message = "not a GPU run";
  }
  // The submission's sandbox is gone with every process of it: the reference is timed alone.
  if (detail::reference_timed(request) && result.verdict == Verdict::accepted &&
      !result.benchmarks.empty()) {
    time_reference_alone(request, environment, events, secret, wall, zygote, reference_harness,
                         result);
  }
  return result;
}

}  // namespace

EvalResult evaluate(const EvalRequest& request, const Environment& environment, WarmHarness* warm,
                    HarnessZygote* zygote) {
  // On a CPU, the problem's CPU-sized benchmark cases stand in for its GPU-sized ones: the
  // same checks on smaller shapes.
  if (environment.device == "cpu" && !request.problem->cpu_benchmarks.empty()) {
    const problem::Problem sized = request.problem->on_device(environment.device);
    EvalRequest on_cpu = request;
    on_cpu.problem = &sized;
    return evaluate(on_cpu, environment, warm, zygote);
  }
  std::optional<WarmHarness> cold;
  std::optional<WarmHarness> reference;  // the reference's own sandbox, without a zygote
  const bool forked = zygote != nullptr && zygote->fits(request, environment);
  const bool reference_alone = detail::reference_timed(request);
  EvalResult result = evaluate_as_given(
      request, environment,
      [&]() -> WarmHarness::State* {
        if (warm != nullptr && warm->fits(request, environment)) return warm->state_.get();
        cold.emplace(environment, request.limits);
        // The reference's harness starts beside this one: both import before anything is
        // timed, and the reference's then waits for its job, in a sandbox of its own the
        // submission cannot reach, until the submission's run has ended (docs/perf.md).
        if (reference_alone && !reference) reference.emplace(environment, request.limits);
        return cold->state_.get();
      },
      [&]() -> WarmHarness::State* {
        if (!reference || reference->state_->used) reference.emplace(environment, request.limits);
        return reference->state_.get();
      },
      forked ? zygote->state_->zygote.get() : nullptr);
  result.benchmark_set = request.problem->benchmark_set;
  return result;
}

}  // namespace kj::judge
