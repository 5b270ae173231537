// Verdict rules: sandbox facts and harness events in, one verdict out.
#include "judge/judge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "judge/detail/harness_run.h"

using kj::judge::Mode;
using kj::judge::Verdict;
using nlohmann::json;

namespace {

kj::problem::Problem two_tests() {
  kj::problem::Problem p;
  p.name = "vectoradd";
  p.tests = {nlohmann::ordered_json{{"size", 8}, {"seed", 1}},
             nlohmann::ordered_json{{"size", 9}, {"seed", 2}}};
  p.benchmarks = {nlohmann::ordered_json{{"size", 64}, {"seed", 3}},
                  nlohmann::ordered_json{{"size", 128}, {"seed", 4}}};
  p.ranking_by = kj::problem::RankingBy::geom;
  return p;
}

kj::sandbox::Outcome clean_exit() {
  kj::sandbox::Outcome o;
  o.started = true;
  o.exit_code = 0;
  return o;
}

std::vector<json> events(std::initializer_list<const char*> lines) {
  std::string text;
  for (const char* l : lines) text += std::string(l) + "\n";
  std::string error;
  auto out = kj::judge::parse_events(text, &error);
  EXPECT_EQ(error, "");
  return out;
}

Verdict verdict_of(const kj::sandbox::Outcome& o, const std::vector<json>& ev,
                   Mode mode = Mode::test) {
  return kj::judge::decide(o, ev, mode, two_tests()).verdict;
}

const char* kStart = R"({"event":"stage","stage":"tests"})";
const char* kPass0 =
    R"({"event":"test","index":0,"spec":{"size":8,"seed":1},"status":"pass","message":""})";
const char* kPass1 =
    R"({"event":"test","index":1,"spec":{"size":9,"seed":2},"status":"pass","message":""})";
const char* kDone = R"({"event":"done","passed":true})";

}  // namespace

TEST(Verdict, AllTestsPassIsAccepted) {
  const auto r = kj::judge::decide(clean_exit(), events({kStart, kPass0, kPass1, kDone}),
                                   Mode::test, two_tests());
  EXPECT_EQ(r.verdict, Verdict::accepted);
  EXPECT_EQ(r.tests.size(), 2u);
}

TEST(Verdict, FailedCheckIsWrongAnswerWithItsMessage) {
  const auto r = kj::judge::decide(
      clean_exit(),
      events(
          {kStart, kPass0,
           R"({"event":"test","index":1,"spec":{"size":9,"seed":2},"status":"fail","message":"3 mismatched elements"})",
           kDone}),
      Mode::test, two_tests());
  EXPECT_EQ(r.verdict, Verdict::wrong_answer);
  EXPECT_NE(r.reason.find("3 mismatched elements"), std::string::npos);
  EXPECT_NE(r.reason.find("size=9"), std::string::npos);
}

TEST(Verdict, ExceptionInKernelIsRuntimeError) {
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {kStart,
               R"({"event":"test","index":0,"status":"error","error":{"type":"ValueError","message":"boom"}})",
               kDone})),
      Verdict::runtime_error);
}

TEST(Verdict, LoadFailuresSplitCompileFromRuntime) {
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {R"({"event":"error","stage":"load_submission","kind":"compile","error":{"type":"SyntaxError","message":"bad"}})",
               kDone})),
      Verdict::compile_error);
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {R"({"event":"error","stage":"load_submission","kind":"exception","error":{"type":"ZeroDivisionError","message":"x"}})",
               kDone})),
      Verdict::runtime_error);
}

TEST(Verdict, BrokenReferenceIsNeverTheUsersFault) {
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {R"({"event":"error","stage":"load_reference","kind":"problem","error":{"type":"ImportError","message":"x"}})",
               kDone})),
      Verdict::internal_error);
  kj::sandbox::Outcome not_started;
  not_started.setup_error = "pivot_root failed";
  EXPECT_EQ(verdict_of(not_started, {}), Verdict::internal_error);
}

