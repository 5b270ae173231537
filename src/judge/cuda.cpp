// `lang: cu` problems: the submission compiled with our CUDA harness (harness/cuda/eval.cu) into
// one program, cached by the hash of everything that goes into it, compiled and run in the
// sandbox. The program reports the Python harness's result events, so decide() is shared.
#include "judge/detail/cuda.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>

#include "judge/detail/digest.h"
#include "judge/detail/not_started.h"
#include "judge/detail/reference_alone.h"
#include "judge/detail/temp_dir.h"
#include "judge/detail/text.h"

namespace kj::judge::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kBuildMount = "/kj/build";
constexpr const char* kTaskMount = "/kj/task";
constexpr const char* kHarnessMount = "/kj/harness";
constexpr const char* kProgramName = "kj_eval";
// Bumped when the way a program is built changes, so older cache entries are not reused.
constexpr const char* kBuildRecipe = "kj-cuda-build-1";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct PipeCloser {
  void operator()(FILE* f) const {
    if (f != nullptr) pclose(f);
  }
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A trusted command's stdout, or nothing when it fails.
std::optional<std::string> capture(const std::string& command) {
  std::unique_ptr<FILE, PipeCloser> pipe(popen((command + " 2>/dev/null").c_str(), "r"));
  if (!pipe) return std::nullopt;
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  if (pclose(pipe.release()) != 0) return std::nullopt;
  return out;
}

// `nvcc --version`, asked once per compiler file: a lang: cu evaluation builds the submission's
// program and the reference's, and a server builds many. Keyed by the file's path, size and
// modification time, so a toolkit replaced under a running server is asked again.
std::string nvcc_version(const fs::path& nvcc) {
  std::error_code ec;
  const auto resolved = fs::canonical(nvcc, ec);
  const fs::path& file = ec ? nvcc : resolved;
  const auto size = fs::file_size(file, ec);
  const auto mtime = fs::last_write_time(file, ec).time_since_epoch().count();
  const std::string key =
      file.string() + "\n" + std::to_string(size) + "\n" + std::to_string(mtime);
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  std::string version = capture(shell_quote(nvcc.string()) + " --version").value_or("");
  if (version.empty()) return version;  // a failure is not remembered
  std::lock_guard lock(mutex);
  return known.emplace(key, std::move(version)).first->second;
}

constexpr uid_t kSandboxUid = 65534;

// chown of a directory and everything in it (links themselves, never followed).
void set_owner(const fs::path& dir, uid_t uid) {
  if (lchown(dir.c_str(), uid, uid) != 0) {
    throw std::runtime_error("cannot chown " + dir.string());
  }
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (lchown(entry.path().c_str(), uid, uid) != 0) {
      throw std::runtime_error("cannot chown " + entry.path().string());
    }
  }
}

// Readable, and runnable where it was, by everyone (the sandbox's user runs the program);
// writable by the owner only.
void make_world_readable(const fs::path& dir) {
  constexpr auto read_exec = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec;
  constexpr auto read_only = fs::perms::owner_read | fs::perms::owner_write |
                             fs::perms::group_read | fs::perms::others_read;
  fs::permissions(dir, read_exec);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_symlink()) continue;
    const bool runnable = entry.is_directory() ||
                          (entry.status().permissions() & fs::perms::owner_exec) != fs::perms::none;
    fs::permissions(entry.path(), runnable ? read_exec : read_only);
  }
}

bool executable(const fs::path& path) { return access(path.c_str(), X_OK) == 0; }

std::string cap(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + "\n[... " + std::to_string(text.size() - limit) +
         " more bytes of compiler output cut]";
}

// The first line nvcc or the host compiler marked as an error, for the one-line reason.
std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos)
      return line.size() > 300 ? line.substr(0, 300) : line;
  }
  return log.substr(0, std::min<std::size_t>(log.find('\n'), 300));
}

bool is_under(const fs::path& path, const fs::path& dir) {
  const auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

void add_read_only(std::vector<sandbox::Bind>& binds, const fs::path& path) {
  if (path.empty() || !fs::exists(path)) return;
  for (const auto& b : binds) {
    if (b.target.empty() && (path == b.source || is_under(path, b.source))) return;
  }
  binds.push_back({path.string(), "", false, true});
}

std::string arg_text(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A ranked run's secret: the request's, else drawn here (47 bits).
std::int64_t secret_for(const EvalRequest& request) {
  if (request.secret_seed) return *request.secret_seed;
  std::random_device random;
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(random()) << 31) ^ random()) &
         0x7fffffffffffLL;
}

