// SHA-256 and random bytes from OpenSSL's libcrypto (EVP and RAND_bytes: a CSPRNG).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kj::store::detail {

using Sha256 = std::array<unsigned char, 32>;

Sha256 sha256(std::string_view data);
std::string to_hex(const unsigned char* data, std::size_t size);
inline std::string to_hex(const Sha256& digest) { return to_hex(digest.data(), digest.size()); }
// Throws std::runtime_error when the CSPRNG cannot deliver.
std::vector<unsigned char> random_bytes(std::size_t count);
// True when both are equal, in time independent of where they differ.
bool equal_digests(const Sha256& a, const unsigned char* b, std::size_t b_size);

}  // namespace kj::store::detail
