#include "server/remote/remote_keys.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/little_endian.h"

namespace jitcache {
namespace {

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};
struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// One HMAC implementation for the process, fetched once.
EVP_MAC* Hmac() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

}  // namespace

namespace {

// The contents of a file that must be this user's and readable by no one
// else (it holds a secret); `flag` names it in errors.
absl::Status CheckPrivate(absl::string_view flag, const std::string& path,
                          absl::string_view why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--", flag, "=", path, ": ", std::strerror(errno)));
  }
  if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--", flag, "=", path,
        ": must belong to this daemon's user and be readable by no one else "
        "(chmod 600)",
        why));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadPrivateFile(absl::string_view flag,
                                            const std::string& path,
                                            absl::string_view why) {
  if (absl::Status s = CheckPrivate(flag, path, why); !s.ok()) return s;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("--", flag, "=", path, ": cannot read it"));
  }
  return text.str();
}

}  // namespace

absl::Status CheckPrivateFile(absl::string_view flag, const std::string& path) {
  return CheckPrivate(flag, path, "");
}

absl::StatusOr<std::vector<std::string>> LoadRemoteKeys(
    const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadPrivateFile("remote_key_file", path,
                      "; whoever can read a team key can sign entries");
  if (!text.ok()) return text.status();
  std::vector<std::string> keys;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const bool hex = std::all_of(line.begin(), line.end(), [](char c) {
      return absl::ascii_isxdigit(static_cast<unsigned char>(c));
    });
    if (!hex || line.size() % 2 != 0 || line.size() < 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--remote_key_file=", path, " line ", line_number,
          ": a key is at least 32 bytes written as hex (openssl rand -hex "
          "32)"));
    }
    keys.push_back(absl::HexStringToBytes(line));
  }
  if (keys.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote_key_file=", path, ": no key in it"));
  }
  return keys;
}

absl::StatusOr<RedisCredentials> LoadRedisCredentials(const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadPrivateFile("remote_credentials_file", path, "");
  if (!text.ok()) return text.status();
  const std::string first = text->substr(0, text->find('\n'));
  std::vector<std::string> words =
      absl::StrSplit(absl::StripAsciiWhitespace(first), ' ', absl::SkipEmpty());
  if (words.size() == 1) return RedisCredentials{"", words[0]};
  if (words.size() == 2) return RedisCredentials{words[0], words[1]};
  return absl::InvalidArgumentError(
      absl::StrCat("--remote_credentials_file=", path,
                   ": one line, PASSWORD or USER PASSWORD"));
}

std::string RemoteMac(absl::string_view key,
                      std::initializer_list<absl::string_view> parts) {
  std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> ctx(EVP_MAC_CTX_new(Hmac()));
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end()};
  std::string out(32, '\0');
  size_t size = 0;
  bool ok = ctx != nullptr &&
            EVP_MAC_init(ctx.get(),
                         reinterpret_cast<const unsigned char*>(key.data()),
                         key.size(), params) == 1;
  for (absl::string_view part : parts) {
    unsigned char length[8];
    le::Put<uint64_t>(length, part.size());
    ok = ok && EVP_MAC_update(ctx.get(), length, sizeof(length)) == 1 &&
         EVP_MAC_update(ctx.get(),
                        reinterpret_cast<const unsigned char*>(part.data()),
                        part.size()) == 1;
  }
  ok = ok &&
       EVP_MAC_final(ctx.get(), reinterpret_cast<unsigned char*>(out.data()),
                     &size, out.size()) == 1 &&
       size == out.size();
  // No MAC (OpenSSL failed) verifies nothing and signs nothing that verifies.
  if (!ok) return std::string();
  return out;
}

bool RemoteMacMatches(absl::string_view mac,
                      const std::vector<std::string>& keys,
                      std::initializer_list<absl::string_view> parts) {
  if (mac.size() != 32) return false;
  for (const std::string& key : keys) {
    const std::string want = RemoteMac(key, parts);
    if (want.size() == mac.size() &&
        CRYPTO_memcmp(want.data(), mac.data(), mac.size()) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace jitcache