void case_line(std::ostringstream& job, const char* kind, const nlohmann::ordered_json& args) {
  job << kind;
  for (const auto& [key, value] : args.items()) job << "\t" << key << "=" << arg_text(value);
  job << "\n";
}

// The job for eval.cu: tab-separated lines (it has no JSON parser to keep its build small).
std::string job_lines(const EvalRequest& request, const problem::Problem& problem,
                      std::int64_t secret) {
  std::ostringstream job;
  job << "mode\t" << to_string(request.mode) << "\n";
  job << "result_fd\t3\n";
  for (const auto& [key, value] : request.timing.items()) {
    if (value.is_number()) job << "timing\t" << key << "\t" << value.dump() << "\n";
  }
  if (request.mode == Mode::leaderboard) job << "secret\t" << secret << "\n";
  for (const auto& args : problem.tests) case_line(job, "test", args);
  for (const auto& args : problem.benchmarks) case_line(job, "benchmark", args);
  return job.str();
}

// What stands for the submission in the reference's own program: it is never called there
// (eval.cu's mode reference), and nothing of the submission is compiled in.
constexpr const char* kReferenceStandIn =
    "// kerneljudge: the reference's own program has no submission (mode reference).\n"
    "#include <stdexcept>\n"
    "#include \"task.h\"\n"
    "output_t custom_kernel(const input_t&) {\n"
    "  throw std::logic_error(\"the reference's program holds no submission\");\n"
    "}\n";

}  // namespace

std::string reference_job_lines(const nlohmann::json& job, std::int64_t secret) {
  std::ostringstream lines;
  lines << "mode\treference\nresult_fd\t3\n";
  for (const auto& [key, value] : job["timing"].items()) {
    if (value.is_number()) lines << "timing\t" << key << "\t" << value.dump() << "\n";
  }
  if (job.value("ranked", false)) lines << "ranked\t1\nsecret\t" << secret << "\n";
  for (std::size_t i = 0; i < job["benchmarks"].size(); ++i) {
    case_line(lines, "benchmark", job["benchmarks"][i]);
    lines << "salt\t" << job["salts"][i].get<std::int64_t>() << "\n";
    lines << "samples\t" << job["samples"][i].get<std::size_t>() << "\n";
  }
  return lines.str();
}

