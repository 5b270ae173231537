#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/stats.h"

using kj::bench::aggregate;
using kj::bench::summarize;

TEST(Summary, MedianAndQuartilesOfOddAndEvenCounts) {
  std::vector<double> odd = {5, 1, 3, 2, 4};
  auto s = summarize(odd);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
  std::vector<double> even = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(summarize(even).median, 25);
}

TEST(Summary, OutlierMovesMeanNotMedian) {
  std::vector<double> samples(99, 100.0);
  samples.push_back(1e6);
  auto s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_GT(s.mean, 10000);
}

TEST(Summary, EmptyInputIsZero) { EXPECT_EQ(summarize({}).n, 0u); }

TEST(Aggregate, RankingMethods) {
  std::vector<double> v = {1, 4, 16};
  EXPECT_DOUBLE_EQ(aggregate(v, "last"), 16);
  EXPECT_DOUBLE_EQ(aggregate(v, "mean"), 7);
  EXPECT_NEAR(aggregate(v, "geom"), 4, 1e-12);
  EXPECT_THROW(aggregate(v, "max"), std::invalid_argument);
  std::vector<double> zero = {0, 1};
  EXPECT_THROW(aggregate(zero, "geom"), std::invalid_argument);
}

TEST(Format, Units) {
  EXPECT_EQ(kj::bench::format_ns(850), "850 ns");
  EXPECT_EQ(kj::bench::format_ns(12345), "12.3 µs");
  EXPECT_EQ(kj::bench::format_ns(1.05e6), "1.05 ms");
}

TEST(Format, SpeedupsKeepSignificantDigits) {
  // A slow submission on the CPU is thousands of times slower than the reference, not "0.00×".
  EXPECT_EQ(kj::bench::format_speedup(0.0023149), "0.00231×");
  EXPECT_EQ(kj::bench::format_speedup(1.0714), "1.07×");
  EXPECT_EQ(kj::bench::format_speedup(312.4), "312×");
}

using kj::bench::compare_paired;
using kj::bench::PairedComparison;
using Outcome = kj::bench::PairedComparison::Outcome;

namespace {

// Samples around `mean` with relative stdev `rel_noise`, from a fixed seed so tests are exact.
std::vector<double> noisy_samples(std::size_t n, double mean, double rel_noise, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> noise(0.0, rel_noise);
  std::vector<double> samples;
  for (std::size_t i = 0; i < n; ++i) samples.push_back(mean * (1 + noise(generator)));
  return samples;
}

}  // namespace

TEST(SignInterval, RanksComputedByHand) {
  // n = 10 at 95 %: P(X <= 1) = 11/1024 = 0.0107 <= 0.025 < P(X <= 2) = 56/1024, so k = 2.
  EXPECT_EQ(kj::bench::sign_interval_rank(10, 0.95), 2u);
  // n = 10 at 99 %: P(X <= 0) = 1/1024 <= 0.005 < P(X <= 1), so k = 1 (min and max).
  EXPECT_EQ(kj::bench::sign_interval_rank(10, 0.99), 1u);
  // n = 20 at 99 %: P(X <= 3) = 1351/2^20 = 0.0013 <= 0.005 < P(X <= 4) = 6196/2^20, so k = 4.
  EXPECT_EQ(kj::bench::sign_interval_rank(20, 0.99), 4u);
  // 2 * 2^-7 = 0.0156 > 0.01 but 2 * 2^-8 = 0.0078 <= 0.01; at 95 %, 2 * 2^-6 <= 0.05 < 2 * 2^-5.
  EXPECT_EQ(kj::bench::sign_interval_rank(7, 0.99), 0u);
  EXPECT_EQ(kj::bench::min_pairs_for_confidence(0.99), 8u);
  EXPECT_EQ(kj::bench::min_pairs_for_confidence(0.95), 6u);
}

TEST(SignInterval, LargeNMatchesNormalApproximation) {
  // Normal approximation: k ~ n/2 - z * sqrt(n)/2, z = 2.5758 at 99 %; exact differs by ~1.
  const std::size_t n = 100000;
  const double approx = 50000 - 2.5758 * std::sqrt(100000.0) / 2;
  const auto rank = static_cast<double>(kj::bench::sign_interval_rank(n, 0.99));
  EXPECT_NEAR(rank, approx, 2.0);
}

TEST(PairedComparison, ConstantRatioGivesPointInterval) {
  std::vector<double> b = noisy_samples(50, 10000, 0.05, 3);
  std::vector<double> a;
  for (double v : b) a.push_back(v * 0.9);
  const PairedComparison result = compare_paired(a, b);
  EXPECT_EQ(result.n, 50u);
  EXPECT_NEAR(result.ratio, 0.9, 1e-12);
  EXPECT_NEAR(result.lo, 0.9, 1e-12);
  EXPECT_NEAR(result.hi, 0.9, 1e-12);
  EXPECT_EQ(result.outcome, Outcome::a_faster);
  EXPECT_EQ(result.text, "A faster by 10.00 % [10.00 %, 10.00 %] (99 % CI, 50 pairs)");
}

