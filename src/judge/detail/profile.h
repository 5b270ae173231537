// Profile mode: one benchmark case run once under Nsight Compute (ncu), summarised. Internal.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "judge/judge.h"

namespace kj::judge::detail {

// ncu: $KJ_NCU, PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*/,
// /usr/local/cuda/nsight-compute*/.
std::optional<std::filesystem::path> find_ncu();

// The folder of the 64-bit libcuda.so.1 in `ldconfig -p` output; handed to Triton in profile mode
// (TRITON_LIBCUDA_PATH), where its own `ldconfig -p` child was seen stuck under ncu.
std::optional<std::filesystem::path> libcuda_dir_in(const std::string& ldconfig_listing);

// The command line put before the harness's: only kernels inside the NVTX range `kj_profile`
// (the one timed call) are profiled, with the GPU's clocks left as they are.
std::vector<std::string> ncu_wrapper(const std::filesystem::path& ncu, const std::string& report);

// Summary of `ncu --import R --page raw --csv` output: per kernel its name, duration (ns),
// memory and SM throughput (% of peak) and the top stall reasons.
nlohmann::json summarize_ncu_csv(const std::string& csv);

// Runs request's first benchmark case under ncu; profile details in EvalResult::profile.
EvalResult evaluate_profile(const EvalRequest& request, const Environment& environment);

}  // namespace kj::judge::detail