std::optional<fs::path> find_nvcc() {
  if (const char* env = std::getenv("KJ_NVCC"); env != nullptr && *env != '\0') {
    if (executable(env)) return fs::absolute(env);
    return std::nullopt;  // named but unusable: do not silently take another
  }
  for (const char* home : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* dir = std::getenv(home); dir != nullptr && *dir != '\0') {
      if (executable(fs::path(dir) / "bin" / "nvcc")) return fs::path(dir) / "bin" / "nvcc";
    }
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && executable(fs::path(dir) / "nvcc")) return fs::path(dir) / "nvcc";
  }
  if (executable("/usr/local/cuda/bin/nvcc")) return fs::path("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

fs::path cuda_cache_dir() { return cache_dir("KJ_CUDA_CACHE", "cuda", "kj-cuda-cache"); }

std::string cuda_arch_for(const std::string& device) {
  if (const char* env = std::getenv("KJ_CUDA_ARCH"); env != nullptr && *env != '\0') {
    std::string arch = env;
    arch.erase(std::remove(arch.begin(), arch.end(), '.'), arch.end());
    if (!arch.empty() && arch.find_first_not_of("0123456789") == std::string::npos) return arch;
  }
  if (device.starts_with("cuda:")) {
    // A GPU's compute capability does not change while the process runs: asked once per device.
    static std::mutex mutex;
    static std::map<std::string, std::string> known;
    {
      std::lock_guard lock(mutex);
      if (const auto it = known.find(device); it != known.end()) return it->second;
    }
    const auto out = capture("nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i " +
                             shell_quote(device.substr(5)));
    if (out) {
      std::string arch;
      for (char c : *out) {
        if (c >= '0' && c <= '9') arch += c;
      }
      if (arch.size() >= 2) {
        std::lock_guard lock(mutex);
        return known.emplace(device, arch).first->second;
      }
    }
  }
  return "90";  // Hopper: what the GPU machines have; a CPU host still compiles for it
}

std::vector<std::string> nvcc_flags(const std::string& arch, bool arch_specific) {
  std::vector<std::string> flags = {"-std=c++20", "-O3", "-lineinfo", "-gencode",
                                    "arch=compute_" + arch + ",code=sm_" + arch};
  if (arch_specific && std::stoi(arch) >= 90) {
    flags.insert(flags.end(), {"-gencode", "arch=compute_" + arch + "a,code=sm_" + arch + "a"});
  }
  return flags;
}

CudaBuild build_cuda_program(const fs::path& task_dir, const Environment& environment,
                             const std::string& arch, const sandbox::Limits& limits,
                             std::chrono::milliseconds compile_wall) {
  CudaBuild build;
  const auto nvcc = find_nvcc();
  if (!nvcc) {
    build.infrastructure = true;
    build.failure =
        "nvcc not found (set KJ_NVCC or CUDA_HOME, or put the CUDA toolkit's bin on PATH)";
    return build;
  }
  const fs::path harness = environment.harness_dir / "cuda";
  if (!fs::is_regular_file(harness / "eval.cu") || !fs::is_regular_file(harness / "kj_cuda.h")) {
    build.infrastructure = true;
    build.failure = "the CUDA harness (cuda/eval.cu, cuda/kj_cuda.h) is missing from " +
                    environment.harness_dir.string();
    return build;
  }
  build.nvcc_version = nvcc_version(*nvcc);
  // A CPU host compiles to check the source, for sm_XY only; a GPU gets sm_XYa code too.
  const auto flags = nvcc_flags(arch, environment.device != "cpu");

  // Everything that decides the program: recipe, compiler, flags, harness, task files.
  std::string material = std::string(kBuildRecipe) + "\n" + build.nvcc_version + "\n";
  for (const auto& f : flags) material += f + "\n";
  for (const char* name : {"eval.cu", "kj_cuda.h"}) {
    const std::string text = read_file(harness / name);
    material += "harness/" + std::string(name) + " " + std::to_string(text.size()) + "\n" + text;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(task_dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string text = read_file(file);
    material +=
        "task/" + file.filename().string() + " " + std::to_string(text.size()) + "\n" + text;
  }
  build.key = sha256_hex(material);

  build.command = {nvcc->string()};
  build.command.insert(build.command.end(), flags.begin(), flags.end());
  build.command.insert(
      build.command.end(),
      {"-I", kTaskMount, "-I", std::string(kHarnessMount) + "/cuda", "-o",
       std::string(kBuildMount) + "/" + kProgramName, std::string(kHarnessMount) + "/cuda/eval.cu",
       std::string(kTaskMount) + "/submission.cu"});

  const fs::path root = cuda_cache_dir();
  const fs::path entry = root / build.key;
  if (executable(entry / kProgramName)) {
    try {
      make_world_readable(entry);  // an entry cached before its permissions were set
    } catch (const fs::filesystem_error&) {
    }
    build.ok = true;
    build.cached = true;
    build.program = entry / kProgramName;
    return build;
  }

  std::optional<TempDir> out;
  try {
    out.emplace("build-", root);
  } catch (const std::exception& e) {
    build.infrastructure = true;
    build.failure = std::string("build cache: ") + e.what();
    return build;
  }
  // As root the sandbox runs as host uid 65534, which must be able to write the output.
  if (geteuid() == 0) set_owner(out->path(), kSandboxUid);
  sandbox::Spec spec;
  spec.argv = build.command;
  spec.binds = environment.binds;
  // The toolkit, where it lies outside the system directories already visible.
  std::error_code ec;
  add_read_only(spec.binds, fs::canonical(*nvcc, ec).parent_path().parent_path());
  add_read_only(spec.binds, nvcc->parent_path().parent_path());
  spec.binds.push_back({harness.parent_path().string(), kHarnessMount, false, false});
  spec.binds.push_back({task_dir.string(), kTaskMount, false, false});
  spec.binds.push_back({out->path().string(), kBuildMount, true, false});
  spec.env = {"PATH=" + nvcc->parent_path().string() + ":/usr/local/bin:/usr/bin:/bin", "HOME=/tmp",
              "TMPDIR=/tmp", "LANG=C.UTF-8"};
  spec.workdir = "/tmp";
  spec.result_fd = -1;
  spec.limits = limits;
  spec.limits.wall = std::min<std::chrono::milliseconds>(compile_wall, kCompileWall);
  spec.limits.max_processes = std::max(limits.max_processes, 64);
  spec.limits.output_bytes = kCompileLogCap * 4;

  const auto started = std::chrono::steady_clock::now();
  const sandbox::Outcome outcome = sandbox::run(spec);
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Paths inside the sandbox mean nothing to the author: show the task's file names.
  std::string log = outcome.stdout_data + outcome.stderr_data;
  for (const std::string& prefix :
       {std::string(kTaskMount) + "/", std::string(kHarnessMount) + "/"}) {
    for (std::size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at)) {
      log.erase(at, prefix.size());
    }
  }
  build.log = cap(log, kCompileLogCap);
  build.limit = outcome.limit;
  if (!outcome.started) {
    build.infrastructure = true;
    build.failure = "the compiler's sandbox could not start: " + outcome.setup_error;
    return build;
  }
  if (outcome.limit != sandbox::LimitHit::none) {
    build.failure = "compilation hit its " + sandbox::to_string(outcome.limit) + " limit";
    return build;
  }
  if (outcome.exit_code != 0 || !executable(out->path() / kProgramName)) {
    build.failure = "nvcc failed: " + first_error_line(build.log);
    return build;
  }
  // The cache belongs to the judge again: later sandboxed runs must not be able to change it.
  if (geteuid() == 0) set_owner(out->path(), 0);
  make_world_readable(out->path());  // mkdtemp made it 0700: the run's user could not enter
  // Published whole or not at all: a concurrent build of the same key may have won.
  fs::rename(out->path(), entry, ec);
  if (!ec) {
    out->release();
    build.program = entry / kProgramName;
  } else if (executable(entry / kProgramName)) {
    build.program = entry / kProgramName;
  } else {
    build.infrastructure = true;
    build.failure = "cannot store the build in " + entry.string() + ": " + ec.message();
    return build;
  }
  build.ok = true;
  return build;
}

nlohmann::json to_json(const CudaBuild& build) {
  return {{"ok", build.ok},
          {"cached", build.cached},
          {"key", build.key},
          {"command", build.command},
          {"nvcc_version", build.nvcc_version},
          {"seconds", build.seconds},
          {"log", build.log},
          {"failure", build.failure}};
}

namespace {

// The sandbox that runs a built program (the submission's, or the reference's own) on `job`.
sandbox::Spec program_spec(const fs::path& program, const std::string& job,
                           const Environment& environment, const EvalRequest& request,
                           std::chrono::milliseconds wall) {
  sandbox::Spec spec;
  spec.argv = environment.wrapper;  // profile mode: ncu ...
  spec.argv.push_back(std::string(kBuildMount) + "/" + kProgramName);
  spec.binds = environment.binds;
  spec.binds.push_back({program.parent_path().string(), kBuildMount, false, false});
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"};
  for (const auto& variable : environment.env) {
    if (variable == "KJ_PROFILE=1") spec.env.push_back(variable);
  }
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_MODULE_LOADING"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      spec.env.push_back(std::string(name) + "=" + value);
    }
  }
  spec.workdir = "/tmp";
  spec.devices = gpu_device_nodes(environment.device);
  spec.stdin_data = job;
  spec.limits = request.limits;
  spec.limits.wall = wall;
  spec.result_fd = 3;
  return spec;
}