TEST(Verdict, SandboxLimitsWinOverEvents) {
  auto o = clean_exit();
  o.limit = kj::sandbox::LimitHit::wall_time;
  EXPECT_EQ(verdict_of(o, events({kStart, kPass0})), Verdict::time_limit);
  o.limit = kj::sandbox::LimitHit::memory;
  EXPECT_EQ(verdict_of(o, events({kStart})), Verdict::memory_limit);
  o.limit = kj::sandbox::LimitHit::output;
  EXPECT_EQ(verdict_of(o, events({kStart, kPass0, kPass1, kDone})), Verdict::output_limit);
  o.limit = kj::sandbox::LimitHit::none;
  o.seccomp_violation = true;
  EXPECT_EQ(verdict_of(o, events({kStart, kPass0, kPass1, kDone})), Verdict::security_violation);
}

TEST(Verdict, ATimeLimitAtTheMemoryCapSaysSo) {
  auto o = clean_exit();
  o.limit = kj::sandbox::LimitHit::wall_time;
  o.wall = std::chrono::seconds(20);
  const auto plain = kj::judge::decide(o, events({kStart}), Mode::test, two_tests());
  EXPECT_EQ(plain.verdict, Verdict::time_limit);
  EXPECT_EQ(plain.reason.find("memory cap"), std::string::npos) << plain.reason;
  o.memory_cap_reached = true;
  o.peak_memory_bytes = 3072ULL << 20;
  const auto at_cap = kj::judge::decide(o, events({kStart}), Mode::test, two_tests());
  EXPECT_EQ(at_cap.verdict, Verdict::time_limit);  // the limit that ended the run decides
  EXPECT_NE(at_cap.reason.find("the memory cap was reached during the run"), std::string::npos)
      << at_cap.reason;
  EXPECT_NE(at_cap.reason.find("peak 3072 MiB"), std::string::npos) << at_cap.reason;
}

TEST(Verdict, DyingWithoutDoneDependsOnStage) {
  auto o = clean_exit();
  o.exit_code.reset();
  o.signal = 9;
  EXPECT_EQ(verdict_of(o, events({kStart, kPass0})), Verdict::runtime_error);
  EXPECT_EQ(verdict_of(o, events({R"({"event":"stage","stage":"load_reference"})"})),
            Verdict::internal_error);
}

TEST(Verdict, MissingCasesAreAnInternalError) {
  EXPECT_EQ(verdict_of(clean_exit(), events({kStart, kPass0, kDone})), Verdict::internal_error);
}

TEST(Verdict, BenchmarkScoreIsRankingOfMedians) {
  const auto r = kj::judge::decide(
      clean_exit(),
      events({R"({"event":"benchmark","index":0,"status":"pass","samples_ns":[1,2,3]})",
              R"({"event":"benchmark","index":1,"status":"pass","samples_ns":[8,9,8,100]})",
              kDone}),
      Mode::benchmark, two_tests());
  EXPECT_EQ(r.verdict, Verdict::accepted);
  ASSERT_TRUE(r.score_ns);
  EXPECT_NEAR(*r.score_ns, std::sqrt(2.0 * 8.5), 1e-9);
  EXPECT_DOUBLE_EQ(r.benchmarks[1].summary.median, 8.5);
}

