// SHA-256 as lowercase hex, for the judge's content-addressed caches. Internal to src/judge.
#pragma once

#include <string>
#include <string_view>

namespace kj::judge::detail {

std::string sha256_hex(std::string_view data);

}  // namespace kj::judge::detail