// The reference's timing by its own program (built with kReferenceStandIn, so nothing of the
// submission is in it), in a sandbox of its own once the submission's program has ended, on the
// inputs that run timed (its salts, the same secret). Its samples and the speedup go into
// `result`; any failure leaves the verdict and drops the speedup with a warning.
void time_reference_program(const EvalRequest& request, const Environment& environment,
                            const CudaBuild& build, std::span<const nlohmann::json> events,
                            std::int64_t secret, std::chrono::milliseconds wall,
                            EvalResult& result) {
  result.process_times["reference_build_s"] = build.seconds;
  if (!build.ok) {
    return omit_speedup(result, "its program did not build (" + cut(build.failure, 300) + ")");
  }
  std::string why;
  const auto job = reference_job(request, true, result, events, &why);
  if (!job) return omit_speedup(result, why);
  const sandbox::Outcome outcome = sandbox::run(
      program_spec(build.program, reference_job_lines(*job, secret), environment, request, wall));
  merge_reference(result, outcome);
}

}  // namespace

CudaBuild build_reference_program(const problem::Problem& problem, const Environment& environment,
                                  const std::string& arch, const sandbox::Limits& limits) {
  CudaBuild build;
  try {
    const TempDir task("kj-cuda-reference-");
    problem::materialize(problem, kReferenceStandIn, task.path() / "task");
    build = build_cuda_program(task.path() / "task", environment, arch, limits, kCompileWall);
  } catch (const std::exception& e) {
    build.ok = false;
    build.infrastructure = true;
    build.failure = e.what();
  }
  return build;
}

