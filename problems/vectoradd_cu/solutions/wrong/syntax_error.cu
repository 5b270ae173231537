// expect: compile_error
// clang-format off
#include "task.h"

output_t custom_kernel(const input_t& data) {
  int missing_semicolon = 1
  return {data.c.data(), data.n};
}
