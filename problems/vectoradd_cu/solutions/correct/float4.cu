// expect: accepted
// Vectorised: four floats per load where the buffers allow it, a scalar tail.
#include "task.h"

__global__ void add4(const float4* a, const float4* b, float4* c, std::size_t n4) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

__global__ void add_tail(const float* a, const float* b, float* c, std::size_t from,
                         std::size_t n) {
  const std::size_t i = from + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

output_t custom_kernel(const input_t& data) {
  const std::size_t n4 = data.n / 4;
  if (n4 > 0) {
    const std::size_t blocks = (n4 + 255) / 256;
    add4<<<static_cast<unsigned>(blocks < 8192 ? blocks : 8192), 256>>>(
        reinterpret_cast<const float4*>(data.a.data()),
        reinterpret_cast<const float4*>(data.b.data()), reinterpret_cast<float4*>(data.c.data()),
        n4);
  }
  if (data.n % 4 != 0)
    add_tail<<<1, 4>>>(data.a.data(), data.b.data(), data.c.data(), n4 * 4, data.n);
  return {data.c.data(), data.n};
}
