#ifndef JITCACHE_TESTS_TESTING_TEST_CA_H_
#define JITCACHE_TESTS_TESTING_TEST_CA_H_

#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

// A certificate authority made by the test with the openssl command, in
// `dir`: NAME.crt (PEM) and NAME.key, signed by the CA (ca.crt), each key
// private to this user. Not thread-safe.
class TestCa {
 public:
  explicit TestCa(std::string dir) : dir_(std::move(dir)) {}

  absl::Status Create(const std::string& subject = "/CN=jitcache test CA") {
    return Run({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                Path("ca.key"), "-out", Path("ca.crt"), "-days", "2", "-subj",
                subject});
  }

  // A certificate for `common_name` with these subject alternative names
  // ("DNS:localhost,IP:127.0.0.1"), signed by this CA.
  absl::Status Issue(const std::string& name, const std::string& common_name,
                     const std::string& alt_names) {
    const std::string ext = Path(name + ".ext");
    WriteFile(ext, "subjectAltName=" + alt_names + "\n");
    if (absl::Status s = Run({"req", "-newkey", "rsa:2048", "-nodes", "-keyout",
                              Path(name + ".key"), "-out", Path(name + ".csr"),
                              "-subj", "/CN=" + common_name});
        !s.ok()) {
      return s;
    }
    chmod(Path(name + ".key").c_str(), 0600);
    return Run({"x509", "-req", "-in", Path(name + ".csr"), "-CA",
                Path("ca.crt"), "-CAkey", Path("ca.key"), "-CAcreateserial",
                "-out", Path(name + ".crt"), "-days", "2", "-extfile", ext});
  }

  std::string Path(const std::string& file) const {
    return absl::StrCat(dir_, "/", file);
  }

 private:
  absl::Status Run(std::vector<std::string> args) {
    args.insert(args.begin(), *FindProgram("openssl"));
    ProcessResult r = RunProcess(args);
    if (r.exit_code != 0) {
      return absl::InternalError("openssl " + args[1] + ": " + r.output);
    }
    return absl::OkStatus();
  }

  const std::string dir_;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_TEST_CA_H_
