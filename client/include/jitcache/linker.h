#ifndef JITCACHE_CLIENT_LINKER_H_
#define JITCACHE_CLIENT_LINKER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jitcache/client.h"
#include "jitcache/object_code.h"

namespace jitcache {

// How to link, after cuda.core's LinkerOptions. LTO-IR inputs imply -lto.
struct LinkerOptions {
  std::string arch;                       // "sm_90"; required
  bool link_time_optimization = false;    // -lto
  std::optional<int> optimization_level;  // -O<n>
  std::optional<int> max_register_count;
  bool debug = false;
  bool lineinfo = false;
  std::optional<bool> ftz;
  std::optional<bool> prec_div;
  std::optional<bool> prec_sqrt;
  std::optional<bool> fma;
  std::vector<std::string> kernels_used;
  std::vector<std::string> variables_used;
  bool optimize_unused_variables = false;
  std::vector<std::string> ptxas_options;
  std::optional<int> split_compile;
  std::vector<std::string> extra_options;  // passed through as written

  std::vector<std::string> AsNvJitLinkOptions() const;
};

// Links objects through the daemon, which caches the result. Objects that
// came from the daemon are named by digest; others are hashed here, and only
// what the daemon lacks is uploaded. Not synchronised; the Client must
// outlive the Linker.
class Linker {
 public:
  explicit Linker(const Client& client) : client_(&client) {}

  // An object from Compile (or Link); its digest is reused.
  Linker& Add(const ObjectCode& code);
  // Bytes of the given kind, e.g. a vendor's LTO-IR.
  Linker& Add(std::string bytes, CodeType kind, std::string name);
  // A file; the kind comes from its extension unless given.
  absl::Status AddFile(const std::string& path,
                       std::optional<CodeType> kind = std::nullopt);

  // target: kCubin or kPtx.
  absl::StatusOr<ObjectCode> Link(const LinkerOptions& options,
                                  CodeType target = CodeType::kCubin) const;

 private:
  const Client* client_;
  std::vector<Client::LinkInput> inputs_;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_LINKER_H_