// Sealed timing (docs/sealed-timing.md): the harness says per benchmark who timed it, and why
// not sealed; both reach the JSON report, and the text report shows the reason.
TEST(Report, WhoTimedABenchmarkIsKept) {
  const auto r = kj::judge::decide(
      clean_exit(),
      events(
          {R"({"event":"benchmark","index":0,"status":"pass","samples_ns":[1,2,3],"timing":"sealed"})",
           R"({"event":"benchmark","index":1,"status":"pass","samples_ns":[8,9,8],"timing":"in_process","timing_note":"a launch depends on input values"})",
           kDone}),
      Mode::benchmark, two_tests());
  EXPECT_EQ(r.verdict, Verdict::accepted);
  ASSERT_EQ(r.benchmarks.size(), 2u);
  EXPECT_EQ(r.benchmarks[0].timing, "sealed");
  EXPECT_EQ(r.benchmarks[0].timing_note, "");
  EXPECT_EQ(r.benchmarks[1].timing, "in_process");
  EXPECT_EQ(r.benchmarks[1].timing_note, "a launch depends on input values");
  const json out = kj::judge::to_json(r);
  EXPECT_EQ(out["benchmarks"][0]["timing"], "sealed");
  EXPECT_FALSE(out["benchmarks"][0].contains("timing_note"));
  EXPECT_EQ(out["benchmarks"][1]["timing"], "in_process");
  EXPECT_EQ(out["benchmarks"][1]["timing_note"], "a launch depends on input values");
  const std::string text = kj::judge::render_text(r, false);
  EXPECT_NE(text.find("bench 1: timed in process: a launch depends on input values"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("bench 0: timed"), std::string::npos) << text;

  // A harness that says nothing (before sealed timing): no field, no note.
  const auto older = kj::judge::decide(
      clean_exit(),
      events({R"({"event":"benchmark","index":0,"status":"pass","samples_ns":[1,2,3]})",
              R"({"event":"benchmark","index":1,"status":"pass","samples_ns":[8,9,8]})", kDone}),
      Mode::benchmark, two_tests());
  const json plain = kj::judge::to_json(older);
  EXPECT_FALSE(plain["benchmarks"][0].contains("timing"));
  EXPECT_FALSE(plain["benchmarks"][0].contains("timing_note"));
  // Tests are not timed: no timing field there even when an event carried one.
  const auto tested = kj::judge::decide(
      clean_exit(),
      events(
          {kStart,
           R"({"event":"test","index":0,"status":"pass","timing":"in_process","timing_note":"x"})",
           kPass1, kDone}),
      Mode::test, two_tests());
  EXPECT_FALSE(kj::judge::to_json(tested)["tests"][0].contains("timing"));
}

// task.yml's ranked_timing: sealed asks the harness to fail a ranked benchmark it cannot time
// sealed: in leaderboard mode on a GPU only. --in-process-timing's "sealed": 0 passes through.
TEST(HarnessJob, RequireSealedOnlyForRankedRunsOnAGpu) {
  auto problem = two_tests();
  kj::judge::EvalRequest request;
  request.problem = &problem;
  request.timing = {{"max_samples", 10}, {"sealed", 0}};
  const auto required = [&](Mode mode, bool gpu) {
    request.mode = mode;
    const json job = kj::judge::detail::harness_job(request, gpu);
    EXPECT_EQ(job["timing"]["sealed"], 0);
    EXPECT_EQ(job["timing"]["max_samples"], 10);
    return job["timing"].contains("require_sealed") ? job["timing"]["require_sealed"].get<int>()
                                                    : 0;
  };
  for (const Mode mode : {Mode::test, Mode::benchmark, Mode::leaderboard, Mode::compare}) {
    EXPECT_EQ(required(mode, true), 0) << kj::judge::to_string(mode);
    EXPECT_EQ(required(mode, false), 0) << kj::judge::to_string(mode);
  }
  problem.ranked_timing = "sealed";
  EXPECT_EQ(required(Mode::leaderboard, true), 1);
  EXPECT_EQ(required(Mode::leaderboard, false), 0);  // a CPU has no sealed timing
  for (const Mode mode : {Mode::test, Mode::benchmark, Mode::compare}) {
    EXPECT_EQ(required(mode, true), 0) << kj::judge::to_string(mode);
  }
}

namespace {

namespace fs = std::filesystem;

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

kj::judge::Environment environment_on(const std::string& device) {
  return kj::judge::discover_environment(std::nullopt,
                                         (fs::path(KJ_SOURCE_DIR) / "harness").string(), device);
}

bool has_variable(const kj::judge::Environment& environment, const std::string& prefix) {
  for (const auto& variable : environment.env)
    if (variable.starts_with(prefix)) return true;
  return false;
}

std::optional<kj::sandbox::Bind> shim_bind(const kj::judge::Environment& environment) {
  for (const auto& bind : kj::judge::harness_sandbox(environment).binds)
    if (bind.target == kj::judge::kRecordShimMount) return bind;
  return std::nullopt;
}

// A stand-in for libkj_record.so (discover_environment only checks that it is a file).
class FakeShim {
 public:
  FakeShim() {
    std::string pattern = (fs::temp_directory_path() / "kj-shim-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
    std::ofstream(path()) << "not really a library\n";
  }
  ~FakeShim() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  FakeShim(const FakeShim&) = delete;
  FakeShim& operator=(const FakeShim&) = delete;
  fs::path path() const { return dir_ / "libkj_record.so"; }
  fs::path dir() const { return dir_; }

 private:
  fs::path dir_;
};

}  // namespace

// The recording shim: on a GPU bound read-only at /kj/lib and preloaded; never on a CPU.
// discover_environment checks no GPU, so "cuda:0" works on a host without one.
TEST(Environment, RecordShimOnAGpuOnly) {
  const FakeShim shim;
  const ScopedEnv given("KJ_RECORD_SHIM", shim.path().string());
  const auto gpu = environment_on("cuda:0");
  EXPECT_EQ(gpu.record_shim, shim.path());
  EXPECT_TRUE(has_variable(gpu, "LD_PRELOAD=/kj/lib/libkj_record.so"));
  EXPECT_TRUE(has_variable(gpu, "KJ_RECORD_SHIM=/kj/lib/libkj_record.so"));
  const auto bind = shim_bind(gpu);
  ASSERT_TRUE(bind);
  EXPECT_EQ(bind->source, shim.path().string());
  EXPECT_FALSE(bind->writable);
  // Not among the binds the lang: cu programs' sandboxes take (cuda.cpp).
  for (const auto& b : gpu.binds) EXPECT_NE(b.target, kj::judge::kRecordShimMount);

  const auto cpu = environment_on("cpu");
  EXPECT_TRUE(cpu.record_shim.empty());
  EXPECT_FALSE(has_variable(cpu, "LD_PRELOAD="));
  EXPECT_FALSE(has_variable(cpu, "KJ_RECORD_SHIM="));
  EXPECT_FALSE(shim_bind(cpu));
}

TEST(Environment, RecordShimOffOrMissing) {
  {
    for (const char* off : {"off", ""}) {
      const ScopedEnv given("KJ_RECORD_SHIM", std::string(off));
      const auto gpu = environment_on("cuda:0");
      EXPECT_TRUE(gpu.record_shim.empty()) << off;
      EXPECT_FALSE(has_variable(gpu, "LD_PRELOAD=")) << off;
      EXPECT_FALSE(shim_bind(gpu)) << off;
    }
  }
  {
    // Unset: the one beside the running executable (build/libkj_record.so beside this test
    // when the shim was built), else none.
    const ScopedEnv unset("KJ_RECORD_SHIM", std::nullopt);
    const fs::path beside = fs::read_symlink("/proc/self/exe").parent_path() / "libkj_record.so";
    const auto gpu = environment_on("cuda:0");
    if (fs::is_regular_file(beside)) {
      EXPECT_EQ(gpu.record_shim, beside);
      EXPECT_TRUE(has_variable(gpu, "LD_PRELOAD=/kj/lib/libkj_record.so"));
    } else {
      EXPECT_TRUE(gpu.record_shim.empty());
      EXPECT_FALSE(has_variable(gpu, "LD_PRELOAD="));
    }
    EXPECT_FALSE(has_variable(environment_on("cpu"), "LD_PRELOAD="));
  }
  {
    // A path that is not a file is bad input, said plainly (on a CPU too: kj serve checks its
    // environment on the CPU at start).
    const FakeShim shim;
    for (const fs::path& bad : {shim.dir() / "missing.so", shim.dir()}) {
      const ScopedEnv given("KJ_RECORD_SHIM", bad.string());
      for (const char* device : {"cuda:0", "cpu"}) {
        try {
          environment_on(device);
          ADD_FAILURE() << "no error for " << bad << " on " << device;
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("KJ_RECORD_SHIM=" + bad.string()), std::string::npos)
              << e.what();
        }
      }
    }
  }
}

TEST(Events, GarbageLinesAreReported) {
  std::string error;
  const auto ev = kj::judge::parse_events("{\"event\":\"done\"}\nnot json\n[1]\n", &error);
  EXPECT_EQ(ev.size(), 1u);
  EXPECT_NE(error.find("line 2"), std::string::npos);
}

TEST(Names, VerdictsRoundTrip) {
  for (auto v : {Verdict::accepted, Verdict::wrong_answer, Verdict::compile_error,
                 Verdict::runtime_error, Verdict::time_limit, Verdict::memory_limit,
                 Verdict::output_limit, Verdict::security_violation, Verdict::internal_error}) {
    EXPECT_EQ(kj::judge::verdict_from_string(kj::judge::to_string(v)), v);
  }
  EXPECT_FALSE(kj::judge::verdict_from_string("accepted!"));
}

TEST(Verdict, RunnerKilledBySeccompIsASecurityViolation) {
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {kStart,
               R"({"event":"error","stage":"run","kind":"exception","error":{"type":"ProcessDied","message":"killed by signal 31","signal":31}})",
               kDone})),
      Verdict::security_violation);
  EXPECT_EQ(
      verdict_of(
          clean_exit(),
          events(
              {kStart,
               R"({"event":"error","stage":"run","kind":"exception","error":{"type":"ProcessDied","message":"killed by signal 11","signal":11}})",
               kDone})),
      Verdict::runtime_error);
}

