// GPU health after a run, the device-memory verdict and the source size limit: what can be
// checked without a GPU (NVML absent, the decision on given readings).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "judge/judge.h"

using kj::judge::GpuHealth;
using kj::judge::GpuMonitor;
using kj::judge::GpuReading;
using kj::judge::Verdict;

namespace {

constexpr std::uint64_t kMiB = 1ULL << 20;

kj::problem::Problem one_test() {
  kj::problem::Problem p;
  p.name = "vectoradd";
  p.tests = {nlohmann::ordered_json{{"size", 8}, {"seed", 1}}};
  return p;
}

std::vector<nlohmann::json> events(std::initializer_list<const char*> lines) {
  std::string text;
  for (const char* l : lines) text += std::string(l) + "\n";
  std::string error;
  auto out = kj::judge::parse_events(text, &error);
  EXPECT_EQ(error, "");
  return out;
}

kj::sandbox::Outcome clean_exit() {
  kj::sandbox::Outcome o;
  o.started = true;
  o.exit_code = 0;
  return o;
}

}  // namespace

TEST(GpuHealth, MissingNvmlIsNotCheckedAndSaysWhy) {
  const GpuMonitor monitor(0, "libkj-no-such-nvml.so.1");
  EXPECT_FALSE(monitor.available());
  std::string error;
  EXPECT_FALSE(monitor.read(&error));
  EXPECT_NE(error.find("NVML is not available"), std::string::npos) << error;
  EXPECT_NE(error.find("libkj-no-such-nvml.so.1"), std::string::npos) << error;
  const GpuHealth health =
      kj::judge::check_gpu_after_run(monitor, std::nullopt, std::chrono::milliseconds(0));
  EXPECT_FALSE(health.checked);
  EXPECT_EQ(health.message, error);
}

TEST(GpuHealth, DefaultLibraryWithoutTheDriverIsNotCheckedEither) {
  const GpuMonitor monitor(0);
  if (monitor.available()) GTEST_SKIP() << "NVML is installed on this host";
  EXPECT_NE(monitor.error().find("libnvidia-ml.so.1"), std::string::npos) << monitor.error();
}

TEST(GpuHealth, BackToBaselineWithinToleranceIsHealthy) {
  const GpuReading before{1000 * kMiB, {77}};
  const GpuReading after{1000 * kMiB + 10 * kMiB, {77}};  // 77 was there before: not ours
  const GpuHealth health = kj::judge::assess_gpu_health(before, after);
  EXPECT_TRUE(health.checked);
  EXPECT_TRUE(health.ok) << health.message;
  EXPECT_TRUE(health.leftover_processes.empty());
  EXPECT_EQ(health.memory_used_before_bytes, 1000 * kMiB);
  EXPECT_EQ(health.memory_used_after_bytes, 1010 * kMiB);
}

TEST(GpuHealth, NewProcessLeftOnTheGpuIsUnhealthy) {
  const GpuHealth health = kj::judge::assess_gpu_health(GpuReading{500 * kMiB, {77}},
                                                        GpuReading{500 * kMiB, {77, 4242}});
  EXPECT_TRUE(health.checked);
  EXPECT_FALSE(health.ok);
  EXPECT_EQ(health.leftover_processes, std::vector<unsigned>{4242});
  EXPECT_NE(health.message.find("1 process"), std::string::npos) << health.message;
}

TEST(GpuHealth, MemoryNotReturnedIsUnhealthy) {
  const GpuHealth health =
      kj::judge::assess_gpu_health(GpuReading{500 * kMiB, {}}, GpuReading{1524 * kMiB, {}});
  EXPECT_FALSE(health.ok);
  EXPECT_TRUE(health.leftover_processes.empty());
  EXPECT_NE(health.message.find("1024 MiB above"), std::string::npos) << health.message;
  // Just inside the tolerance is fine; just past it is not.
  EXPECT_TRUE(kj::judge::assess_gpu_health(GpuReading{0, {}},
                                           GpuReading{kj::judge::kGpuMemoryTolerance, {}})
                  .ok);
  EXPECT_FALSE(kj::judge::assess_gpu_health(GpuReading{0, {}},
                                            GpuReading{kj::judge::kGpuMemoryTolerance + 1, {}})
                   .ok);
}

TEST(GpuHealth, ReportedInJsonAndTextOnlyWhenUnhealthy) {
  kj::judge::EvalResult result =
      kj::judge::decide(clean_exit(), {}, kj::judge::Mode::test, one_test());
  result.gpu_health =
      kj::judge::assess_gpu_health(GpuReading{0, {}}, GpuReading{2048 * kMiB, {4242}});
  const auto json = kj::judge::to_json(result);
  EXPECT_EQ(json["gpu_health"]["checked"], true);
  EXPECT_EQ(json["gpu_health"]["ok"], false);
  EXPECT_EQ(json["gpu_health"]["leftover_processes"], nlohmann::json::array({4242}));
  EXPECT_EQ(json["gpu_health"]["memory_used_after_bytes"], 2048 * kMiB);
  EXPECT_NE(kj::judge::render_text(result, false).find("GPU UNHEALTHY"), std::string::npos);
  result.gpu_health = kj::judge::assess_gpu_health(GpuReading{0, {}}, GpuReading{0, {}});
  EXPECT_EQ(kj::judge::render_text(result, false).find("GPU UNHEALTHY"), std::string::npos);
}