TEST(PairedComparison, SmallSampleUsesHandComputedOrderStatistics) {
  // 20 pairs with b = 100 and ratios 0.90, 0.91, … 1.09 in shuffled order; k = 4 at 99 %, so
  // lo = 4th smallest = 0.93, hi = 17th smallest = 1.06, median = sqrt(0.99 * 1.00).
  std::vector<double> a;
  for (int i : {7, 0, 19, 3, 12, 5, 16, 1, 10, 14, 2, 18, 8, 11, 4, 17, 6, 15, 9, 13}) {
    a.push_back(90.0 + i);
  }
  const std::vector<double> b(20, 100.0);
  const PairedComparison result = compare_paired(a, b);
  EXPECT_DOUBLE_EQ(result.lo, 0.93);
  EXPECT_DOUBLE_EQ(result.hi, 1.06);
  EXPECT_DOUBLE_EQ(result.ratio, std::sqrt(0.99 * 1.00));
  EXPECT_EQ(result.outcome, Outcome::tie);
  EXPECT_EQ(result.text, "tie: ratio 0.9950 [0.9300, 1.0600] (99 % CI, 20 pairs)");
  // At 95 %, n = 20 gives k = 6 (P(X <= 5) = 0.0207 <= 0.025 < P(X <= 6) = 0.0577).
  const PairedComparison wider = compare_paired(a, b, 0.95);
  EXPECT_DOUBLE_EQ(wider.lo, 0.95);
  EXPECT_DOUBLE_EQ(wider.hi, 1.04);
}

TEST(PairedComparison, SwappingAAndBFlipsTheOutcome) {
  const auto b = noisy_samples(201, 20000, 0.005, 4);
  auto a = noisy_samples(201, 20000 * 0.97, 0.005, 5);
  const PairedComparison forward = compare_paired(a, b);
  const PairedComparison backward = compare_paired(b, a);
  EXPECT_EQ(forward.outcome, Outcome::a_faster);
  EXPECT_EQ(backward.outcome, Outcome::b_faster);
  EXPECT_NEAR(backward.ratio, 1 / forward.ratio, 1e-12);
  EXPECT_NEAR(backward.lo, 1 / forward.hi, 1e-12);
  EXPECT_NEAR(backward.hi, 1 / forward.lo, 1e-12);
  // The same percentage and interval, with the names swapped.
  EXPECT_EQ(backward.text.substr(1), forward.text.substr(1));
  EXPECT_EQ(backward.text.substr(0, 1), "B");
}

TEST(PairedComparison, IdenticalSeriesTie) {
  const auto a = noisy_samples(200, 8000, 0.01, 6);
  const PairedComparison same = compare_paired(a, a);
  EXPECT_EQ(same.outcome, Outcome::tie);
  EXPECT_EQ(same.text, "tie: ratio 1.0000 [1.0000, 1.0000] (99 % CI, 200 pairs)");
  // Independent noise on the same mean: the interval straddles 1.
  const auto b = noisy_samples(200, 8000, 0.01, 7);
  const PairedComparison noisy = compare_paired(a, b);
  EXPECT_EQ(noisy.outcome, Outcome::tie);
  EXPECT_LT(noisy.lo, 1);
  EXPECT_GT(noisy.hi, 1);
}

TEST(PairedComparison, IntervalInsideMinEffectBandIsATie) {
  std::vector<double> b(30, 1000.0);
  std::vector<double> a(30, 999.0);  // A faster by 0.1 %, below the 0.2 % minimum effect
  EXPECT_EQ(compare_paired(a, b).outcome, Outcome::tie);
  EXPECT_EQ(compare_paired(a, b, 0.99, 0.0005).outcome, Outcome::a_faster);
}

TEST(PairedComparison, TwoPercentShiftUnderHalfPercentNoise) {
  // Each round shares a drifting base time, as interleaved runs do; pairing cancels it.
  std::mt19937 generator(8);
  std::normal_distribution<double> noise(0.0, 0.005);
  std::uniform_real_distribution<double> drift(0.95, 1.05);
  std::vector<double> a;
  std::vector<double> b;
  for (int round = 0; round < 200; ++round) {
    const double base = 50000 * drift(generator);
    a.push_back(base * 0.98 * (1 + noise(generator)));
    b.push_back(base * (1 + noise(generator)));
  }
  const PairedComparison result = compare_paired(a, b);
  EXPECT_EQ(result.outcome, Outcome::a_faster);
  EXPECT_NEAR(result.ratio, 0.98, 0.002);
  EXPECT_LT(result.lo, result.ratio);
  EXPECT_GT(result.hi, result.ratio);
  EXPECT_GT(result.lo, 0.975);
  EXPECT_LT(result.hi, 0.985);
  EXPECT_EQ(result.text.rfind("A faster by 2.", 0), 0u) << result.text;
  EXPECT_NE(result.text.find("(99 % CI, 200 pairs)"), std::string::npos);
}