TEST(Verdict, FasterThanPhysicallyPossibleIsNotRanked) {
  auto problem = two_tests();
  problem.benchmark_work = {kj::bench::Work{6.0e9, 0}, kj::bench::Work{}};  // 6 GB: >= 1.25 ms
  const auto ev =
      events({R"({"event":"device","name":"NVIDIA H200"})",
              R"({"event":"benchmark","index":0,"status":"pass","samples_ns":[5000,5100,5200]})",
              R"({"event":"benchmark","index":1,"status":"pass","samples_ns":[8,9,8]})", kDone});
  const auto r = kj::judge::decide(clean_exit(), ev, Mode::benchmark, problem);
  EXPECT_EQ(r.verdict, Verdict::wrong_answer);
  EXPECT_NE(r.reason.find("physical floor"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.score_ns);
  // The same time without a known device, or with plausible work, is ranked.
  problem.benchmark_work = {kj::bench::Work{6.0e6, 0}, kj::bench::Work{}};
  const auto ok = kj::judge::decide(clean_exit(), ev, Mode::benchmark, problem);
  EXPECT_EQ(ok.verdict, Verdict::accepted) << ok.reason;
  EXPECT_GT(ok.benchmarks[0].sol_pct, 0);
}

namespace {

std::vector<std::string> rules_of(const std::string& source) {
  std::vector<std::string> out;
  for (const auto& f : kj::judge::screen_python(source))
    out.push_back(f.rule + (f.reject ? "!" : ""));
  return out;
}

}  // namespace

TEST(Screen, RejectsPlainAttacksWithTheirLine) {
  const auto f =
      kj::judge::screen_python("import gc\n\ndef custom_kernel(d):\n  return gc.get_objects()\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gc-walk");
  EXPECT_TRUE(f[0].reject);
  EXPECT_EQ(f[0].line, 4);
  EXPECT_EQ(rules_of("torch.cuda.synchronize = lambda: None\n"),
            std::vector<std::string>{"timer-patch!"});
  EXPECT_EQ(rules_of("time.perf_counter_ns = fake\n"), std::vector<std::string>{"timer-patch!"});
  EXPECT_EQ(rules_of("utils.verbose_allclose = lambda *a, **k: []\n"),
            std::vector<std::string>{"checker-patch!"});
  EXPECT_EQ(rules_of("setattr(torch, 'allclose', f)\n"),
            std::vector<std::string>{"checker-patch!"});
  EXPECT_EQ(rules_of("f = sys._getframe(2).f_locals\n"), std::vector<std::string>{"frame-walk!"});
  EXPECT_EQ(rules_of("__builtins__['len'] = f\n"), std::vector<std::string>{"builtins-patch!"});
  EXPECT_EQ(rules_of("os.write(int(os.environ['POPCORN_FD']), b'')\n"),
            (std::vector<std::string>{"harness-internals!", "environment-or-proc"}));
}

TEST(Screen, FlagsWhatDeservesALook) {
  EXPECT_EQ(rules_of("s = torch.cuda.Stream()\n"), std::vector<std::string>{"other-stream"});
  EXPECT_EQ(rules_of("import threading\n"), std::vector<std::string>{"threads-or-processes"});
  EXPECT_EQ(rules_of("cache[a.data_ptr()] = out\n"),
            std::vector<std::string>{"pointer-or-identity-keys"});
  EXPECT_EQ(rules_of("out.fill_(float('nan'))\n"), std::vector<std::string>{"explicit-nan"});
  EXPECT_EQ(rules_of("exec(code)\n"), std::vector<std::string>{"dynamic-code"});
  EXPECT_EQ(rules_of("s.accessPolicyWindow = w\n"), std::vector<std::string>{"persisting-l2"});
}

TEST(Screen, HonestCodeIsNotFlagged) {
  const std::string honest = R"(import torch
import triton  # gc.get_objects() in a comment is not code
from task import input_t, output_t

kernel = torch.compile(lambda x: x * 2)


def custom_kernel(data: input_t) -> output_t:
    model.eval()
    a, b = data
    if a.numel() == 0:  # setattr(torch, "x", 1)
        return a
    block_id = 3
    c = torch.empty_like(a)
    c.copy_(a + b)
    same = a == b
    return c
)";
  EXPECT_TRUE(kj::judge::screen_python(honest).empty()) << rules_of(honest).front();
  EXPECT_TRUE(kj::judge::screen_python("x = 'a # not a comment' + str(gc_count)\n").empty());
}

