// `kj worker` (a process of workers, one per GPU, on any host that reaches the store) and
// `kj workers` (the registered workers, draining).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "worker/worker.h"

namespace kj::worker {
namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string age(store::Time now, store::Time then) {
  const double seconds = std::chrono::duration<double>(now - then).count();
  std::ostringstream out;
  out << std::fixed << std::setprecision(seconds < 10 ? 1 : 0) << seconds << "s";
  return out.str();
}

}  // namespace

ShutdownSignals::ShutdownSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

ShutdownSignals::~ShutdownSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

int ShutdownSignals::wait(std::optional<std::chrono::milliseconds> timeout) const {
  int signal = 0;
  if (!timeout) return sigwait(&set_, &signal) == 0 ? signal : 0;
  const timespec wait_for{static_cast<time_t>(timeout->count() / 1000),
                          static_cast<long>((timeout->count() % 1000) * 1000000)};
  signal = sigtimedwait(&set_, nullptr, &wait_for);
  return signal > 0 ? signal : 0;
}

int run_worker_process(const WorkerProcessOptions& options) {
  ShutdownSignals signals;
  std::vector<Device> devices;
  if (!options.cpu) {
    for (const auto& device : detect_gpus()) {
      const int minor = std::stoi(device.device.substr(5));
      if (options.gpus.empty() ||
          std::find(options.gpus.begin(), options.gpus.end(), minor) != options.gpus.end()) {
        devices.push_back(device);
      }
    }
    if (!options.gpus.empty() && devices.size() != options.gpus.size()) {
      std::cerr << "kj worker: not every GPU in --gpus is on this host\n";
      return 2;
    }
  }
  if (devices.empty()) devices.push_back({"cpu", "cpu"});
  const std::string name = options.name.empty() ? host_name() : options.name;
  auto stats = std::make_shared<WorkerStats>();
  // The GPUs of this process: a multi-GPU job is judged on several of them (GpuPool).
  auto pool = std::make_shared<GpuPool>();
  auto job_type = [&](const Device& device) {
    return options.gpu_type.empty() ? device.gpu_type : options.gpu_type;
  };
  for (const auto& device : devices)
    if (device.device != "cpu") pool->add(device.device, job_type(device));
  std::vector<std::unique_ptr<Worker>> workers;
  for (const auto& device : devices) {
    WorkerOptions w = options.worker;
    w.worker_id = name + ":" + device.device;
    w.host = name;
    w.device = device.device;
    w.timing = judge::default_timing(device.device);  // short caps on a CPU: development only
    w.timing.update(options.worker.timing);
    w.gpu_types = {job_type(device)};
    w.gpu_count = device.device == "cpu" ? 0 : pool->count(job_type(device));
    workers.push_back(std::make_unique<Worker>(options.store_url, w, stats,
                                               device.device == "cpu" ? nullptr : pool));
    workers.back()->start();
    std::cout << "kj worker: " << w.worker_id << " takes " << w.gpu_types.front() << " jobs\n";
  }
  std::cout << std::flush;
  while (true) {
    if (const int signal = signals.wait(std::chrono::milliseconds(500)); signal != 0) {
      std::cout << "kj worker: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                << ", stopping (workers finish their current job)\n"
                << std::flush;
      break;
    }
    if (std::all_of(workers.begin(), workers.end(), [](const auto& w) { return w->drained(); })) {
      std::cout << "kj worker: drained, exiting\n" << std::flush;
      break;
    }
  }
  for (auto& w : workers) w->stop();
  return 0;
}

std::string format_workers(const std::vector<store::WorkerStatus>& workers, store::Time now) {
  std::ostringstream out;
  out << std::left << std::setw(28) << "WORKER" << std::setw(14) << "HOST" << std::setw(9)
      << "DEVICE" << std::setw(10) << "GPU" << std::setw(17) << "STATE" << std::setw(10) << "JOB"
      << "HEARTBEAT\n";
  for (const auto& w : workers) {
    std::string state = w.state;
    if (w.drain_requested && state != "drained" && state != "draining") state += " (drain)";
    out << std::setw(28) << w.name << std::setw(14) << w.host << std::setw(9) << w.device
        << std::setw(10) << w.gpu_type << std::setw(17) << state << std::setw(10)
        << (w.current_job ? std::to_string(*w.current_job) : std::string("-"))
        << age(now, w.heartbeat_at) << " ago\n";
  }
  if (workers.empty()) out << "(no worker registered)\n";
  return out.str();
}

}  // namespace kj::worker
