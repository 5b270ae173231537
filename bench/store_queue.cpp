// The store's hot paths on SQLite: a job's life (submit, claim, complete with one run) and the
// ranking query over a leaderboard with 100k runs. Figures in docs/perf.md.
// Databases go to $KJ_BENCH_DIR (default: the system temp directory) and are removed afterwards.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using kj::store::Id;

const std::vector<std::string> kGpus = {"H200"};

// A fresh database file, deleted (with its WAL) when the benchmark ends.
class ScratchDatabase {
 public:
  explicit ScratchDatabase(const std::string& name) {
    const char* dir = std::getenv("KJ_BENCH_DIR");
    path_ = (dir ? fs::path(dir) : fs::temp_directory_path()) /
            ("kj-" + name + "-" + std::to_string(getpid()) + ".db");
    remove();
  }
  ~ScratchDatabase() { remove(); }
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;
  std::string url() const { return "sqlite:" + path_.string(); }

 private:
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  fs::path path_;
};

kj::store::JobOutcome outcome(double score) {
  kj::store::JobOutcome result;
  result.verdict = "accepted";
  result.score = score;
  kj::store::NewRun run;
  run.mode = "leaderboard";
  run.runner = "NVIDIA H200";
  run.score = score;
  run.passed = true;
  run.result_json = R"({"benchmarks":[{"median_ns":12345.6,"n":100}]})";
  run.system_json = R"({"gpu":"NVIDIA H200","torch":"2.11.0"})";
  result.runs.push_back(run);
  return result;
}

struct Fixture {
  std::unique_ptr<kj::store::Store> store;
  Id leaderboard = 0;
  std::vector<Id> users;
};

Fixture make_fixture(const std::string& url, int users) {
  Fixture fixture;
  fixture.store = kj::store::open_store(url);
  kj::store::NewLeaderboard board;
  board.name = "vectoradd";
  board.problem_dir = "problems/vectoradd";
  board.task_yaml = "lang: py\n";
  board.gpu_types = kGpus;
  fixture.leaderboard = fixture.store->create_leaderboard(board).id;
  for (int i = 0; i < users; ++i) {
    fixture.users.push_back(fixture.store->create_user("user" + std::to_string(i), false).id);
  }
  return fixture;
}

// One submission's whole queue life: create (with its job), claim, complete with one run.
void BM_SubmitClaimComplete(benchmark::State& state) {
  ScratchDatabase database("queue");
  auto fixture = make_fixture(database.url(), 100);
  std::int64_t n = 0;
  for (auto _ : state) {
    Id user = fixture.users[static_cast<std::size_t>(n % 100)];
    fixture.store->create_submission({user, fixture.leaderboard, "submission.py",
                                      "# kernel " + std::to_string(n), "H200", "leaderboard"});
    auto claimed = fixture.store->claim_next_job("bench", kGpus, 60s);
    if (!claimed || !fixture.store->complete(claimed->lease, outcome(1000.0 + double(n % 997)))) {
      state.SkipWithError("the queue lost a job");
      break;
    }
    ++n;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SubmitClaimComplete)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// Claims alone, from a queue of `range(0)` waiting jobs.
void BM_ClaimFromBacklog(benchmark::State& state) {
  ScratchDatabase database("backlog");
  auto fixture = make_fixture(database.url(), 100);
  const auto backlog = state.range(0);
  for (std::int64_t i = 0; i < backlog; ++i) {
    fixture.store->create_submission({fixture.users[static_cast<std::size_t>(i % 100)],
                                      fixture.leaderboard, "submission.py",
                                      "# kernel " + std::to_string(i), "H200", "leaderboard"});
  }
  for (auto _ : state) {
    auto claimed = fixture.store->claim_next_job("bench", kGpus, 60s);
    if (!claimed) {
      state.SkipWithError("backlog exhausted");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClaimFromBacklog)->Arg(20000)->Iterations(10000)->Unit(benchmark::kMicrosecond);

// The ranking of a leaderboard with 100k passed leaderboard runs by 1000 users.
void BM_Ranking100kRuns(benchmark::State& state) {
  ScratchDatabase database("ranking");
  auto fixture = make_fixture(database.url(), 1000);
  for (int i = 0; i < 100000; ++i) {
    fixture.store->create_submission({fixture.users[static_cast<std::size_t>(i % 1000)],
                                      fixture.leaderboard, "submission.py",
                                      "# kernel " + std::to_string(i), "H200", "leaderboard"});
    auto claimed = fixture.store->claim_next_job("bench", kGpus, 60s);
    (void)fixture.store->complete(claimed->lease, outcome(1000.0 + (i * 7919) % 100003));
  }
  std::size_t rows = 0;
  for (auto _ : state) {
    auto ranking = fixture.store->ranking(fixture.leaderboard, "H200");
    rows = ranking.size();
    benchmark::DoNotOptimize(ranking);
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_Ranking100kRuns)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
