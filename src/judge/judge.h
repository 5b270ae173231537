// The pipeline for one submission: materialize the task, run the harness in the sandbox, turn
// the harness's facts and the sandbox's outcome into a verdict. No HTTP, no SQL.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/stats.h"
#include "problem/problem.h"
#include "sandbox/sandbox.h"

namespace kj::judge {

enum class Verdict {
  accepted,
  wrong_answer,
  compile_error,
  runtime_error,
  time_limit,
  memory_limit,
  output_limit,
  security_violation,
  internal_error,
};
std::string to_string(Verdict verdict);
std::optional<Verdict> verdict_from_string(std::string_view name);

// profile: the first benchmark case called once under Nsight Compute (EvalResult::profile).
enum class Mode { test, benchmark, leaderboard, compare, profile };
std::string to_string(Mode mode);
std::optional<Mode> mode_from_string(std::string_view name);

// Where and with what the harness runs. Built once per process by discover_environment.
struct Environment {
  std::filesystem::path python;       // harness interpreter, absolute
  std::filesystem::path harness_dir;  // the folder holding kj_harness/
  std::string device = "cpu";         // "cpu" or "cuda:N" (host numbering)
  std::vector<sandbox::Bind> binds;   // read-only: system dirs, interpreter prefixes
  std::vector<std::string> env;       // passed to the harness, "KEY=VALUE"
  std::vector<std::string> wrapper;   // put before the harness's command line (profile: ncu)
  // Multi-rank (multi_gpu) problems on a GPU host: the GPUs reserved for the run, one per rank
  // ("cuda:N"); empty means `device` alone. A CPU run puts every rank on the CPU.
  std::vector<std::string> rank_devices;
  // Sealed timing's recording shim on the host (docs/sealed-timing.md); empty: none. On a GPU,
  // harness_sandbox binds it read-only at kRecordShimMount, and `env` holds LD_PRELOAD and
  // KJ_RECORD_SHIM naming it there. Never on a CPU.
  std::filesystem::path record_shim;
};

// Where the recording shim is inside the sandbox.
inline constexpr const char* kRecordShimMount = "/kj/lib/libkj_record.so";

// Finds the interpreter (explicit path, else $KJ_PYTHON, else python3 on PATH) and the harness
// (explicit, else $KJ_HARNESS_DIR, else harness/ beside or above the kj executable), asks the
// interpreter for its prefixes, and prepares binds and environment for `device`. On a GPU it
// also finds the recording shim: $KJ_RECORD_SHIM (a path; `off` or empty: none), else
// libkj_record.so beside the kj executable, else none (the harness then times in process).
// Throws std::runtime_error with a message saying what is missing, $KJ_RECORD_SHIM naming a
// file that does not exist included (on any device).
Environment discover_environment(const std::optional<std::string>& python,
                                 const std::optional<std::string>& harness_dir,
                                 const std::string& device);

// The device nodes a sandboxed run on `device` ("cuda:N") is given: the GPU's own, the control
// and the unified-memory nodes; none for "cpu".
std::vector<std::string> gpu_device_nodes(std::string_view device);

// One evaluation per GPU at a time on this host. Every kj process that runs code on a GPU (kj
// eval and compare, workers, the bootstrap) holds the GPU's lease while that code runs, so runs
// started together never share a GPU's memory or its time: a run beside another could find the
// memory taken (an honest kernel failing to allocate) or its samples time-sliced. The lease is an
// exclusive flock on `$KJ_LOCK_DIR/kerneljudge-gpu<N>.lock` (default /tmp), N the device's host
// number; the kernel drops it when its holder ends, crashes included. Constructing one waits
// until it is held; "cpu" holds nothing. Throws std::runtime_error when the lock file cannot be
// opened.
class GpuLease {
 public:
  explicit GpuLease(std::string_view device);
  ~GpuLease();
  GpuLease(GpuLease&& other) noexcept;
  GpuLease& operator=(GpuLease&&) = delete;
  GpuLease(const GpuLease&) = delete;
  GpuLease& operator=(const GpuLease&) = delete;

  // Seconds spent waiting for another run to give the GPU back, to the millisecond.
  double waited_s() const { return waited_s_; }

