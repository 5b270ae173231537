// The GPU after a run, through NVML loaded at run time: `kj` must start on hosts without the
// NVIDIA driver, so there is no link-time dependency on libnvidia-ml.
#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "judge/judge.h"

namespace kj::judge {
namespace {

// The subset of nvml.h used here; the layouts are part of NVML's stable ABI.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlProcessInfo {  // nvmlProcessInfo_t of the _v2/_v3 process queries
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct DlClose {
  void operator()(void* handle) const { dlclose(handle); }
};

}  // namespace

// One loaded NVML: the library handle (dlclose on destruction) and an nvmlInit/nvmlShutdown
// session, released in reverse order.
struct GpuMonitor::Nvml {
  std::unique_ptr<void, DlClose> library;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*minor_number)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
  bool initialized = false;
  nvmlDevice_t device = nullptr;

  Nvml() = default;
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml() {
    if (initialized) shutdown();
  }

  std::string describe(nvmlReturn_t code) const {
    const char* text = error_string != nullptr ? error_string(code) : nullptr;
    return text != nullptr ? text : "NVML error " + std::to_string(code);
  }
};

namespace {

template <typename Function>
bool resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(library, name));
  return out != nullptr;
}

}  // namespace

GpuMonitor::GpuMonitor(int minor, const char* library) : minor_(minor) {
  auto nvml = std::make_unique<Nvml>();
  nvml->library.reset(dlopen(library, RTLD_NOW | RTLD_LOCAL));
  if (!nvml->library) {
    const char* why = dlerror();
    error_ = std::string("NVML is not available (cannot load ") + library +
             (why != nullptr ? std::string(": ") + why : std::string()) + ")";
    return;
  }
  void* lib = nvml->library.get();
  const bool found =
      resolve(lib, "nvmlInit_v2", nvml->init) && resolve(lib, "nvmlShutdown", nvml->shutdown) &&
      resolve(lib, "nvmlErrorString", nvml->error_string) &&
      resolve(lib, "nvmlDeviceGetCount_v2", nvml->device_count) &&
      resolve(lib, "nvmlDeviceGetHandleByIndex_v2", nvml->handle_by_index) &&
      resolve(lib, "nvmlDeviceGetMinorNumber", nvml->minor_number) &&
      resolve(lib, "nvmlDeviceGetMemoryInfo", nvml->memory_info) &&
      (resolve(lib, "nvmlDeviceGetComputeRunningProcesses_v3", nvml->compute_processes) ||
       resolve(lib, "nvmlDeviceGetComputeRunningProcesses_v2", nvml->compute_processes));
  if (!found) {
    error_ = std::string("NVML in ") + library + " lacks a function the health check needs";
    return;
  }
  if (const nvmlReturn_t rc = nvml->init(); rc != kNvmlSuccess) {
    error_ = "nvmlInit failed: " + nvml->describe(rc);
    return;
  }
  nvml->initialized = true;
  // The sandbox exposes /dev/nvidia<minor>; NVML's own index order may differ from it.
  unsigned int count = 0;
  if (const nvmlReturn_t rc = nvml->device_count(&count); rc != kNvmlSuccess) {
    error_ = "nvmlDeviceGetCount failed: " + nvml->describe(rc);
    return;
  }
  for (unsigned int i = 0; i < count && nvml->device == nullptr; ++i) {
    nvmlDevice_t device = nullptr;
    unsigned int device_minor = 0;
    if (nvml->handle_by_index(i, &device) == kNvmlSuccess &&
        nvml->minor_number(device, &device_minor) == kNvmlSuccess &&
        static_cast<int>(device_minor) == minor) {
      nvml->device = device;
    }
  }
  if (nvml->device == nullptr) {
    error_ = "NVML knows no GPU with device node /dev/nvidia" + std::to_string(minor);
    return;
  }
  nvml_ = std::move(nvml);
}

GpuMonitor::~GpuMonitor() = default;

std::optional<GpuReading> GpuMonitor::read(std::string* error) const {
  if (!nvml_) {
    if (error != nullptr) *error = error_;
    return std::nullopt;
  }
  GpuReading reading;
  NvmlMemory memory{};
  if (const nvmlReturn_t rc = nvml_->memory_info(nvml_->device, &memory); rc != kNvmlSuccess) {
    if (error != nullptr) *error = "nvmlDeviceGetMemoryInfo failed: " + nvml_->describe(rc);
    return std::nullopt;
  }
  reading.memory_used_bytes = memory.used;
  std::vector<NvmlProcessInfo> processes(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto count = static_cast<unsigned int>(processes.size());
    const nvmlReturn_t rc = nvml_->compute_processes(nvml_->device, &count, processes.data());
    if (rc == kNvmlInsufficientSize) {
      processes.resize(std::max<std::size_t>(count + 16, processes.size() * 2));
      continue;
    }
    if (rc != kNvmlSuccess) {
      if (error != nullptr)
        *error = "nvmlDeviceGetComputeRunningProcesses failed: " + nvml_->describe(rc);
      return std::nullopt;
    }
    for (unsigned int i = 0; i < count && i < processes.size(); ++i)
      reading.pids.push_back(processes[i].pid);
    std::sort(reading.pids.begin(), reading.pids.end());
    return reading;
  }
  if (error != nullptr) *error = "the GPU's process list kept growing while it was read";
  return std::nullopt;
}

GpuHealth assess_gpu_health(const GpuReading& before, const GpuReading& after,
                            std::uint64_t tolerance_bytes) {
  GpuHealth health;
  health.checked = true;
  health.memory_used_before_bytes = before.memory_used_bytes;
  health.memory_used_after_bytes = after.memory_used_bytes;
  for (unsigned pid : after.pids) {
    if (std::find(before.pids.begin(), before.pids.end(), pid) == before.pids.end())
      health.leftover_processes.push_back(pid);
  }
  const bool memory_back = after.memory_used_bytes <= before.memory_used_bytes + tolerance_bytes;
  health.ok = health.leftover_processes.empty() && memory_back;
  if (!health.leftover_processes.empty()) {
    health.message = std::to_string(health.leftover_processes.size()) +
                     " process(es) that were not on the GPU before the run still hold it";
  }
  if (!memory_back) {
    if (!health.message.empty()) health.message += "; ";
    health.message += "device memory in use is " +
                      std::to_string((after.memory_used_bytes - before.memory_used_bytes) >> 20) +
                      " MiB above its level before the run (tolerance " +
                      std::to_string(tolerance_bytes >> 20) + " MiB)";
  }
  if (health.ok) health.message = "no process left on the GPU; device memory back to its level";
  return health;
}

GpuHealth check_gpu_after_run(const GpuMonitor& monitor, const std::optional<GpuReading>& before,
                              std::chrono::milliseconds grace) {
  GpuHealth health;
  std::string error;
  if (!before) {
    health.message = monitor.error().empty() ? "no GPU reading before the run" : monitor.error();
    return health;
  }
  // A killed process's context is torn down by the driver after the process is reaped: give
  // it `grace` to let go before calling the GPU unhealthy.
  // The teardown usually ends within milliseconds of the reap: poll often at first, then back
  // off, so a healthy GPU is reported as soon as it is seen healthy.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  auto pause = std::chrono::milliseconds(5);
  while (true) {
    const auto after = monitor.read(&error);
    if (!after) {
      health.message = "cannot read the GPU after the run: " + error;
      return health;
    }
    health = assess_gpu_health(*before, *after);
    if (health.ok || std::chrono::steady_clock::now() >= deadline) return health;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace kj::judge
