// kerneljudge's harness for `lang: cu` problems: compiled with the problem's reference.cuh and
// task.h and the submission into one program, run inside the sandbox. It reads its job on stdin
// (tab-separated lines, written by the judge), and reports the same result events as the Python
// harness (docs/harness-protocol.md) as JSON lines on fd 3. Timing follows docs/timing.md: fresh
// inputs per sample, cold L2 (persisting lines reset, memset of twice the L2) queued behind a
// spin so the launch is hidden, CUDA events around the call, device-wide sync, adaptive stop.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kj_cuda.h"
#include "reference.cuh"
#include "task.h"

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kStarted = Clock::now();
// The stage the harness is in, for errors thrown outside a call of the submission.
std::string g_stage = "load_reference";

struct Settings {
  int min_samples = 10;
  double min_seconds = 0.25;  // harness/kj_harness/timing.py: the same
  double target_rel_sem = 0.001;
  double target_rel_stdev = 0.005;
  double max_seconds = 15.0;
  int max_samples = 1000;
  double warmup_seconds = 0.05;
  double launch_floor_ns = 3000.0;
  double spin_us = 200.0;
};

struct Job {
  std::string mode = "test";
  std::int64_t secret = 0;
  int result_fd = 3;
  Settings timing;
  std::vector<kj::Args> tests;
  std::vector<kj::Args> benchmarks;
  // Mode `reference` (the reference timed alone, after the submission's run): per benchmark, in
  // order, the salt the submission's run drew for it and its sample count; `ranked` when those
  // were its ranked cases (their seeds mixed with `secret`).
  bool ranked = false;
  std::vector<std::uint64_t> salts;
  std::vector<int> samples;
};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string json_array(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + json_number(values[i]);
  return out + "]";
}

// One event line: `fields` is the object's body after "event" (comma-led, or empty).
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void emit(const std::string& event, const std::string& fields = "") const {
    const double t = std::chrono::duration<double>(Clock::now() - kStarted).count();
    std::string line = "{\"event\":" + json_string(event) + fields +
                       ",\"t_s\":" + json_number(std::round(t * 1e4) / 1e4) + "}\n";
    const char* data = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      const ssize_t n = write(fd_, data, left);
      if (n <= 0) return;
      data += n;
      left -= static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_;
};

std::string error_json(const std::string& type, const std::string& message) {
  return "{\"type\":" + json_string(type) + ",\"message\":" + json_string(message) +
         ",\"traceback\":\"\"}";
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) return parts;
    start = tab + 1;
  }
}

Job read_job() {
  Job job;
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto parts = split_tabs(line);
    if (parts.empty() || parts[0].empty()) continue;
    const std::string& key = parts[0];
    if (key == "mode" && parts.size() > 1) job.mode = parts[1];
    if (key == "secret" && parts.size() > 1) job.secret = std::stoll(parts[1]);
    if (key == "result_fd" && parts.size() > 1) job.result_fd = std::stoi(parts[1]);
    if (key == "ranked" && parts.size() > 1) job.ranked = parts[1] == "1";
    if (key == "salt" && parts.size() > 1) job.salts.push_back(std::stoull(parts[1]));
    if (key == "samples" && parts.size() > 1) job.samples.push_back(std::stoi(parts[1]));
    if (key == "timing" && parts.size() > 2) {
      const double v = std::stod(parts[2]);
      Settings& s = job.timing;
      if (parts[1] == "min_samples") s.min_samples = static_cast<int>(v);
      if (parts[1] == "min_seconds") s.min_seconds = v;
      if (parts[1] == "target_rel_sem") s.target_rel_sem = v;
      if (parts[1] == "target_rel_stdev") s.target_rel_stdev = v;
      if (parts[1] == "max_seconds") s.max_seconds = v;
      if (parts[1] == "max_samples") s.max_samples = static_cast<int>(v);
      if (parts[1] == "warmup_seconds") s.warmup_seconds = v;
      if (parts[1] == "spin_us") s.spin_us = v;
    }
    if (key == "test" || key == "benchmark") {
      kj::Args args;
      for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::size_t eq = parts[i].find('=');
        if (eq != std::string::npos) args.set(parts[i].substr(0, eq), parts[i].substr(eq + 1));
      }
      (key == "test" ? job.tests : job.benchmarks).push_back(std::move(args));
    }
  }
  Settings& s = job.timing;
  s.min_samples = std::min(s.min_samples, s.max_samples);
  s.min_seconds = std::min(s.min_seconds, s.max_seconds);
  return job;
}

