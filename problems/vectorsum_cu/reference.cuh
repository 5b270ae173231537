// vectorsum_cu's reference: inputs, the reference reduction (timed for the speedup), the check.
#pragma once

#include <cmath>

#include "kj_cuda.h"
#include "task.h"

namespace vectorsum_reference {
// Per-block tree sum in shared memory, then one atomicAdd per block.
__global__ void block_sum(const float* x, std::size_t n, float* out) {
  __shared__ float partial[256];
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    sum += x[i];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
}  // namespace vectorsum_reference

inline input_t generate_input(const kj::Args& args) {
  input_t data;
  data.n = static_cast<std::size_t>(args.integer("size"));
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  const std::uint64_t r = kj::detail::splitmix64(seed);
  const float offset = static_cast<float>((r >> 40) * (1.0 / 16777216.0) * 200.0 - 100.0);
  const float scale = static_cast<float>(((r >> 16) & 0xffffff) * (1.0 / 16777216.0) * 9.9 + 0.1);
  data.x = kj::DeviceBuffer<float>(data.n);
  data.out = kj::DeviceBuffer<float>(1);
  kj::fill_normal(data.x.data(), data.n, seed, offset, scale);
  kj::fill_uniform(data.out.data(), 1, seed + 1, 1e6f, 2e6f);  // garbage, not zero
  return data;
}

inline output_t ref_kernel(const input_t& data) {
  kj::check_cuda(cudaMemsetAsync(data.out.data(), 0, sizeof(float)), "cudaMemsetAsync");
  const std::size_t blocks = (data.n + 255) / 256;
  vectorsum_reference::block_sum<<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), 256>>>(
      data.x.data(), data.n, data.out.data());
  return {data.out.data(), 1};
}

inline kj::Check check_implementation(const input_t& data, const output_t& output) {
  if (output.data == nullptr) return kj::Check::fail("custom_kernel returned a null output");
  if (output.size != 1) {
    return kj::Check::fail("output has " + std::to_string(output.size) +
                           " elements, expected 1 (the sum)");
  }
  const auto x = kj::to_host(data.x.data(), data.n);
  double sum = 0, abs_sum = 0;
  for (float v : x) {
    sum += v;
    abs_sum += std::fabs(static_cast<double>(v));
  }
  const double atol = 2e-7 * std::sqrt(static_cast<double>(data.n)) * abs_sum;
  return kj::check_close(kj::to_host(output.data, 1),
                         {static_cast<double>(static_cast<float>(sum))}, 0.0, atol);
}