TEST(Verdict, ReplacedTimingFunctionsAreASecurityViolation) {
  const auto r = kj::judge::decide(
      clean_exit(),
      events(
          {kStart,
           R"({"event":"test","index":0,"status":"error","error":{"type":"SecurityViolation","message":"the submission replaced time.perf_counter_ns"}})",
           kDone}),
      Mode::test, two_tests());
  EXPECT_EQ(r.verdict, Verdict::security_violation);
  EXPECT_NE(r.reason.find("perf_counter_ns"), std::string::npos);
  const auto load = kj::judge::decide(
      clean_exit(),
      events(
          {R"({"event":"error","stage":"load_submission","kind":"exception","error":{"type":"SecurityViolation","message":"replaced torch.cuda.synchronize"}})",
           kDone}),
      Mode::test, two_tests());
  EXPECT_EQ(load.verdict, Verdict::security_violation);
}

TEST(Screen, KernelLanguageRule) {
  using kj::judge::screen_kernel_language;
  const std::string triton_kernel =
      "import triton\n@triton.jit\ndef k(x):\n  pass\n\ndef custom_kernel(d):\n  return d\n";
  const std::string torch_only = "import torch\n\ndef custom_kernel(d):\n  return d + 1\n";
  EXPECT_FALSE(screen_kernel_language(torch_only, "any"));
  EXPECT_FALSE(screen_kernel_language(triton_kernel, "triton"));
  const auto missing = screen_kernel_language(torch_only, "triton");
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing->reject);
  EXPECT_NE(missing->reason.find("@triton.jit"), std::string::npos);
  const auto reference =
      screen_kernel_language(triton_kernel + "from reference import ref_kernel\n", "triton");
  ASSERT_TRUE(reference);
  EXPECT_EQ(reference->line, 8);
  // A comment naming the decorator is not a kernel.
  EXPECT_TRUE(
      screen_kernel_language("# @triton.jit\ndef custom_kernel(d):\n  return d\n", "triton"));
  EXPECT_TRUE(screen_kernel_language(torch_only, "cuda"));
}