// The same mixing as the Python harness's intent: a case's seed combined one-way with a salt.
kj::Args with_seed(const kj::Args& args, std::uint64_t salt, std::uint64_t kind) {
  if (!args.has("seed")) return args;
  kj::Args out = args;
  const std::uint64_t seed = static_cast<std::uint64_t>(args.integer("seed"));
  const std::uint64_t mixed = kj::detail::splitmix64(seed ^ kj::detail::splitmix64(salt ^ kind));
  out.set("seed", std::to_string(mixed & 0x00ffffffffffffffULL));
  return out;
}
constexpr std::uint64_t kIteration = 0x1111;
constexpr std::uint64_t kSecret = 0x2222;

// Stopping rule, the same as kj::bench::should_stop and the Python harness's.
const char* stop_reason(const std::vector<double>& samples, double elapsed, const Settings& s) {
  const std::size_t n = samples.size();
  if (n >= 2 && elapsed >= s.min_seconds && static_cast<int>(n) >= s.min_samples) {
    double mean = 0;
    for (double x : samples) mean += x;
    mean /= static_cast<double>(n);
    if (mean > 0) {
      double var = 0;
      for (double x : samples) var += (x - mean) * (x - mean);
      const double stdev = std::sqrt(var / static_cast<double>(n - 1));
      if (stdev / std::sqrt(static_cast<double>(n)) / mean <= s.target_rel_sem)
        return "precise_sem";
      if (stdev / mean <= s.target_rel_stdev) return "precise_stdev";
    }
  }
  if (static_cast<int>(n) >= s.max_samples) return "max_samples";
  if (elapsed >= s.max_seconds) return "max_seconds";
  return nullptr;
}

// Busy-waits on the device for `ns` nanoseconds: the next launches queue behind it.
__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  std::uint64_t now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