EvalResult evaluate_cuda(const EvalRequest& request, const Environment& environment) {
  const problem::Problem& problem = *request.problem;
  if (request.mode == Mode::compare) {
    return not_started(request, environment, Verdict::internal_error,
                       "kj compare does not support lang: cu problems yet");
  }

  std::optional<TempDir> task;
  try {
    task.emplace("kj-cuda-");
    problem::materialize(problem, request.submission_source, task->path() / "task");
  } catch (const std::exception& e) {
    return not_started(request, environment, Verdict::internal_error,
                       std::string("cannot prepare the task files: ") + e.what());
  }
  const fs::path task_dir = task->path() / "task";
  if (problem.submission_file().name != "submission.cu") {
    return not_started(request, environment, Verdict::internal_error,
                       "a lang: cu problem's submission file must be named submission.cu, not " +
                           problem.submission_file().name);
  }

  const std::string arch = cuda_arch_for(environment.device);
  CudaBuild build;
  try {
    build = build_cuda_program(task_dir, environment, arch, request.limits,
                               request.timeout.value_or(kCompileWall));
  } catch (const std::exception& e) {
    build.infrastructure = true;
    build.failure = e.what();
  }
  if (!build.ok) {
    const Verdict verdict =
        build.infrastructure                       ? Verdict::internal_error
        : build.limit == sandbox::LimitHit::memory ? Verdict::memory_limit
        : build.limit == sandbox::LimitHit::wall_time || build.limit == sandbox::LimitHit::cpu_time
            ? Verdict::time_limit
            : Verdict::compile_error;
    EvalResult result = not_started(request, environment, verdict, build.failure);
    result.compilation = to_json(build);
    if (!build.infrastructure) {
      result.error = ErrorInfo{"compile", "CompileError", build.log, "", std::nullopt};
    }
    return result;
  }
  if (environment.device == "cpu") {
    const std::string why =
        "compiled for sm_" + arch + "; a lang: cu problem runs only on a GPU (--device cuda:N)";
    EvalResult result = not_started(request, environment, Verdict::internal_error, why);
    result.compilation = to_json(build);
    result.not_run = why;
    return result;
  }

  // The reference's own program, when it is timed alone: built before the GPU is taken.
  std::optional<CudaBuild> reference_build;
  if (reference_timed(request)) {
    reference_build = build_reference_program(problem, environment, arch, request.limits);
  }

  std::chrono::seconds timeout = problem.test_timeout;
  if (request.mode == Mode::benchmark) timeout = problem.benchmark_timeout;
  if (request.mode == Mode::leaderboard) timeout = problem.ranked_timeout;
  const auto wall =
      request.timeout.value_or(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  const std::int64_t secret = secret_for(request);

  std::optional<GpuLease> lease;  // after the builds: nvcc needs no GPU
  try {
    lease.emplace(environment.device);
  } catch (const std::exception& e) {
    return not_started(request, environment, Verdict::internal_error, e.what());
  }
  GpuMonitor monitor(std::stoi(environment.device.substr(5)));
  std::string gpu_error;
  const auto gpu_before = monitor.read(&gpu_error);
  const sandbox::Outcome outcome = sandbox::run(
      program_spec(build.program, job_lines(request, problem, secret), environment, request, wall));
  std::string parse_error;
  const auto events = parse_events(outcome.result_data, &parse_error);
  EvalResult result = decide(outcome, events, request.mode, problem);
  if (!parse_error.empty() && result.verdict == Verdict::accepted) {
    result.verdict = Verdict::internal_error;
    result.reason = parse_error;
  }
  result.submission = request.submission_name;
  result.device = environment.device;
  result.compilation = to_json(build);
  result.process_times["gpu_wait_s"] = lease->waited_s();
  result.gpu_health = check_gpu_after_run(monitor, gpu_before, std::chrono::seconds(5));
  if (!gpu_before && !gpu_error.empty()) result.gpu_health.message = gpu_error;
  // The submission's program has ended: the reference is timed alone, under the same lease.
  if (reference_build && result.verdict == Verdict::accepted && !result.benchmarks.empty()) {
    time_reference_program(request, environment, *reference_build, events, secret, wall, result);
  }
  return result;
}

}  // namespace kj::judge::detail