// Every evaluation refused before anything ran reports the same facts: the request's mode,
// problem, ranking and submission (both names in compare mode), the machine's device, and a
// sandbox that never started. Nothing here needs Python: each refusal comes first.
TEST(NotStarted, EveryRefusalCarriesTheRequestAndTheDevice) {
  kj::problem::Problem problem = two_tests();
  problem.lang = "py";
  kj::judge::Environment environment;
  environment.device = "cuda:3";
  kj::judge::EvalRequest base;
  base.problem = &problem;
  base.submission_name = "a.py";
  base.submission_source = "def custom_kernel(d):\n  return d\n";
  base.mode = Mode::benchmark;

  struct Refusal {
    std::string what;
    kj::judge::EvalRequest request;
    kj::problem::Problem problem;
    Verdict verdict;
    std::string reason;  // a part of it
    std::string submission;
  };
  std::vector<Refusal> refusals;
  auto as_compare = [](kj::judge::EvalRequest& request, std::string name, std::string source) {
    request.mode = Mode::compare;
    request.second_name = std::move(name);
    request.second_source = std::move(source);
  };
  {
    Refusal r{"source too large", base, problem, Verdict::compile_error, "over the limit", "a.py"};
    r.request.max_source_bytes = 8;
    refusals.push_back(r);
  }
  {
    Refusal r{"kernel_language",         base,          problem, Verdict::compile_error,
              "kernel_language: triton", "a.py vs b.py"};
    r.problem.kernel_language = "triton";
    as_compare(r.request, "b.py", base.submission_source);
    refusals.push_back(r);
  }
  {
    Refusal r{"static screen", base, problem, Verdict::security_violation, "rule gc-walk", "a.py"};
    r.request.submission_source = "import gc\n\ndef custom_kernel(d):\n  return gc.get_objects()\n";
    refusals.push_back(r);
  }
  {
    Refusal r{"multi_gpu compare",
              base,
              problem,
              Verdict::internal_error,
              "compare mode is not available",
              "a.py vs b.py"};
    r.problem.multi_gpu = true;
    as_compare(r.request, "b.py", base.submission_source);
    refusals.push_back(r);
  }
  {
    Refusal r{"lang: cu compare",          base,          problem, Verdict::internal_error,
              "does not support lang: cu", "a.cu vs b.cu"};
    r.problem.lang = "cu";
    r.request.submission_name = "a.cu";
    as_compare(r.request, "b.cu", "// b\n");
    refusals.push_back(r);
  }
  for (auto& r : refusals) {
    SCOPED_TRACE(r.what);
    r.request.problem = &r.problem;
    const auto result = kj::judge::evaluate(r.request, environment);
    EXPECT_EQ(result.verdict, r.verdict);
    EXPECT_NE(result.reason.find(r.reason), std::string::npos) << result.reason;
    const json out = kj::judge::to_json(result);
    EXPECT_EQ(out["mode"], kj::judge::to_string(r.request.mode));
    EXPECT_EQ(out["problem"], "vectoradd");
    EXPECT_EQ(out["ranking_by"], "geom");
    EXPECT_EQ(out["submission"], r.submission);
    EXPECT_EQ(out["device"], "cuda:3");
    EXPECT_EQ(out["sandbox"]["started"], false);
    EXPECT_TRUE(out["tests"].empty());
    EXPECT_TRUE(out["benchmarks"].empty());
  }
}

