// Statistics over timing samples: the summary every benchmark reports, the stopping rule, paired
// A/B comparison with a confidence interval, run-to-run spread, and ranking aggregates.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kj::bench {

struct Summary {
  std::size_t n = 0;
  double median = 0;  // primary figure (ns)
  double q1 = 0;      // 25th percentile
  double q3 = 0;      // 75th percentile
  double mean = 0;
  double stdev = 0;  // sample standard deviation (n-1)
  double min = 0;
  double max = 0;
  double iqr() const { return q3 - q1; }
};

// Linear-interpolated quantile of sorted values, q in [0, 1].
double quantile_sorted(std::span<const double> sorted, double q);

// Summary of the samples; an empty input gives n == 0 and zeros.
Summary summarize(std::span<const double> samples);

// Geometric mean; throws std::invalid_argument for an empty input or a non-positive value.
double geometric_mean(std::span<const double> values);

// Aggregates per-benchmark figures as task.yml's ranking_by says: "last", "mean" or "geom".
// Throws std::invalid_argument for an unknown method or a non-positive value under "geom".
double aggregate(std::span<const double> values, const std::string& method);

// Sample standard deviation (n-1) over the mean; 0 for one value.
// Throws std::invalid_argument for an empty input or a non-positive mean.
double coefficient_of_variation(std::span<const double> samples);

// (max - min) / min over the medians of separate runs: the run-to-run spread we report.
// Throws std::invalid_argument for an empty input or a non-positive median.
double relative_spread(std::span<const double> medians);

// The stopping rule for sampling lives in one place, the harness that samples
// (harness/kj_harness/timing.py, stop_reason; docs/timing.md).

// A against B from times measured in the same rounds of an interleaved round robin.
struct PairedComparison {
  std::size_t n = 0;  // pairs
  double ratio = 1;   // median of a_i / b_i (geometric midpoint for even n); < 1: A faster
  double lo = 1;      // confidence interval of the median ratio
  double hi = 1;
  double confidence = 0;  // nominal level; the sign-test interval covers at least this
  enum class Outcome { a_faster, b_faster, tie } outcome = Outcome::tie;
  std::string text;  // "A faster by 2.13 % [1.80 %, 2.41 %] (99 % CI, 200 pairs)"
};

// Median of the ratios a_i / b_i with a distribution-free (sign-test) interval from the order
// statistics. A or B is faster only when the whole interval lies beyond 1 ± min_effect.
// "X faster by p %" is the share of the slower one's time that the faster one saves, so swapping
// A and B gives the same figure. Throws std::invalid_argument for mismatched lengths, fewer pairs
// than min_pairs_for_confidence, non-positive or non-finite times, or a confidence outside (0, 1).
PairedComparison compare_paired(std::span<const double> a, std::span<const double> b,
                                double confidence = 0.99, double min_effect = 0.002);

// 1-based rank k such that [k-th smallest, k-th largest] of n values covers their median with at
// least the given confidence, the largest such k; 0 when n is too small for any interval.
std::size_t sign_interval_rank(std::size_t n, double confidence);

// Fewest pairs that give a sign-test interval at this confidence (8 at 0.99, 6 at 0.95).
std::size_t min_pairs_for_confidence(double confidence);

// "12.3 µs", "1.05 ms", "850 ns": a duration in nanoseconds for people ("–" when not finite).
std::string format_ns(double ns);
// The same for a duration in seconds: the one way the judge's reports, pages and stats print a
// kernel time.
std::string format_seconds(double seconds);

// "0.00231×", "1.07×", "312×": a speedup with three significant digits, never rounded to zero.
std::string format_speedup(double ratio);

// Work of one benchmark case, from task.yml's optional per-benchmark `bytes` and `flops`.
struct Work {
  double bytes = 0;  // DRAM traffic the operation needs at least (read + written)
  double flops = 0;  // arithmetic it needs at least
  bool known() const { return bytes > 0 || flops > 0; }
};

// What a GPU can do: datasheet peaks bound what is physically possible; measured ceilings are
// what % of speed-of-light is reported against.
struct DeviceCeilings {
  std::string name;
  double peak_bytes_per_s = 0;      // datasheet memory bandwidth
  double peak_flops_per_s = 0;      // datasheet peak of the fastest format (dense)
  double measured_bytes_per_s = 0;  // copy bandwidth measured on such a device
  double measured_flops_per_s = 0;  // dense 16-bit matrix rate measured on such a device
};

// Ceilings of a known GPU, matched on its name (e.g. "NVIDIA H200"); none for others.
std::optional<DeviceCeilings> ceilings_for(std::string_view device_name);

// The shortest time (ns) the work could take at the datasheet peaks: a median below it is
// impossible (a cached or skipped computation), not fast.
double physical_floor_ns(const Work& work, const DeviceCeilings& device);

// % of speed-of-light: the time the work needs at the measured ceilings over the time taken.
double speed_of_light_pct(const Work& work, const DeviceCeilings& device, double median_ns);

}  // namespace kj::bench
