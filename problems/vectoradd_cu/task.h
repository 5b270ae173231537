// vectoradd_cu: c = a + b over float32 vectors.
#pragma once

#include "kj_cuda.h"

struct input_t {
  kj::DeviceBuffer<float> a;
  kj::DeviceBuffer<float> b;
  kj::DeviceBuffer<float> c;  // the output buffer
  std::size_t n = 0;
};
using output_t = kj::DeviceSpan<float>;

output_t custom_kernel(const input_t& data);
