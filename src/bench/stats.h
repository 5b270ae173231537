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

// When to stop sampling one configuration (defaults: research/timing.md, section 9).
struct StopRule {
  std::size_t min_samples = 10;
  double min_seconds = 0.5;
  double target_rel_sem = 0.001;    // standard error of the mean / mean
  double target_rel_stdev = 0.005;  // stdev / mean
  double max_seconds = 15;
  std::size_t max_samples = 1000;
};

enum class StopReason {
  keep_going,
  precise_sem,
  precise_stdev,
  precise_median,
  max_seconds,
  max_samples
};

// Samples from which the robust rule (precise_median) may stop: below this the quartiles say
// too little about the spread.
inline constexpr std::size_t kRobustRuleMinSamples = 20;

// Keeps going until both min_samples and min_seconds are reached, then stops once the relative
// standard error or the relative stdev meets its target, or (from kRobustRuleMinSamples samples
// on) once the robust standard error of the median does: 1.2533 · (IQR / 1.349) / √n / median
// ≤ target_rel_sem. The median is the figure reported, and a few samples hit by a host stall
// (milliseconds among microseconds) swell the stdev without moving the median or the IQR; the
// robust rule stops those runs as early as clean ones instead of at the caps. The caps stop even
// before the minimums. When several hold, the first of precise_sem, precise_stdev,
// precise_median, max_samples, max_seconds wins.
StopReason should_stop(std::span<const double> samples, double elapsed_seconds,
                       const StopRule& rule);

// "keep_going", "precise_sem", …: the enumerator's name.
std::string to_string(StopReason reason);

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

// "12.3 µs", "1.05 ms", "850 ns": a duration in nanoseconds for people.
std::string format_ns(double ns);

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
