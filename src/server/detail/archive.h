// Byte encodings the KernelBot API needs for profile results: base64 (popcorn-cli decodes the
// report text and the trace with base64's standard alphabet) and a zip archive of stored
// (uncompressed) files, which popcorn-cli saves as the trace `profile_*.zip`.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kj::server::detail {

// RFC 4648 base64, standard alphabet, with padding.
std::string base64(std::string_view bytes);

// A zip archive (PKWARE APPNOTE 6.3, method 0 "stored", no ZIP64: every file and the whole
// archive under 4 GiB) holding `files` as (name, content) in order, dated 1980-01-01.
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace kj::server::detail
