// Compiles one kernel through the daemon at argv[1] and prints how it was
// served: HIT, MISS or JOINED, and the object's size.
#include <cstdio>

#include "jitcache/client.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
    return 2;
  }
  jitcache::ClientOptions options;
  options.socket_path = argv[1];
  options.local_fallback = false;
  absl::StatusOr<jitcache::Client> client = jitcache::Client::Connect(options);
  if (!client.ok()) return 3;
  jitcache::ProgramOptions program_options;
  program_options.arch = "sm_90";
  absl::StatusOr<jitcache::ObjectCode> code = client->Compile(
      jitcache::Program("extern \"C\" __global__ void k(int* x) { x[0] = 7; }",
                        "downstream.cu"),
      program_options, jitcache::CodeType::kPtx);
  if (!code.ok()) {
    std::fprintf(stderr, "%s\n", code.status().ToString().c_str());
    return 1;
  }
  std::printf("%s %zu bytes\n",
              std::string(jitcache::ServedName(code->served)).c_str(),
              code->bytes.size());
  return code->compiled ? 0 : 1;
}