TEST(DeviceMemory, OutOfMemoryInTheSubmissionIsMemoryLimit) {
  const auto r = kj::judge::decide(
      clean_exit(),
      events(
          {R"({"event":"stage","stage":"tests"})",
           R"({"event":"test","index":0,"status":"error","error":{"type":"OutOfMemoryError","message":"CUDA out of memory. Tried to allocate 1.00 GiB"}})",
           R"({"event":"done","passed":false})"}),
      kj::judge::Mode::test, one_test());
  EXPECT_EQ(r.verdict, Verdict::memory_limit) << r.reason;
  EXPECT_NE(r.reason.find("device memory exhausted"), std::string::npos) << r.reason;
}

TEST(DeviceMemory, OutOfMemoryInTheHarnessAfterLoadingIsTheSubmissions) {
  // The submission's process held the device memory the harness needed: not the judge's fault
  // (an internal_error would be retried for ever).
  const auto held = kj::judge::decide(
      clean_exit(),
      events(
          {R"({"event":"stage","stage":"tests"})",
           R"({"event":"error","stage":"harness","kind":"harness","error":{"type":"OutOfMemoryError","message":"CUDA out of memory"}})"}),
      kj::judge::Mode::test, one_test());
  EXPECT_EQ(held.verdict, Verdict::memory_limit) << held.reason;
  // While loading the reference, before any submission code ran, it is the problem's.
  const auto reference = kj::judge::decide(
      clean_exit(),
      events(
          {R"({"event":"error","stage":"load_reference","kind":"problem","error":{"type":"OutOfMemoryError","message":"CUDA out of memory"}})"}),
      kj::judge::Mode::test, one_test());
  EXPECT_EQ(reference.verdict, Verdict::internal_error) << reference.reason;
}

TEST(SourceLimit, OversizedSourceIsRefusedBeforeAnythingRuns) {
  const auto problem = one_test();
  kj::judge::EvalRequest request;
  request.problem = &problem;
  request.submission_name = "big.py";
  request.submission_source = std::string(2048, '#');
  request.max_source_bytes = 1024;
  kj::judge::Environment environment;  // never used: nothing may start
  environment.python = "/nonexistent/python";
  const auto result = kj::judge::evaluate(request, environment);
  EXPECT_EQ(result.verdict, Verdict::compile_error);
  EXPECT_FALSE(result.outcome.started);
  EXPECT_NE(result.reason.find("2048 bytes, over the limit of 1024 bytes"), std::string::npos)
      << result.reason;
  EXPECT_EQ(kj::judge::kDefaultMaxSourceBytes, 1u << 20);  // the documented default
}

// The GPU lease: one run per GPU on the host at a time. Tested on lock files alone (no GPU is
// touched): the lease is taken before any code runs on the device.
namespace {

class GpuLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kj-lease-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::setenv("KJ_LOCK_DIR", dir_.c_str(), 1), 0);
  }
  void TearDown() override {
    ::unsetenv("KJ_LOCK_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

// True when `device`'s lease was taken within `wait` by a thread started now; the thread is
// joined before returning either way (once the lease is free).
struct Contender {
  explicit Contender(std::string device)
      : thread([this, device = std::move(device)] {
          kj::judge::GpuLease lease(device);
          held = true;
        }) {}
  bool held_within(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!held && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return held;
  }
  ~Contender() { thread.join(); }
  std::atomic<bool> held{false};
  std::thread thread;
};

}  // namespace

TEST_F(GpuLeaseTest, ASecondRunOnTheSameGpuWaitsUntilTheFirstEnds) {
  std::optional<kj::judge::GpuLease> first(std::in_place, "cuda:3");
  Contender second("cuda:3");
  EXPECT_FALSE(second.held_within(std::chrono::milliseconds(300)));
  first.reset();
  EXPECT_TRUE(second.held_within(std::chrono::seconds(30)));
}

TEST_F(GpuLeaseTest, RunsOnOtherGpusDoNotWait) {
  const kj::judge::GpuLease first("cuda:3");
  Contender other("cuda:4");
  EXPECT_TRUE(other.held_within(std::chrono::seconds(30)));
}

TEST_F(GpuLeaseTest, AProcessThatDiesHoldingTheLeaseGivesItBack) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    kj::judge::GpuLease lease("cuda:0");
    (void)!::write(ready[1], "x", 1);
    ::pause();  // killed while holding it: no destructor runs
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  {
    Contender waiting("cuda:0");
    EXPECT_FALSE(waiting.held_within(std::chrono::milliseconds(300)));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_TRUE(waiting.held_within(std::chrono::seconds(30)));
  }
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(GpuLeaseTest, TheCpuHoldsNothingAndAnUnusableLockDirectoryIsAClearError) {
  const kj::judge::GpuLease cpu("cpu");
  EXPECT_EQ(cpu.waited_s(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
  ASSERT_EQ(::setenv("KJ_LOCK_DIR", (dir_ / "missing").c_str(), 1), 0);
  try {
    kj::judge::GpuLease lease("cuda:0");
    FAIL() << "a lease without its lock file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU lease file"), std::string::npos) << e.what();
  }
}
