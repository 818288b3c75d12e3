// SPDX-License-Identifier: Apache-2.0
// The only user of OpenSSL.
#include "pin/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <memory>

#include "diag/error.hpp"

namespace envpin::pin {
namespace {

struct Hasher {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};

  Hasher() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
      throw diag::Error("internal: cannot initialise SHA-256");
  }
  void update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx.get(), data, size) != 1) throw diag::Error("internal: SHA-256 update failed");
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1)
      throw diag::Error("internal: SHA-256 final failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(size * 2);
    for (unsigned int i = 0; i < size; ++i) {
      out += kHex[digest[i] >> 4];
      out += kHex[digest[i] & 0xf];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::string sha256_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw diag::Error("cannot read '" + file.generic_string() + "'");
  Hasher h;
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    if (in.gcount() > 0) h.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw diag::Error("cannot read '" + file.generic_string() + "'");
  return h.hex();
}

}  // namespace envpin::pin