TEST(PairedComparison, RejectsBadInput) {
  const std::vector<double> eight(8, 100.0);
  const std::vector<double> seven(7, 100.0);
  EXPECT_THROW(compare_paired(eight, seven), std::invalid_argument);
  try {
    compare_paired(seven, seven);
    FAIL() << "7 pairs accepted at 99 %";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("at least 8 pairs, got 7"), std::string::npos)
        << error.what();
  }
  EXPECT_NO_THROW(compare_paired(eight, eight));
  EXPECT_NO_THROW(compare_paired(std::span(seven).first(6), std::span(seven).first(6), 0.95));
  std::vector<double> with_zero = eight;
  with_zero[3] = 0;
  EXPECT_THROW(compare_paired(with_zero, eight), std::invalid_argument);
  std::vector<double> with_negative = eight;
  with_negative[5] = -1;
  EXPECT_THROW(compare_paired(eight, with_negative), std::invalid_argument);
  std::vector<double> with_nan = eight;
  with_nan[0] = std::nan("");
  EXPECT_THROW(compare_paired(with_nan, eight), std::invalid_argument);
  EXPECT_THROW(compare_paired(eight, eight, 1.0), std::invalid_argument);
  EXPECT_THROW(compare_paired(eight, eight, 0.99, -0.1), std::invalid_argument);
}

TEST(Spread, CoefficientOfVariation) {
  const std::vector<double> samples = {5, 1, 3, 2, 4};  // mean 3, stdev sqrt(2.5)
  EXPECT_NEAR(kj::bench::coefficient_of_variation(samples), std::sqrt(2.5) / 3, 1e-12);
  const std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ(kj::bench::coefficient_of_variation(one), 0);
  const auto noisy = noisy_samples(10000, 100, 0.02, 9);
  EXPECT_NEAR(kj::bench::coefficient_of_variation(noisy), 0.02, 0.001);
  EXPECT_THROW(kj::bench::coefficient_of_variation({}), std::invalid_argument);
}

TEST(Spread, RelativeSpreadOfRunMedians) {
  const std::vector<double> medians = {136.1, 136.0, 136.19};
  EXPECT_NEAR(kj::bench::relative_spread(medians), 0.19 / 136.0, 1e-12);
  const std::vector<double> one = {5};
  EXPECT_DOUBLE_EQ(kj::bench::relative_spread(one), 0);
  const std::vector<double> with_zero = {0, 1};
  EXPECT_THROW(kj::bench::relative_spread(with_zero), std::invalid_argument);
  EXPECT_THROW(kj::bench::relative_spread({}), std::invalid_argument);
}

TEST(GeometricMean, KnownValuesAndAggregate) {
  const std::vector<double> values = {2, 8};
  EXPECT_NEAR(kj::bench::geometric_mean(values), 4, 1e-12);
  const std::vector<double> large(1000, 1e300);  // the plain product would overflow
  EXPECT_NEAR(kj::bench::geometric_mean(large) / 1e300, 1, 1e-9);
  const std::vector<double> shapes = {1, 10, 100};
  EXPECT_DOUBLE_EQ(kj::bench::geometric_mean(shapes), aggregate(shapes, "geom"));
  EXPECT_THROW(kj::bench::geometric_mean({}), std::invalid_argument);
  const std::vector<double> negative = {-1, 4};
  EXPECT_THROW(kj::bench::geometric_mean(negative), std::invalid_argument);
}

TEST(Roofline, FloorAndSpeedOfLightOnAnH200) {
  const auto h200 = kj::bench::ceilings_for("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_FALSE(kj::bench::ceilings_for("cpu"));
  // fp16 8192x8192 add: 3 x 128 MiB of traffic; 4.8 TB/s gives 83.9 µs at the very least.
  const kj::bench::Work add{3.0 * 8192 * 8192 * 2, 8192.0 * 8192};
  EXPECT_NEAR(kj::bench::physical_floor_ns(add, *h200), 83886.08, 0.01);
  // Against the measured 4.3 TB/s: 93.6 µs of work done in 98.4 µs is 95 % of speed-of-light.
  EXPECT_NEAR(kj::bench::speed_of_light_pct(add, *h200, 98430), 95.1, 0.1);
  // Compute-bound work: the FLOP term wins.
  const kj::bench::Work gemm{3.0 * 4096 * 4096 * 2, 2.0 * 4096 * 4096 * 4096};
  EXPECT_NEAR(kj::bench::physical_floor_ns(gemm, *h200), 2.0 * 4096 * 4096 * 4096 / 1979e12 * 1e9,
              1e-6);
  EXPECT_EQ(kj::bench::physical_floor_ns(kj::bench::Work{}, *h200), 0);
}
