#include "store/detail/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <limits>
#include <stdexcept>

namespace kj::store::detail {

Sha256 sha256(std::string_view data) {
  Sha256 digest{};
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) {
    throw std::runtime_error("SHA-256 failed");
  }
  return digest;
}

std::string to_hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    hex += kDigits[data[i] >> 4];
    hex += kDigits[data[i] & 0xf];
  }
  return hex;
}

std::vector<unsigned char> random_bytes(std::size_t count) {
  std::vector<unsigned char> bytes(count);
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      RAND_bytes(bytes.data(), static_cast<int>(count)) != 1) {
    throw std::runtime_error("the random number generator failed");
  }
  return bytes;
}

bool equal_digests(const Sha256& a, const unsigned char* b, std::size_t b_size) {
  return b_size == a.size() && CRYPTO_memcmp(a.data(), b, a.size()) == 0;
}

}  // namespace kj::store::detail
