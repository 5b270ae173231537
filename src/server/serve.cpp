// `kj serve`: the server and its workers in one process.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "server/server.h"

namespace kj::server {
namespace {

namespace fs = std::filesystem;

// Calls requeue_expired on its own thread every interval; joined on destruction.
class ExpiredLeaseSweeper {
 public:
  ExpiredLeaseSweeper(std::string store_url, std::chrono::seconds interval)
      : store_(store::open_store(store_url)), interval_(interval), thread_([this] { run(); }) {}
  ~ExpiredLeaseSweeper() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  ExpiredLeaseSweeper(const ExpiredLeaseSweeper&) = delete;
  ExpiredLeaseSweeper& operator=(const ExpiredLeaseSweeper&) = delete;

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
      try {
        const auto now =
            std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
        if (const int n = store_->requeue_expired(now); n > 0) {
          std::fprintf(stderr, "kj serve: requeued %d job(s) whose lease expired\n", n);
        }
      } catch (const store::StoreError& e) {
        std::fprintf(stderr, "kj serve: %s\n", e.what());
      }
    }
  }

  std::unique_ptr<store::Store> store_;
  std::chrono::seconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// The client config `kj submit` reads (~/.config/kerneljudge/config.json), kept pointing at this
// server: written when missing and an admin token was just made; rewritten when it points at
// this URL and a new admin token was made (its old token was for another database); otherwise
// left alone, with a line saying why `kj submit` would not reach this server with it.
void reconcile_client_config(store::Store& store, const std::string& url,
                             const std::optional<std::string>& new_token) {
  const char* home = std::getenv("HOME");
  if (!home) return;
  const fs::path path = fs::path(home) / ".config" / "kerneljudge" / "config.json";
  std::error_code ec;
  nlohmann::json config;
  if (fs::exists(path, ec)) {
    std::ifstream in(path);
    config = nlohmann::json::parse(in, nullptr, false);
    if (!config.is_object()) {
      std::cout << "client config " << path.string()
                << " is not a JSON object; not changed (kj submit needs --server " << url
                << " --token TOKEN)\n";
      return;
    }
  }
  const std::string server = config.is_object() ? config.value("server", "") : "";
  const std::string token = config.is_object() ? config.value("token", "") : "";
  const bool ours = server.empty() || server == url;
  if (new_token && ours) {
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path);
    if (!out) {
      std::cout << "cannot write " << path.string() << "; kj submit needs --server " << url
                << " --token TOKEN\n";
      return;
    }
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, ec);
    out << nlohmann::json{{"server", url}, {"token", *new_token}}.dump(2) << "\n";
    std::cout << (config.is_null() ? "wrote " : "rewrote ") << path.string()
              << " (server and admin token for kj submit)\n";
  } else if (!ours) {
    std::cout << "client config " << path.string() << " points at " << server
              << ", not at this server; not changed (kj submit --server " << url << ")\n";
  } else if (config.is_null()) {
    std::cout << "no client config " << path.string() << "; kj submit needs --server " << url
              << " --token TOKEN\n";
  } else if (token.empty() || !store.user_for_token(token)) {
    std::cout << "client config " << path.string()
              << " has no token valid on this server; not changed (kj submit --token TOKEN)\n";
  }
}

}  // namespace

int serve(const ServeOptions& options) {
  worker::ShutdownSignals signals;
  std::shared_ptr<store::Store> store = store::open_store(options.store_url);
  if (const int n = store->recover_running_jobs(); n > 0) {
    std::cout << "recovered " << n << " job(s) left running by a previous server\n";
  }

  std::vector<worker::Device> devices;
  if (options.use_gpus) devices = worker::detect_gpus();
  if (devices.empty()) devices.push_back({"cpu", "cpu"});
  ApiOptions api = options.api;
  for (const auto& d : devices) {
    if (std::find(api.served_gpu_types.begin(), api.served_gpu_types.end(), d.gpu_type) ==
        api.served_gpu_types.end()) {
      api.served_gpu_types.push_back(d.gpu_type);
    }
  }

  if (!options.problems_dir.empty()) {
    for (const auto& name :
         load_problem_leaderboards(*store, options.problems_dir, api.served_gpu_types)) {
      std::cout << "leaderboard " << name << " loaded\n";
    }
  }
  std::optional<std::string> admin_token;
  if (!store->get_user("admin")) {
    const auto admin = store->create_user("admin", true);
    admin_token = store->create_token(admin.id, "created by kj serve").token;
  }

  auto stats = std::make_shared<worker::WorkerStats>();
  Server server(store, api, stats);
  const int port = server.bind(options.host, options.port);
  const std::string url = "http://" + options.host + ":" + std::to_string(port);

  std::vector<std::unique_ptr<worker::Worker>> workers;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // The GPUs of this process: a multi-GPU job is judged on several of them (worker::GpuPool).
  auto pool = std::make_shared<worker::GpuPool>();
  for (const auto& d : devices)
    if (d.device != "cpu") pool->add(d.device, d.gpu_type);
  for (const auto& d : options.start_workers ? devices : std::vector<worker::Device>{}) {
    worker::WorkerOptions w = options.worker;
    w.timing = judge::default_timing(d.device);  // short caps on a CPU: development only
    w.timing.update(options.worker.timing);
    w.worker_id = std::string(host) + ":" + std::to_string(getpid()) + ":" + d.device;
    w.host = host;
    w.gpu_count = d.device == "cpu" ? 0 : pool->count(d.gpu_type);
    w.device = d.device;
    w.gpu_types = {d.gpu_type};
    workers.push_back(std::make_unique<worker::Worker>(options.store_url, w, stats,
                                                       d.device == "cpu" ? nullptr : pool));
    workers.back()->start();
    std::cout << "worker on " << d.device << " takes " << d.gpu_type << " jobs\n";
  }
  ExpiredLeaseSweeper sweeper(options.store_url, options.requeue_interval);

  std::cout << "kj serve: listening on " << url << " (API: " << url << "/api/openapi.json)\n";
  if (admin_token) std::cout << "admin token (shown once): " << *admin_token << "\n";
  reconcile_client_config(*store, url, admin_token);
  std::cout << std::flush;

  std::thread http([&server] { server.serve(); });
  const int signal = signals.wait();
  std::cout << "kj serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ", stopping (workers finish their current job)\n"
            << std::flush;
  server.stop();
  http.join();
  for (auto& w : workers) w->stop();
  return 0;
}

}  // namespace kj::server
