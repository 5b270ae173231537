#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace kj::bench {

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
  if (method == "geom") {
    double log_sum = 0;
    for (double v : values) {
      if (!(v > 0)) throw std::invalid_argument("geometric mean needs positive values");
      log_sum += std::log(v);
    }
    return std::exp(log_sum / static_cast<double>(values.size()));
  }
  throw std::invalid_argument("unknown ranking method '" + method + "'");
}

std::string format_ns(double ns) {
  char buffer[64];
  if (ns < 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3g µs", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3g ms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g s", ns / 1e9);
  }
  return buffer;
}

}  // namespace kj::bench
