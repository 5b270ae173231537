#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace kj::bench {

namespace {

struct MeanAndStdev {
  double mean = 0;
  double stdev = 0;  // sample standard deviation (n-1); 0 for fewer than two values
};

// Two passes keep the stdev accurate when it is tiny against the mean (0.1 % noise on µs times).
MeanAndStdev mean_and_stdev(std::span<const double> values) {
  MeanAndStdev result;
  if (values.empty()) return result;
  const auto n = static_cast<double>(values.size());
  result.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - result.mean) * (v - result.mean);
    result.stdev = std::sqrt(squares / (n - 1));
  }
  return result;
}

double log_add_exp(double x, double y) {
  if (x == -std::numeric_limits<double>::infinity()) return y;
  const double larger = std::max(x, y);
  return larger + std::log1p(std::exp(std::min(x, y) - larger));
}

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("confidence must lie strictly between 0 and 1");
  }
}

// "99", "95", "99.9": a confidence level in percent without trailing zeros.
std::string percent_label(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", fraction * 100);
  return buffer;
}

}  // namespace

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.median = quantile_sorted(sorted, 0.5);
  s.q1 = quantile_sorted(sorted, 0.25);
  s.q3 = quantile_sorted(sorted, 0.75);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  if (s.n > 1) {
    double sq = 0;
    for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(sq / static_cast<double>(s.n - 1));
  }
  return s;
}

double aggregate(std::span<const double> values, const std::string& method) {
  if (values.empty()) throw std::invalid_argument("no values to aggregate");
  if (method == "last") return values.back();
  if (method == "mean") {
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  }
  if (method == "geom") return geometric_mean(values);
  throw std::invalid_argument("unknown ranking method '" + method + "'");
}

double geometric_mean(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("geometric mean of no values");
  // Summing logs avoids overflow of the product of many large ns figures.
  double log_sum = 0;
  for (double v : values) {
    if (!(v > 0)) throw std::invalid_argument("geometric mean needs positive values");
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

double coefficient_of_variation(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("coefficient of variation of no samples");
  const MeanAndStdev stats = mean_and_stdev(samples);
  if (!(stats.mean > 0)) {
    throw std::invalid_argument("coefficient of variation needs a positive mean");
  }
  return stats.stdev / stats.mean;
}

double relative_spread(std::span<const double> medians) {
  if (medians.empty()) throw std::invalid_argument("relative spread of no medians");
  const auto [smallest, largest] = std::minmax_element(medians.begin(), medians.end());
  if (!(*smallest > 0)) throw std::invalid_argument("relative spread needs positive medians");
  return (*largest - *smallest) / *smallest;
}

std::size_t sign_interval_rank(std::size_t n, double confidence) {
  check_confidence(confidence);
  // The interval [x_(k), x_(n+1-k)] misses the median with probability 2 * P(Bin(n, 1/2) <= k-1);
  // the largest k keeping that within 1 - confidence is the first j whose CDF exceeds the half.
  // Log space, because 2^-n underflows long before n = 100000.
  const double log_half_alpha = std::log((1 - confidence) / 2);
  // Tolerates rounding in the sum so that an exactly attainable level is not missed.
  const double tolerance = 1e-12;
  const auto count = static_cast<double>(n);
  const double log_half_to_n = -count * std::log(2.0);
  double log_choose = 0;  // log C(n, j)
  double log_cdf = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j <= n; ++j) {
    log_cdf = log_add_exp(log_cdf, log_choose + log_half_to_n);
    if (log_cdf > log_half_alpha + tolerance) return j;
    const auto successes = static_cast<double>(j);
    log_choose += std::log(count - successes) - std::log(successes + 1);
  }
  return 0;  // unreachable: the CDF reaches 1 > (1 - confidence) / 2
}

std::size_t min_pairs_for_confidence(double confidence) {
  check_confidence(confidence);
  std::size_t n = 1;
  while (sign_interval_rank(n, confidence) == 0) ++n;
  return n;
}

PairedComparison compare_paired(std::span<const double> a, std::span<const double> b,
                                double confidence, double min_effect) {
  check_confidence(confidence);
  if (!(min_effect >= 0)) throw std::invalid_argument("min_effect must not be negative");
  if (a.size() != b.size()) {
    throw std::invalid_argument("paired comparison needs as many A times as B times, got " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()));
  }
  const std::size_t min_pairs = min_pairs_for_confidence(confidence);
  if (a.size() < min_pairs) {
    throw std::invalid_argument(
        "a " + percent_label(confidence) + " % sign-test interval needs at least " +
        std::to_string(min_pairs) + " pairs, got " + std::to_string(a.size()));
  }
  std::vector<double> ratios;
  ratios.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i]))) {
      throw std::invalid_argument("paired comparison needs positive finite times (pair " +
                                  std::to_string(i) + ")");
    }
    ratios.push_back(a[i] / b[i]);
  }
  std::sort(ratios.begin(), ratios.end());

  PairedComparison result;
  result.n = ratios.size();
  result.confidence = confidence;
  // Geometric midpoint for even n, so that swapping A and B gives exactly 1 / ratio.
  const std::size_t upper_middle = result.n / 2;
  result.ratio = result.n % 2 == 1 ? ratios[upper_middle]
                                   : std::sqrt(ratios[upper_middle - 1] * ratios[upper_middle]);
  const std::size_t rank = sign_interval_rank(result.n, confidence);
  result.lo = ratios[rank - 1];
  result.hi = ratios[result.n - rank];

  const std::string suffix =
      " (" + percent_label(confidence) + " % CI, " + std::to_string(result.n) + " pairs)";
  char buffer[160];
  if (result.hi < 1 - min_effect) {
    result.outcome = PairedComparison::Outcome::a_faster;
    // A saves 1 - ratio of B's time; a larger ratio means a smaller saving, hence hi first.
    std::snprintf(buffer, sizeof buffer, "A faster by %.2f %% [%.2f %%, %.2f %%]",
                  (1 - result.ratio) * 100, (1 - result.hi) * 100, (1 - result.lo) * 100);
  } else if (result.lo > 1 + min_effect) {
    result.outcome = PairedComparison::Outcome::b_faster;
    // B saves 1 - 1/ratio of A's time: the same figure A would get with the roles swapped.
    std::snprintf(buffer, sizeof buffer, "B faster by %.2f %% [%.2f %%, %.2f %%]",
                  (1 - 1 / result.ratio) * 100, (1 - 1 / result.lo) * 100,
                  (1 - 1 / result.hi) * 100);
  } else {
    result.outcome = PairedComparison::Outcome::tie;
    std::snprintf(buffer, sizeof buffer, "tie: ratio %.4f [%.4f, %.4f]", result.ratio, result.lo,
                  result.hi);
  }
  result.text = buffer + suffix;
  return result;
}

