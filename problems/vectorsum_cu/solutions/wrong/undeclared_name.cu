// expect: compile_error
#include "task.h"

output_t custom_kernel(const input_t& data) {
  launch_the_reduction(data.x.data(), data.n);
  return {data.out.data(), 1};
}