// Found by fuzzing the harness protocol (fuzz/harness_events.cpp): the harness shares its sandbox
// with the submission, so its stdout and stderr hold whatever bytes the submission printed. They
// went into the result's JSON as they were, and the worker's dump() of it threw on the first byte
// that was not UTF-8: the job was released and judged again until it failed as internal_error.
TEST(Report, OutputThatIsNotUtf8IsStoredWithReplacementCharacters) {
  auto o = clean_exit();
  o.stdout_data = "ok \xff\xfe done";
  o.stderr_data = "caf\xe9\n";
  const auto r =
      kj::judge::decide(o, events({kStart, kPass0, kPass1, kDone}), Mode::test, two_tests());
  EXPECT_EQ(r.verdict, Verdict::accepted);
  const json out = kj::judge::to_json(r);
  std::string text;
  ASSERT_NO_THROW(text = out.dump());
  EXPECT_EQ(out["stdout"], "ok \xef\xbf\xbd\xef\xbf\xbd done");
  EXPECT_EQ(out["stderr"], "caf\xef\xbf\xbd\n");
}

// A reason quotes at most 300 bytes of the harness's message: the cut fell inside a character.
TEST(Report, ACutMessageStaysUtf8) {
  const std::string message = std::string(299, 'x') + "é and more";
  const std::string line =
      R"({"event":"test","index":0,"status":"fail","message":")" + message + R"("})";
  const auto r = kj::judge::decide(clean_exit(), events({kStart, line.c_str(), kDone}), Mode::test,
                                   two_tests());
  EXPECT_EQ(r.verdict, Verdict::wrong_answer);
  EXPECT_NE(r.reason.find(std::string(299, 'x') + "…"), std::string::npos) << r.reason;
  EXPECT_NO_THROW(json(r.reason).dump());
}