 private:
  int fd_ = -1;
  double waited_s_ = 0;
};

// The sandbox every harness run starts from: the environment's binds and variables, the harness
// bound where the environment's PYTHONPATH expects it, the recording shim where the environment's
// LD_PRELOAD expects it (when it has one), and the device's GPU nodes. The caller
// adds the command, its task and the limits (an evaluation; the bootstrap's PyTorch probe).
sandbox::Spec harness_sandbox(const Environment& environment);

// What the static screen found in a submission: a reject ends the evaluation before it runs
// (security_violation); a flag is shown in the report.
struct ScreenFinding {
  std::string rule;
  bool reject = false;
  int line = 0;
  std::string excerpt;
  std::string reason;
};
std::vector<ScreenFinding> screen_python(std::string_view source);
// A problem's kernel_language rule read statically (triton: a @triton.jit function must be
// defined; any rule other than any: the reference must not be used). Empty when it holds.
std::optional<ScreenFinding> screen_kernel_language(std::string_view source,
                                                    std::string_view language);

struct ErrorInfo {
  std::string stage;  // load_reference, load_submission, run, harness, sandbox
  std::string type;
  std::string message;
  std::string traceback;
  std::optional<int> signal;  // the submission's process was killed by this signal
};

struct CaseResult {
  int index = 0;
  std::string phase;  // public, or ranked (leaderboard mode: seeds mixed with the secret)
  nlohmann::ordered_json spec;
  std::string status;  // pass, fail, error
  std::string message;
  std::optional<ErrorInfo> error;
  double elapsed_ns = 0;             // one untimed call (tests)
  std::vector<double> samples;       // benchmark samples, ns
  std::string clock;                 // cuda_event, cuda_graph or monotonic
  std::string method;                // per_call or graph
  std::string stop_reason;           // which stopping rule ended the sampling
  int batch = 1;                     // calls per sample (graph batches)
  bool at_launch_floor = false;      // median below the launch floor: too short to rank apart
  int rechecked = 0;                 // timed outputs re-checked after timing
  std::string recheck_path;          // how they reached the checker: cuda_ipc or pipe
  int other_stream_samples = 0;      // samples where the call left work on another stream
  std::string timing;                // who timed it: sealed or in_process; empty: not said
  std::string timing_note;           // in_process: why not sealed, one line
  std::vector<double> sm_clock_mhz;  // per sample; empty when NVML was unavailable
  double median_clock_mhz = 0;
  bench::Summary summary;
  double floor_ns = 0;  // shortest physically possible time (task.yml bytes/flops), 0: unknown
  double sol_pct = 0;   // % of speed-of-light against measured ceilings, 0: unknown
  std::vector<double> reference_samples;  // the reference's: its own run, or kept between runs
  bench::Summary reference_summary;
  std::map<std::string, double> seconds;  // where the case's wall time went (run, check, timing)
  double speedup() const {
    return summary.median > 0 && reference_summary.n > 0 ? reference_summary.median / summary.median
                                                         : 0;
  }
};

// One A/B comparison of a benchmark case (kj compare), from interleaved rounds.
struct Comparison {
  int index = 0;
  int trial = 0;
  nlohmann::ordered_json spec;
  std::vector<double> samples_a;
  std::vector<double> samples_b;
  std::string stop_reason;
  bench::PairedComparison result;
};

// The GPU after a GPU run: no process left on it that was not there before, and device memory
// in use back to its level before the run (within a tolerance). An unhealthy GPU does not
// change the verdict; it tells the worker to stop taking jobs for that GPU (docs/sandbox.md).
struct GpuHealth {
  bool checked = false;  // false: a CPU run, or NVML unavailable (see message)
  bool ok = true;
  std::vector<unsigned> leftover_processes;  // host pids
  std::uint64_t memory_used_before_bytes = 0;
  std::uint64_t memory_used_after_bytes = 0;
  std::string message;
};

struct GpuReading {
  std::uint64_t memory_used_bytes = 0;
  std::vector<unsigned> pids;  // compute processes on the GPU, sorted
};

constexpr std::uint64_t kGpuMemoryTolerance = 64ULL << 20;

// Reads one GPU through NVML, loaded with dlopen at run time (no link-time dependency: kj runs
// on hosts without the driver). Owns the library handle and the nvmlInit/nvmlShutdown session.
class GpuMonitor {
 public:
  // `minor`: the GPU whose device node is /dev/nvidia<minor>, the one the sandbox exposes.
  explicit GpuMonitor(int minor, const char* library = "libnvidia-ml.so.1");
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;
  bool available() const { return nvml_ != nullptr; }
  const std::string& error() const { return error_; }  // why it is not available
  int minor() const { return minor_; }
  std::optional<GpuReading> read(std::string* error) const;

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string error_;
  int minor_ = 0;
};

// The decision, from readings before and after a run.
GpuHealth assess_gpu_health(const GpuReading& before, const GpuReading& after,
                            std::uint64_t tolerance_bytes = kGpuMemoryTolerance);
// Reads the GPU until it is healthy or `grace` has passed (the driver releases a killed
// process's memory shortly after it is reaped). Not checked when `before` is missing.
GpuHealth check_gpu_after_run(const GpuMonitor& monitor, const std::optional<GpuReading>& before,
                              std::chrono::milliseconds grace);

struct EvalResult {
  Verdict verdict = Verdict::internal_error;
  std::string reason;  // one line saying why
  Mode mode = Mode::test;
  std::string problem;
  std::string submission;
  std::string device;
  // Which of task.yml's benchmark lists ran: "benchmarks", or "cpu_benchmarks" on a CPU when the
  // problem has CPU-sized cases.
  std::string benchmark_set = "benchmarks";
  std::vector<CaseResult> tests;  // public tests
  std::vector<CaseResult>
      benchmarks;  // timed benchmarks (benchmark mode: public; leaderboard: ranked)
  std::vector<CaseResult> ranked_tests;       // leaderboard: tests on secret-mixed seeds
  std::vector<CaseResult> public_benchmarks;  // leaderboard: benchmark shapes checked, untimed
  std::vector<Comparison> comparisons;        // compare mode
  std::optional<double> score_ns;  // all timed benchmarks passed: ranking_by over medians
  std::optional<double> speedup;   // the reference's score over the submission's
  std::string ranking_by;
  std::optional<ErrorInfo> error;
  std::vector<ScreenFinding> screen;                 // static screen findings (flags)
  nlohmann::json system = nlohmann::json::object();  // interpreter, torch, triton, GPU name
  // The harness process's own clock: imports before the job, its age at hello and at done
  // (seconds since it was created), so start-up and teardown show beside the sandbox's wall.
  nlohmann::json process_times = nlohmann::json::object();
  // (event, seconds since the harness started) for each harness event: where a run's time went.
  std::vector<std::pair<std::string, double>> timeline;
  GpuHealth gpu_health;      // GPU runs: checked after the sandbox ended
  sandbox::Outcome outcome;  // exit, limits, wall, cpu, memory, output
  // lang: cu: the nvcc build (ok, cached, key, command, nvcc_version, seconds, log, failure).
  nlohmann::json compilation;
  std::string not_run;  // why a compiled submission was not run (no GPU here); empty if it ran
  // Profile mode: available, message, report (path of the .ncu-rep), kernels (duration_ns,
  // memory_throughput_pct, sm_throughput_pct, top_stalls).
  nlohmann::json profile;
  // Runs with a compile cache: files offered, restored and stale (built by another toolchain)
  // in the run, files it reported, and what the judge stored or refused of them.
  nlohmann::json compile_cache;
  // Multi-rank runs: per rank {rank, device, verdict, reason, wall_s}; empty for one rank.
  nlohmann::json ranks = nlohmann::json::array();
};

// Timing caps when none are given, by device: on a GPU the judge's (15 s and 1000 samples per
// case); on a CPU short ones (1 s and 100 samples), since CPU times are for development only and
// the long caps made a leaderboard-mode run take minutes (docs/perf.md). The harness's keys.
nlohmann::json default_timing(std::string_view device);

// Submissions larger than this are refused before anything runs (kj eval --max-source-bytes).
constexpr std::size_t kDefaultMaxSourceBytes = 1 << 20;

struct EvalRequest {
  const problem::Problem* problem = nullptr;
  std::string submission_source;
  std::string submission_name;
  std::string second_source;  // compare mode: submission B
  std::string second_name;
  int trials = 1;                           // compare mode: independent comparisons per benchmark
  std::optional<std::int64_t> secret_seed;  // leaderboard mode; random when unset
  bool time_reference = true;               // time the reference, alone after the run (speedup)
  bool screen = true;                       // run the static screen first
  std::size_t max_source_bytes = kDefaultMaxSourceBytes;  // each source; larger: compile_error
  Mode mode = Mode::test;
  std::optional<std::chrono::milliseconds> timeout;  // default: the problem's timeout for mode
  sandbox::Limits limits;                            // wall is overridden by the timeout
  nlohmann::json timing = nlohmann::json::object();  // benchmark settings passed to the harness
  // Whose compile cache the run reads and feeds (compile_cache.h), e.g. a store and a user; the
  // judge narrows it to this exact source. Empty: no compile cache.
  std::string compile_cache_scope;
};

class HarnessZygote;

// A harness started ahead of its job: its sandbox is set up and torch imported while the worker
// waits for work, so the job starts in milliseconds instead of seconds. Serves one evaluation
// at most: a fresh one per job keeps every job in a sandbox of its own. Abandoned (the process
// killed) when destroyed unused.
class WarmHarness {
 public:
  WarmHarness(const Environment& environment, const sandbox::Limits& limits);
  ~WarmHarness();
  WarmHarness(const WarmHarness&) = delete;
  WarmHarness& operator=(const WarmHarness&) = delete;

