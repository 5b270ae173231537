// How the judge matches regular expressions against text it does not control (submissions,
// problem files, model replies, harness output): ECMAScript, run by libstdc++'s breadth-first
// (Thompson) executor. Its default, depth-first one recurses once per character a quantifier
// takes, so 100,000 spaces after `time` in a submission overflowed the stack and took the whole
// process down (kj serve runs the screen in its worker). The breadth-first one keeps a set of
// states instead: its depth is bounded by the pattern. It cannot match back-references: none of
// the patterns given to it uses one.
#pragma once

#include <regex>

namespace kj {

inline constexpr auto kLinearRegex = std::regex::ECMAScript | std::regex_constants::__polynomial;

}  // namespace kj