class Event {
 public:
  Event() { kj::check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Thrown when the submission's call failed (an exception, or a CUDA error after it).
struct CallFailed {
  std::string type;
  std::string message;
};

using Kernel = output_t (*)(const input_t&);

struct Sample {
  double ns = 0;
};

class Harness {
 public:
  Harness(Job job, const Reporter& report) : job_(std::move(job)), report_(report) {}

  bool run() {
    report_.emit("stage", ",\"stage\":\"load_reference\"");
    cudaDeviceProp props{};
    kj::check_cuda(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    report_.emit("device", ",\"name\":" + json_string(props.name));
    const std::size_t l2 =
        std::max<std::size_t>(static_cast<std::size_t>(props.l2CacheSize), std::size_t{50} << 20);
    flush_ = kj::DeviceBuffer<unsigned char>(2 * l2);
    if (job_.mode == "reference") return run_reference();
    g_stage = "load_submission";
    report_.emit("stage", ",\"stage\":\"load_submission\"");
    g_stage = "run";
    if (job_.mode == "benchmark") return run_benchmarks(job_.benchmarks, "public", true);
    if (job_.mode == "leaderboard") {
      if (!run_tests(job_.tests, "public")) return false;
      if (!run_benchmarks(job_.benchmarks, "public", false)) return false;
      std::vector<kj::Args> tests, benchmarks;
      const auto secret = static_cast<std::uint64_t>(job_.secret);
      for (const auto& a : job_.tests) tests.push_back(with_seed(a, secret, kSecret));
      for (const auto& a : job_.benchmarks) benchmarks.push_back(with_seed(a, secret, kSecret));
      if (!run_tests(tests, "ranked")) return false;
      return run_benchmarks(benchmarks, "ranked", true);
    }
    return run_tests(job_.tests, "public");
  }

 private:
  // Calls `kernel`, waits for the device, and turns any failure into CallFailed.
  // `end`, when given, is recorded right after the call returns, before the sync: the time
  // between the device finishing and the host noticing is not the submission's.
  static output_t call(Kernel kernel, const input_t& data, cudaEvent_t end = nullptr) {
    output_t out{};
    try {
      out = kernel(data);
    } catch (const std::exception& e) {
      throw CallFailed{"exception", e.what()};
    } catch (...) {
      throw CallFailed{"exception", "custom_kernel threw a non-standard exception"};
    }
    if (end != nullptr) cudaEventRecord(end);
    const cudaError_t launch = cudaGetLastError();
    const cudaError_t sync = cudaDeviceSynchronize();
    const cudaError_t status = launch != cudaSuccess ? launch : sync;
    if (status != cudaSuccess) {
      throw CallFailed{cudaGetErrorName(status), cudaGetErrorString(status)};
    }
    return out;
  }

  // Checked against inputs generated again: the submission's own may have been changed.
  kj::Check check(const kj::Args& args, const output_t& out) {
    const input_t fresh = generate_input(args);
    kj::check_cuda(cudaDeviceSynchronize(), "generate_input");
    return check_implementation(fresh, out);
  }

  // pass/fail/error fields of one checked call of the submission.
  std::string check_case(const kj::Args& args, double* elapsed_ns) {
    const input_t data = generate_input(args);
    kj::check_cuda(cudaDeviceSynchronize(), "generate_input");
    Event start, end;
    output_t out{};
    try {
      kj::check_cuda(cudaEventRecord(start.get()), "cudaEventRecord");
      out = call(custom_kernel, data, end.get());
    } catch (const CallFailed& failed) {
      return ",\"status\":\"error\",\"message\":" + json_string(failed.message) +
             ",\"error\":" + error_json(failed.type, failed.message);
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start.get(), end.get());
    if (elapsed_ns != nullptr) *elapsed_ns = ms * 1e6;
    const kj::Check result = check(args, out);
    return std::string(",\"status\":") + (result.ok ? "\"pass\"" : "\"fail\"") +
           ",\"message\":" + json_string(result.message);
  }

  bool run_tests(const std::vector<kj::Args>& cases, const char* phase) {
    report_.emit("stage", ",\"stage\":\"tests\",\"phase\":\"" + std::string(phase) + "\"");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      double elapsed = 0;
      const std::string fields = check_case(cases[i], &elapsed);
      report_.emit("test", ",\"index\":" + std::to_string(i) + ",\"phase\":\"" + phase + "\"" +
                               fields + ",\"elapsed_ns\":" + json_number(elapsed));
      if (fields.rfind(",\"status\":\"pass\"", 0) != 0) return false;
    }
    return true;
  }

  // One cold-L2 sample of `kernel` on fresh inputs; the output checked when `checked`.
  double sample(Kernel kernel, const kj::Args& args, bool checked, std::string* failure) {
    const input_t data = generate_input(args);
    kj::check_cuda(cudaDeviceSynchronize(), "generate_input");
    Event start, end;
    cudaCtxResetPersistingL2Cache();
    spin_kernel<<<1, 1>>>(static_cast<std::uint64_t>(job_.timing.spin_us * 1000));
    kj::check_cuda(cudaMemsetAsync(flush_.data(), 0, flush_.bytes()), "L2 flush");
    kj::check_cuda(cudaEventRecord(start.get()), "cudaEventRecord");
    output_t out{};
    // Profile mode: the one timed call of the submission is the range ncu is told to capture.
    const bool profiled = profiling_ && kernel == custom_kernel;
    if (profiled) nvtxRangePushA("kj_profile");
    out = call(kernel, data, end.get());  // end recorded, then a device-wide sync
    if (profiled) nvtxRangePop();
    float ms = 0;
    kj::check_cuda(cudaEventElapsedTime(&ms, start.get(), end.get()), "cudaEventElapsedTime");
    if (checked) {
      const kj::Check result = check(args, out);
      if (!result.ok) *failure = result.message;
    }
    return static_cast<double>(ms) * 1e6;
  }

  struct Series {
    std::vector<double> samples;
    const char* stop = nullptr;  // the stopping rule's reason
    int rechecked = 0;           // how many outputs were checked
    std::string failure;         // a failed check's message: the series ended there
  };

  // One series of cold-L2 samples of `kernel` on `args`' iterations, a warm-up first, until the
  // stopping rule (with `s`'s settings) ends it. When `checked`, the output of the first
  // iteration and of one random one of the first 10 is checked. Throws CallFailed.
  Series series(Kernel kernel, const kj::Args& args, const Settings& s, bool checked) {
    const auto begin = Clock::now();
    {  // Warm-up: caches, lazy loading, clocks.
      const input_t data = generate_input(with_seed(args, 0, kIteration));
      int calls = 0;
      while (calls < 3 || seconds_since(begin) < s.warmup_seconds) {
        call(kernel, data);
        if (++calls >= 1000) break;
      }
    }
    std::random_device random;
    const int recheck_at = static_cast<int>(random() % 10);
    const auto timing_start = Clock::now();
    Series out;
    for (int i = 0; out.stop == nullptr; ++i) {
      const kj::Args iteration = with_seed(args, static_cast<std::uint64_t>(i), kIteration);
      out.samples.push_back(
          sample(kernel, iteration, checked && (i == 0 || i == recheck_at), &out.failure));
      if (!out.failure.empty()) return out;
      out.stop = stop_reason(out.samples, seconds_since(timing_start), s);
    }
    out.rechecked = !checked ? 0 : recheck_at < static_cast<int>(out.samples.size()) ? 2 : 1;
    return out;
  }

  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // The submission's timing of one benchmark case, on inputs of a salt drawn here; the salt is
  // reported with the samples, for the reference's own run (mode reference) to time the same.
  bool timed(std::size_t index, const kj::Args& case_args, const char* phase) {
    std::random_device random;
    // 48 bits, as the Python harness draws them: the judge reads the salt back from JSON.
    const std::uint64_t salt =
        ((static_cast<std::uint64_t>(random()) << 32) ^ random()) & 0xffffffffffffULL;
    const kj::Args args = with_seed(case_args, salt, kSecret);
    const std::string head = ",\"index\":" + std::to_string(index) + ",\"phase\":\"" + phase + "\"";
    const Settings& s = job_.timing;
    const auto begin = Clock::now();
    try {
      const Series run = series(custom_kernel, args, s, true);
      const std::vector<double>& samples = run.samples;
      if (!run.failure.empty()) {
        report_.emit("benchmark",
                     head + ",\"status\":\"fail\",\"message\":" +
                         json_string("timed call " + std::to_string(samples.size() - 1) + ": " +
                                     run.failure));
        return false;
      }
      std::vector<double> sorted = samples;
      std::sort(sorted.begin(), sorted.end());
      report_.emit("benchmark",
                   head + ",\"status\":\"pass\",\"samples_ns\":" + json_array(samples) +
                       ",\"clock\":\"cuda_event\",\"method\":\"per_call\",\"batch\":1" +
                       ",\"stop_reason\":" + json_string(run.stop) + ",\"at_launch_floor\":" +
                       (sorted[sorted.size() / 2] < s.launch_floor_ns ? "true" : "false") +
                       ",\"rechecked\":" + std::to_string(run.rechecked) +
                       // Sealed timing replays a Python submission's launches elsewhere; a
                       // program is timed where it runs (docs/sealed-timing.md).
                       ",\"timing\":\"in_process\",\"timing_note\":\"a lang: cu program is "
                       "timed in its own process\"" +
                       ",\"seconds\":{\"timing\":" + json_number(seconds_since(begin)) + "}" +
                       ",\"salt\":" + std::to_string(salt));
      return true;
    } catch (const CallFailed& failed) {
      report_.emit("benchmark",
                   head + ",\"status\":\"error\",\"message\":" + json_string(failed.message) +
                       ",\"error\":" + error_json(failed.type, failed.message));
      return false;
    }
  }

  // Mode `reference`: this program holds no submission (the judge built it with a stand-in,
  // src/judge/cuda.cpp) and runs in a sandbox of its own after the submission's run ended. Each
  // benchmark case is timed on the inputs the submission was timed on (its salt; for a ranked
  // run, the same secret), with at most as many samples as the submission got.
  bool run_reference() {
    report_.emit("stage", ",\"stage\":\"reference\"");
    const auto& cases = job_.benchmarks;
    if (job_.salts.size() != cases.size() || job_.samples.size() != cases.size()) {
      throw std::invalid_argument("mode reference needs a salt and a sample count per benchmark");
    }
    const auto secret = static_cast<std::uint64_t>(job_.secret);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const kj::Args ranked = job_.ranked ? with_seed(cases[i], secret, kSecret) : cases[i];
      const kj::Args args = with_seed(ranked, job_.salts[i], kSecret);
      Settings s = job_.timing;
      s.max_samples = std::max(1, std::min(s.max_samples, job_.samples[i]));
      s.min_samples = std::min(s.min_samples, s.max_samples);
      const std::string head = ",\"index\":" + std::to_string(i);
      const auto begin = Clock::now();
      try {
        const Series run = series(ref_kernel, args, s, false);
        report_.emit("reference",
                     head + ",\"status\":\"pass\",\"samples_ns\":" + json_array(run.samples) +
                         ",\"stop_reason\":" + json_string(run.stop) +
                         ",\"seconds\":{\"timing\":" + json_number(seconds_since(begin)) + "}");
      } catch (const CallFailed& failed) {
        report_.emit("reference",
                     head + ",\"status\":\"error\",\"message\":" + json_string(failed.message) +
                         ",\"error\":" + error_json(failed.type, failed.message));
        return false;
      }
    }
    return true;
  }

  bool run_benchmarks(const std::vector<kj::Args>& cases, const char* phase, bool timed_too) {
    report_.emit("stage", ",\"stage\":\"benchmarks\",\"phase\":\"" + std::string(phase) + "\"");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string fields = check_case(cases[i], nullptr);
      if (fields.rfind(",\"status\":\"pass\"", 0) != 0) {
        report_.emit("benchmark",
                     ",\"index\":" + std::to_string(i) + ",\"phase\":\"" + phase + "\"" + fields);
        return false;
      }
      if (timed_too && !timed(i, cases[i], phase)) return false;
    }
    return true;
  }