  // True while unused, still running, and started for this device with these limits (the wall
  // limit aside: it is given with the job).
  bool fits(const EvalRequest& request, const Environment& environment) const;

  struct State;

 private:
  friend EvalResult evaluate(const EvalRequest&, const Environment&, WarmHarness*, HarnessZygote*);
  std::unique_ptr<State> state_;
};

// A zygote of harnesses (docs/sandbox.md, "Zygote"): one process, in a sandbox like a
// harness's, that imported torch, numpy and triton once and forks each evaluation's harness
// into a sandbox of its own, so back-to-back jobs start in milliseconds. Nothing in it starts
// CUDA (a context does not survive fork): on a GPU each forked run's processes create their own.
// Serves any number of evaluations, one at a time.
class HarnessZygote {
 public:
  // Starts the zygote; it is ready (wait_ready) once its imports are done.
  HarnessZygote(const Environment& environment, const sandbox::Limits& limits);
  ~HarnessZygote();
  HarnessZygote(const HarnessZygote&) = delete;
  HarnessZygote& operator=(const HarnessZygote&) = delete;

  // True when it has not failed and was started for this device with these limits (the wall
  // limit aside) and no wrapper (a profile's) is asked for.
  bool fits(const EvalRequest& request, const Environment& environment) const;
  bool wait_ready(std::chrono::milliseconds timeout);
  // A run forked from the zygote that is not an evaluation: the harness reads `job` (one JSON
  // line; its "mode" says what it does, e.g. the bootstrap's "bootstrap_probe") with `task` as
  // its read-only task directory, under `limits`. The outcome is sandbox::run's; a setup_error
  // starting with "zygote" means the zygote could not start it (not the run's doing).
  sandbox::Outcome fork_run(std::vector<std::pair<std::string, std::string>> task,
                            const std::string& job, const sandbox::Limits& limits);
  // It can serve no more runs (it exited, or this host cannot give forked runs their cgroups).
  bool failed() const;
  std::string failure() const;
  int pid() const;  // host pid of the zygote process (-1 until ready)

