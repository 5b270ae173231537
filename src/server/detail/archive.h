// Byte encodings of the server's responses: base64 (popcorn-cli decodes profile reports and
// traces with base64's standard alphabet), a zip archive of stored (uncompressed) files, which
// popcorn-cli saves as the trace `profile_*.zip`, and gzip for cached bodies sent to clients
// that accept it.
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

// RFC 1952 gzip of `bytes` (zlib, default level).
std::string gzip(std::string_view bytes);

// Whether an Accept-Encoding header value accepts gzip (`gzip` or `*`, without q=0).
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace kj::server::detail
