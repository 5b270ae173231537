// The interface between kerneljudge's CUDA harness (eval.cu) and a `lang: cu` problem.
//
// A problem's task.h defines `input_t` and `output_t` and declares
//   output_t custom_kernel(const input_t& data);
// Its reference.cuh (seen by the harness only) defines
//   input_t generate_input(const kj::Args& args);     // deterministic from args (seed)
//   output_t ref_kernel(const input_t& data);         // timed alone, in a program of its own
//   kj::Check check_implementation(const input_t& data, const output_t& output);
// The harness checks an output against freshly generated inputs, never the ones the submission
// was given, so changing its inputs does not change what it is checked against.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kj {

// A CUDA call failed; the harness reports it as the stage's error.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                    cudaGetErrorString(status));
  }
}

// A case's arguments from task.yml (scalars), by name.
class Args {
 public:
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::string& str(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) throw std::invalid_argument("the case has no argument '" + key + "'");
    return it->second;
  }
  std::int64_t integer(const std::string& key) const { return std::stoll(str(key)); }
  double real(const std::string& key) const { return std::stod(str(key)); }
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// Device memory owned by one object; moved, never copied.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) check_cuda(cudaMalloc(&data_, count * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) cudaFree(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// A view of device memory the output lives in (the submission's or the input's buffer).
template <class T>
struct DeviceSpan {
  T* data = nullptr;
  std::size_t size = 0;
};

template <class T>
std::vector<T> to_host(const T* device, std::size_t count) {
  std::vector<T> host(count);
  if (count > 0) {
    check_cuda(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
               "cudaMemcpy to host");
  }
  return host;
}

// The outcome of check_implementation: passed, or the mismatch for people.
struct Check {
  bool ok = true;
  std::string message;
  static Check pass() { return {true, {}}; }
  static Check fail(std::string why) { return {false, std::move(why)}; }
};

namespace detail {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1], from 24 random bits.
__device__ inline float unit(std::uint64_t bits) {
  return (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
}

// Internal linkage: this header is compiled into both the harness and the submission.
static __global__ void fill_normal_kernel(float* out, std::size_t n, std::uint64_t seed, float mean,
                                          float stddev) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t r = splitmix64(seed ^ splitmix64(i));
    const float u1 = unit(r);
    const float u2 = unit(splitmix64(r));
    out[i] = mean + stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

static __global__ void fill_uniform_kernel(float* out, std::size_t n, std::uint64_t seed, float low,
                                           float high) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = low + (high - low) * (unit(splitmix64(seed ^ splitmix64(i))) - 0x1p-24f);
  }
}

inline unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 ? (blocks == 0 ? 1 : blocks) : 65535);
}

}  // namespace detail

// Deterministic device-side generators: the values are a function of (seed, index) only.
static inline void fill_normal(float* out, std::size_t n, std::uint64_t seed, float mean = 0.0f,
                               float stddev = 1.0f) {
  detail::fill_normal_kernel<<<detail::grid_for(n), 256>>>(out, n, detail::splitmix64(seed), mean,
                                                           stddev);
  check_cuda(cudaGetLastError(), "fill_normal");
}

static inline void fill_uniform(float* out, std::size_t n, std::uint64_t seed, float low,
                                float high) {
  detail::fill_uniform_kernel<<<detail::grid_for(n), 256>>>(out, n, detail::splitmix64(seed), low,
                                                            high);
  check_cuda(cudaGetLastError(), "fill_uniform");
}

// Elementwise |got - want| <= atol + rtol * |want|; non-finite values must match exactly.
inline Check check_close(const std::vector<float>& got, const std::vector<double>& want,
                         double rtol, double atol) {
  if (got.size() != want.size()) {
    return Check::fail("output has " + std::to_string(got.size()) + " elements, expected " +
                       std::to_string(want.size()));
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    const double w = want[i];
    const bool ok = std::isfinite(w)
                        ? std::isfinite(g) && std::fabs(g - w) <= atol + rtol * std::fabs(w)
                        : (std::isnan(w) ? std::isnan(g) : g == w);
    if (ok) continue;
    if (bad++ < 5) {
      char line[160];
      std::snprintf(line, sizeof line, "%sat [%zu]: got %.9g, expected %.9g",
                    first.empty() ? "" : "; ", i, g, w);
      first += line;
    }
  }
  if (bad == 0) return Check::pass();
  return Check::fail(std::to_string(bad) + " of " + std::to_string(got.size()) +
                     " elements mismatch (rtol " + std::to_string(rtol) + ", atol " +
                     std::to_string(atol) + "): " + first);
}

}  // namespace kj