// Fields the judge counts with, of the wrong type or out of range: the stream is the harness's,
// but the submission runs beside it. A string index threw json's type_error out of decide(); an
// index of 1e300 was converted to int (undefined behaviour, reported by UBSan).
TEST(Verdict, MistypedFieldsOfTheHarnessAreIgnoredNotThrown) {
  for (
      const char* test :
      {R"({"event":"test","index":"1","status":"pass","batch":"x","rechecked":[1]})",
       R"({"event":"test","index":1e300,"status":"pass","at_launch_floor":"yes"})",
       R"({"event":"test","index":99999999999,"status":"pass"})",
       R"({"event":"test","index":-99999999999,"status":"pass","t_s":1})",
       R"({"event":"error","stage":"run","error":{"type":"X","message":"m","signal":1e99}})",
       R"({"event":"compare","index":"0","trial":4294967296,"samples_a_ns":[1],"samples_b_ns":[2]})"}) {
    SCOPED_TRACE(test);
    for (const Mode mode : {Mode::test, Mode::compare}) {
      kj::judge::EvalResult r;
      ASSERT_NO_THROW(
          r = kj::judge::decide(clean_exit(), events({kStart, test, kDone}), mode, two_tests()));
      for (const auto& c : r.tests) EXPECT_EQ(c.index, 0);
      if (r.error) {
        EXPECT_FALSE(r.error->signal);
      }
    }
  }
}

// Found by fuzzing submissions (fuzz/submission.cpp): the screen's excerpt of a line is cut at
// 120 bytes, inside a character when one straddled the cut, and the result could not be stored.
TEST(Screen, ExcerptIsCutBetweenCharacters) {
  const std::string line = "x = id(y)  # " + std::string(106, 'a') + "éé\n";
  const auto findings = kj::judge::screen_python(line);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "pointer-or-identity-keys");
  EXPECT_EQ(findings[0].excerpt, line.substr(0, 119) + "…");
  kj::judge::EvalResult r;
  r.screen = findings;
  EXPECT_NO_THROW(kj::judge::to_json(r).dump());
}

// libstdc++'s default regex executor recursed once per character a quantifier took: a line of
// 100,000 spaces after `time` overflowed the stack of the process running the screen (kj serve's
// worker). The screen still sees the patch.
TEST(Screen, AHugeSpaceRunIsScreenedNotACrash) {
  const std::string source = "import time\ntime" + std::string(100000, ' ') + ".perf_counter = f\n";
  const auto findings = kj::judge::screen_python(source);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].rule, "timer-patch");
  EXPECT_TRUE(findings[0].reject);
  EXPECT_TRUE(kj::judge::screen_kernel_language(
                  "def f():\n  @" + std::string(100000, ' ') + "triton.jit\n", "triton") ==
              std::nullopt);
}
