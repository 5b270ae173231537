// The judge server: the REST API under /api (submissions, progress as Server-Sent Events,
// leaderboards, rankings, admin), /metrics, and `kj serve`, which runs the API with one worker
// per GPU in the same process. Routes are registered per area (api_routes), so HTML pages can be
// added later as another set of routes on the same server without touching the API.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/judge.h"
#include "store/store.h"
#include "worker/worker.h"

namespace kj::server {

struct ApiOptions {
  std::size_t max_source_bytes = judge::kDefaultMaxSourceBytes;  // larger uploads: 413
  int submissions_per_hour = 60;              // per user and leaderboard; admins are exempt
  std::vector<std::string> served_gpu_types;  // what this server's workers take (default GPU)
  std::chrono::milliseconds event_poll{250};  // how often an SSE stream looks for new events
  // A cached ranking is recomputed at the latest this long after its query (it is recomputed at
  // once on this process's completions, hacked marks and leaderboard changes).
  std::chrono::milliseconds ranking_max_age{5000};
  // popcorn-cli's `register` (GET /auth/init) creates a user and gives it a CLI id: for open
  // events; otherwise organizers issue CLI ids (`kj cli-id`).
  bool popcorn_registration = false;
};

// The HTTP server over one store connection. Handlers run on the server's thread pool.
class Server {
 public:
  Server(std::shared_ptr<store::Store> store, ApiOptions options,
         std::shared_ptr<worker::WorkerStats> stats);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: any free port); returns the port, or throws.
  int bind(const std::string& host, int port);
  // Serves until stop(); call after bind.
  void serve();
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "2026-03-01T12:00:00Z" (UTC); fractional seconds are accepted and dropped.
std::optional<store::Time> parse_time(const std::string& iso8601);
std::string format_time(store::Time time);

// Loads each directory under `problems_root` that holds a task.yml as a leaderboard named after
// the directory, unless one of that name exists. GPU types: the task's `gpus` and `gpu_types`.
// Returns the names created; a directory whose task.yml is invalid is skipped with a warning.
std::vector<std::string> load_problem_leaderboards(store::Store& store,
                                                   const std::filesystem::path& problems_root,
                                                   const std::vector<std::string>& gpu_types);

struct ServeOptions {
  std::string store_url = "sqlite:kj.db";
  std::filesystem::path problems_dir;  // empty: no leaderboards loaded
  std::string host = "127.0.0.1";
  int port = 8080;
  bool use_gpus = true;
  bool start_workers = true;     // false: the API only; queued jobs wait for a worker
  worker::WorkerOptions worker;  // template for every worker (id, device, types filled in)
  ApiOptions api;
  std::chrono::seconds requeue_interval{10};
};

// `kj serve`: opens the store, recovers jobs of a previous process, loads the problems, creates
// the admin user on first start (printing its token), starts the workers and serves until
// SIGINT or SIGTERM. Returns the process exit code.
int serve(const ServeOptions& options);

}  // namespace kj::server