  struct State;

 private:
  friend EvalResult evaluate(const EvalRequest&, const Environment&, WarmHarness*, HarnessZygote*);
  std::unique_ptr<State> state_;
};

// Keeps one HarnessZygote serving (the one policy for replacing a failed zygote, used by
// workers, kj daemon and kj bootstrap's lanes): get() returns the zygote, starting it, or a new
// one in place of one that failed; after kMaxFailures zygotes in a row failed (each replaced
// before it served a run: the host cannot run them), or when one cannot be started at all, it
// gives up and get() returns nullptr for good (the caller then starts harnesses itself). `say`
// gets one line for each failure and one when it gives up.
class ZygoteKeeper {
 public:
  static constexpr int kMaxFailures = 3;
  ZygoteKeeper(Environment environment, sandbox::Limits limits,
               std::function<void(const std::string&)> say);
  HarnessZygote* get();
  HarnessZygote* current() const { return zygote_.get(); }  // as it is, nothing started
  bool gave_up() const { return gave_up_; }

 private:
  Environment environment_;
  sandbox::Limits limits_;
  std::function<void(const std::string&)> say_;
  std::unique_ptr<HarnessZygote> zygote_;
  int failures_ = 0;  // zygotes in a row that failed before the next get() found one serving
  bool gave_up_ = false;
};

// Runs one evaluation: forked from `zygote` when given and it fits, else in `warm` when given
// and it fits, else in a harness started now. A zygote that cannot start the run is passed over
// for a harness started now, and the outcome's warnings say so. Never throws for anything the
// submission does.
EvalResult evaluate(const EvalRequest& request, const Environment& environment,
                    WarmHarness* warm = nullptr, HarnessZygote* zygote = nullptr);

// The harness's result lines; a line that is not a JSON object is an error (the harness is ours).
std::vector<nlohmann::json> parse_events(std::string_view result_data, std::string* error);

// Facts to verdict: the sandbox outcome first (limits, seccomp), then the harness's events.
EvalResult decide(const sandbox::Outcome& outcome, std::span<const nlohmann::json> events,
                  Mode mode, const problem::Problem& problem);

using problem::describe_args;

nlohmann::json to_json(const EvalResult& result);
// Profile mode's summary for people: per kernel its duration, throughputs and top stall
// reasons, and where the report is (EvalResult::profile).
std::string profile_text(const nlohmann::json& profile);
std::string render_text(const EvalResult& result, bool verbose);

}  // namespace kj::judge
