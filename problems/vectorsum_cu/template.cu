//! POPCORN leaderboard vectorsum_cu
#include "task.h"

output_t custom_kernel(const input_t& data) {
  // TODO: write sum(data.x) into data.out[0]
  return {data.out.data(), 1};
}
