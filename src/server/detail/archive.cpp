#include "server/detail/archive.h"

#include <zlib.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <stdexcept>

namespace kj::server::detail {
namespace {

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zip records it.
std::uint32_t crc32(std::string_view bytes) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const char ch : bytes)
    crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

void put16(std::string& out, std::uint32_t value) {
  out += static_cast<char>(value & 0xFF);
  out += static_cast<char>((value >> 8) & 0xFF);
}

void put32(std::string& out, std::uint32_t value) {
  put16(out, value & 0xFFFF);
  put16(out, value >> 16);
}

}  // namespace

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16 |
                            static_cast<unsigned char>(bytes[i + 1]) << 8 |
                            static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& files) {
  constexpr std::uint32_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, the format's epoch
  std::string archive, directory;
  for (const auto& file : files) {
    // Named, not bound: a lambda below uses them (clang before 16 cannot capture a binding).
    const std::string& name = file.first;
    const std::string& content = file.second;
    if (content.size() >= 0xFFFFFFFFu || archive.size() >= 0xFFFFFFFFu) {
      throw std::length_error("a zip without ZIP64 holds files and archives under 4 GiB");
    }
    const std::uint32_t crc = crc32(content);
    const auto size = static_cast<std::uint32_t>(content.size());
    const auto offset = static_cast<std::uint32_t>(archive.size());
    // The fields the local header and the central directory share, from "version needed" to
    // "extra field length".
    const auto shared_fields = [&](std::string& out) {
      put16(out, 10);      // version needed: 1.0
      put16(out, 0x0800);  // flags: the name is UTF-8
      put16(out, 0);       // method: stored
      put16(out, 0);       // time
      put16(out, kDosDate);
      put32(out, crc);
      put32(out, size);
      put32(out, size);
      put16(out, static_cast<std::uint32_t>(name.size()));
      put16(out, 0);  // extra field length
    };
    put32(archive, 0x04034b50);  // local file header
    shared_fields(archive);
    archive += name;
    archive += content;

    put32(directory, 0x02014b50);  // central directory header
    put16(directory, 0x031E);      // made by: Unix, 3.0
    shared_fields(directory);
    put16(directory, 0);               // comment length
    put16(directory, 0);               // disk number
    put16(directory, 0);               // internal attributes
    put32(directory, 0100644u << 16);  // external attributes: a regular file, rw-r--r--
    put32(directory, offset);
    directory += name;
  }
  const auto directory_offset = static_cast<std::uint32_t>(archive.size());
  archive += directory;
  put32(archive, 0x06054b50);  // end of central directory
  put16(archive, 0);
  put16(archive, 0);
  put16(archive, static_cast<std::uint32_t>(files.size()));
  put16(archive, static_cast<std::uint32_t>(files.size()));
  put32(archive, static_cast<std::uint32_t>(directory.size()));
  put32(archive, directory_offset);
  put16(archive, 0);  // comment length
  return archive;
}

std::string gzip(std::string_view bytes) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  return out;
}

bool accepts_gzip(std::string_view accept_encoding) {
  std::size_t pos = 0;
  while (pos <= accept_encoding.size()) {
    std::size_t end = accept_encoding.find(',', pos);
    if (end == std::string_view::npos) end = accept_encoding.size();
    std::string item;
    for (const char c : accept_encoding.substr(pos, end - pos)) {
      if (!std::isspace(static_cast<unsigned char>(c))) {
        item += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    const std::string coding = item.substr(0, item.find(';'));
    const bool refused = item.find(";q=0") != std::string::npos &&
                         item.find_first_not_of("0.", item.find(";q=0") + 3) == std::string::npos;
    if ((coding == "gzip" || coding == "*") && !refused) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace kj::server::detail
