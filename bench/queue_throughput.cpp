// Queue throughput: N trivial jobs across W workers (threads, each with its own store
// connection, as separate worker processes would have) that claim, do no judging, and complete
// with one run. Prints the dispatch overhead per job (claim-to-start: the claim call that
// returned the job; finish-to-next-claim: complete plus the next claim) and jobs/s, then the
// wake-up latency (enqueue to claim) with the queue empty and the workers waiting on
// Store::wait_for_jobs. Figures in docs/perf.md.
//   queue_throughput --db URL [--jobs 10000] [--workers 32] [--wakeups 200]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
const std::vector<std::string> kGpus = {"cpu"};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Summary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};
Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double total = 0;
  for (double v : values) total += v;
  s.mean = total / static_cast<double>(values.size());
  s.p50 = values[values.size() / 2];
  s.p99 = values[std::min(values.size() - 1, values.size() * 99 / 100)];
  s.max = values.back();
  return s;
}
void print(const char* name, const Summary& s) {
  std::printf("  %-22s mean %7.3f ms  p50 %7.3f ms  p99 %7.3f ms  max %8.3f ms\n", name, s.mean,
              s.p50, s.p99, s.max);
}

kj::store::JobOutcome outcome() {
  kj::store::JobOutcome result;
  result.verdict = "accepted";
  result.score = 1e-6;
  kj::store::NewRun run;
  run.mode = "test";
  run.runner = "cpu";
  run.passed = true;
  run.result_json = R"({"tests":[{"status":"pass"}]})";
  result.runs.push_back(run);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  int jobs = 10000, workers = 32, wakeups = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--db")
      url = argv[i + 1];
    else if (flag == "--jobs")
      jobs = std::atoi(argv[i + 1]);
    else if (flag == "--workers")
      workers = std::atoi(argv[i + 1]);
    else if (flag == "--wakeups")
      wakeups = std::atoi(argv[i + 1]);
  }
  if (url.empty() || jobs <= 0 || workers <= 0) {
    std::fprintf(stderr,
                 "usage: queue_throughput --db URL [--jobs N] [--workers W] [--wakeups N]\n");
    return 2;
  }
  kj::store::StoreOptions options;
  options.busy_timeout = 60s;
  auto store = kj::store::open_store(url, options);
  const std::string board = "throughput-" + std::to_string(::time(nullptr));
  kj::store::NewLeaderboard lb;
  lb.name = board;
  lb.problem_dir = "problems/none";
  lb.task_yaml = "lang: py\n";
  lb.gpu_types = {"cpu"};
  const auto leaderboard = store->create_leaderboard(lb).id;
  const auto user = store->create_user(board, false).id;

  const auto fill_start = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    store->create_submission(
        {user, leaderboard, "s.py", "print(" + std::to_string(i) + ")", "cpu", "test"});
  }
  const double fill_s = std::chrono::duration<double>(Clock::now() - fill_start).count();

  std::mutex mutex;
  std::vector<double> claim_to_start, finish_to_next;
  std::atomic<int> done{0}, lost{0};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      auto own = kj::store::open_store(url, options);
      const std::string name = board + "-w" + std::to_string(w);
      own->register_worker({name, "bench", "cpu", "cpu", 0});
      std::vector<double> claims, gaps;
      std::optional<Clock::time_point> finished;
      while (true) {
        const auto before = Clock::now();
        auto job = own->claim_next_job(name, kGpus, 60s);
        const auto started = Clock::now();
        if (!job) break;
        claims.push_back(ms(started - before));
        if (finished) gaps.push_back(ms(started - *finished));
        finished = Clock::now();  // no judging: the job is finished as soon as it started
        if (own->complete(job->lease, outcome()))
          ++done;
        else
          ++lost;
      }
      std::lock_guard lock(mutex);
      claim_to_start.insert(claim_to_start.end(), claims.begin(), claims.end());
      finish_to_next.insert(finish_to_next.end(), gaps.begin(), gaps.end());
    });
  }
  for (auto& t : threads) t.join();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%s: %d jobs, %d workers\n", url.starts_with("postgres") ? "postgres" : "sqlite",
              jobs, workers);
  std::printf("  queued %d jobs in %.2f s (%.0f submissions/s, one connection)\n", jobs, fill_s,
              jobs / fill_s);
  std::printf("  completed %d (lost %d) in %.2f s: %.0f jobs/s\n", done.load(), lost.load(), wall_s,
              done.load() / wall_s);
  print("claim-to-start", summarize(claim_to_start));
  print("finish-to-next-claim", summarize(finish_to_next));
  std::printf("  dispatch overhead per job (worker time in the store): %.3f ms\n",
              wall_s * workers * 1000.0 / std::max(1, done.load()));
  std::printf("  fleet wall time per job (1 / jobs per second): %.3f ms\n",
              wall_s * 1000.0 / std::max(1, done.load()));

  // Wake-ups: workers idle in wait_for_jobs; one job at a time is queued, every 20 ms.
  if (wakeups > 0) {
    const int waiting = std::min(workers, 8);
    std::atomic<bool> stop{false};
    std::vector<double> latencies;
    std::vector<Clock::time_point> queued_at(static_cast<std::size_t>(wakeups));
    std::vector<std::atomic<bool>> queued(static_cast<std::size_t>(wakeups));
    std::vector<std::thread> idle;
    for (int w = 0; w < waiting; ++w) {
      idle.emplace_back([&, w] {
        auto own = kj::store::open_store(url, options);
        const std::string name = board + "-idle" + std::to_string(w);
        own->register_worker({name, "bench", "cpu", "cpu", 0});
        while (!stop) {
          if (auto job = own->claim_next_job(name, kGpus, 60s)) {
            const auto at = Clock::now();
            const auto n = static_cast<std::size_t>(std::stoi(job->code.substr(6)));
            while (!queued[n]) std::this_thread::yield();
            {
              std::lock_guard lock(mutex);
              latencies.push_back(ms(at - queued_at[n]));
            }
            (void)own->complete(job->lease, outcome());
            continue;
          }
          own->wait_for_jobs(kGpus, 2000ms);
        }
      });
    }
    std::this_thread::sleep_for(500ms);
    for (int i = 0; i < wakeups; ++i) {
      const auto n = static_cast<std::size_t>(i);
      queued_at[n] = Clock::now();
      store->create_submission(
          {user, leaderboard, "s.py", "wake: " + std::to_string(i), "cpu", "test"});
      queued[n] = true;
      std::this_thread::sleep_for(20ms);
    }
    std::this_thread::sleep_for(500ms);
    stop = true;
    for (auto& t : idle) t.join();
    std::printf("  wake-up, %d idle workers, %zu jobs one at a time:\n", waiting, latencies.size());
    print("enqueue-to-claim", summarize(latencies));
  }
  return 0;
}