std::string format_ns(double ns) {
  if (!std::isfinite(ns)) return "–";
  char buffer[64];
  const double magnitude = std::fabs(ns);
  if (magnitude < 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.0f ns", ns);
  } else if (magnitude < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3g µs", ns / 1e3);
  } else if (magnitude < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3g ms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g s", ns / 1e9);
  }
  return buffer;
}

std::string format_seconds(double seconds) { return format_ns(seconds * 1e9); }

std::string format_speedup(double ratio) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, ratio >= 100 ? "%.0f×" : "%.3g×", ratio);
  return buffer;
}

std::optional<DeviceCeilings> ceilings_for(std::string_view device_name) {
  // Datasheet: H200 SXM 4.8 TB/s, H100 SXM 3.35 TB/s; FP8 dense 1979 TFLOP/s on both. Measured on
  // an H200 here: a device-to-device copy at 4.3 TB/s (bytes read + written), a bf16 8192^3
  // matrix product at 788 TFLOP/s on random data.
  if (device_name.find("H200") != std::string_view::npos) {
    return DeviceCeilings{"H200", 4.8e12, 1979e12, 4.3e12, 788e12};
  }
  if (device_name.find("H100") != std::string_view::npos) {
    return DeviceCeilings{"H100", 3.35e12, 1979e12, 3.35e12 * 0.9, 788e12};
  }
  return std::nullopt;
}

double physical_floor_ns(const Work& work, const DeviceCeilings& device) {
  double seconds = 0;
  if (work.bytes > 0 && device.peak_bytes_per_s > 0) seconds = work.bytes / device.peak_bytes_per_s;
  if (work.flops > 0 && device.peak_flops_per_s > 0) {
    seconds = std::max(seconds, work.flops / device.peak_flops_per_s);
  }
  return seconds * 1e9;
}

double speed_of_light_pct(const Work& work, const DeviceCeilings& device, double median_ns) {
  if (!(median_ns > 0)) return 0;
  double seconds = 0;
  if (work.bytes > 0 && device.measured_bytes_per_s > 0) {
    seconds = work.bytes / device.measured_bytes_per_s;
  }
  if (work.flops > 0 && device.measured_flops_per_s > 0) {
    seconds = std::max(seconds, work.flops / device.measured_flops_per_s);
  }
  return seconds * 1e9 / median_ns * 100;
}

}  // namespace kj::bench
