// vectoradd_cu's reference: inputs, the reference kernel (timed for the speedup) and the check.
#pragma once

#include "kj_cuda.h"
#include "task.h"

namespace vectoradd_reference {
__global__ void add(const float* a, const float* b, float* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i] + b[i];
  }
}
}  // namespace vectoradd_reference

inline input_t generate_input(const kj::Args& args) {
  input_t data;
  data.n = static_cast<std::size_t>(args.integer("size"));
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  data.a = kj::DeviceBuffer<float>(data.n);
  data.b = kj::DeviceBuffer<float>(data.n);
  data.c = kj::DeviceBuffer<float>(data.n);
  kj::fill_normal(data.a.data(), data.n, seed * 2);
  kj::fill_normal(data.b.data(), data.n, seed * 2 + 1);
  kj::fill_uniform(data.c.data(), data.n, seed * 2 + 7, -1e3f, 1e3f);  // stale, not zeros
  return data;
}

inline output_t ref_kernel(const input_t& data) {
  vectoradd_reference::add<<<kj::detail::grid_for(data.n), 256>>>(data.a.data(), data.b.data(),
                                                                  data.c.data(), data.n);
  return {data.c.data(), data.n};
}

inline kj::Check check_implementation(const input_t& data, const output_t& output) {
  if (output.data == nullptr) return kj::Check::fail("custom_kernel returned a null output");
  if (output.size != data.n) {
    return kj::Check::fail("output has " + std::to_string(output.size) + " elements, expected " +
                           std::to_string(data.n));
  }
  const auto a = kj::to_host(data.a.data(), data.n);
  const auto b = kj::to_host(data.b.data(), data.n);
  std::vector<double> want(data.n);
  for (std::size_t i = 0; i < data.n; ++i) want[i] = static_cast<double>(a[i]) + b[i];
  return kj::check_close(kj::to_host(output.data, output.size), want, 1e-6, 0.0);
}