  Job job_;
  const Reporter& report_;
  const bool profiling_ = std::getenv("KJ_PROFILE") != nullptr;
  kj::DeviceBuffer<unsigned char> flush_;
};

}  // namespace

int main() {
  Job job = read_job();
  const Reporter report(job.result_fd);
  report.emit("hello", ",\"protocol\":1,\"harness\":\"cuda\",\"cuda_runtime\":" +
                           std::to_string(CUDART_VERSION) + ",\"device\":\"cuda:0\"");
  bool passed = false;
  try {
    Harness harness(std::move(job), report);
    passed = harness.run();
  } catch (const kj::CudaError& e) {
    // Before the submission ran, the device or the problem failed (our fault); after, the
    // context may have been broken by an earlier call of the submission.
    const bool ours = g_stage == "load_reference";
    report.emit("error", ",\"stage\":" + json_string(g_stage) +
                             ",\"kind\":" + (ours ? "\"problem\"" : "\"exception\"") +
                             ",\"error\":" + error_json("CudaError", e.what()));
  } catch (const std::exception& e) {
    report.emit("error", ",\"stage\":\"harness\",\"kind\":\"harness\",\"error\":" +
                             error_json("HarnessError", e.what()));
  }
  report.emit("done", std::string(",\"passed\":") + (passed ? "true" : "false"));
  return 0;
}
