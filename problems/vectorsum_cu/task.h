// vectorsum_cu: the sum of a float32 vector.
#pragma once

#include "kj_cuda.h"

struct input_t {
  kj::DeviceBuffer<float> x;
  kj::DeviceBuffer<float> out;  // one float, garbage on entry
  std::size_t n = 0;
};
using output_t = kj::DeviceSpan<float>;

output_t custom_kernel(const input_t& data);
