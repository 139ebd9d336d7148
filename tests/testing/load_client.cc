// A load generator for the load test: one process, a bounded number of
// requests within a bounded time, against a daemon on a local socket.
//
//   jitcache_load_client SOCKET SEED REQUESTS MAX_SECONDS
//
// Request i is, by i: a hit on one of 8 warm kernels (70%), a new key (5%),
// a program that does not compile (5%), or a bad request (20%). Prints one
// line: "ok=.. compile_error=.. resource_exhausted=.. invalid_argument=..
// unexpected=.. sent=.." and, for unexpected answers, the first few.
//
//   jitcache_load_client SOCKET SEED REQUESTS MAX_SECONDS crash
//
// With "crash" (against a daemon running tests/testing/fault_worker.cc),
// request i is a program that crashes the compiler when i % 90 == 45, and a
// hit on warm kernel 0 otherwise; prints "hits=.. crashed=.. unexpected=..".
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "jitcache/client.h"

namespace {

std::string WarmKernel(int i) {
  return absl::StrCat("extern \"C\" __global__ void warm", i,
                      "(int* x) { x[0] = ", i, "; }");
}

}  // namespace

// The crash mix: every answer must be a HIT, or the compiler's crash.
int CrashMix(const jitcache::Client& client, int seed, int requests,
             absl::Time stop) {
  int hits = 0, crashed = 0, unexpected = 0;
  for (int i = 0; i < requests && absl::Now() < stop; ++i) {
    const bool crash = i % 90 == 45;
    const std::string source =
        crash ? absl::StrCat("// JITCACHE_FAULT_CRASH ", seed, " ", i, "\n",
                             WarmKernel(0))
              : WarmKernel(0);
    auto code =
        client.Compile(jitcache::Program(source, "load.cu"),
                       jitcache::ProgramOptions{}, jitcache::CodeType::kPtx);
    if (!crash && code.ok() && code->served == jitcache::Served::kHit) {
      ++hits;
    } else if (crash && code.status().code() == absl::StatusCode::kInternal &&
               absl::StrContains(code.status().message(),
                                 "the compiler crashed (SIGSEGV)")) {
      ++crashed;
    } else if (++unexpected <= 3) {
      std::fprintf(stderr, "unexpected (request %d): %s\n", i,
                   code.ok() ? "not a hit" : code.status().ToString().c_str());
    }
  }
  std::printf("hits=%d crashed=%d unexpected=%d\n", hits, crashed, unexpected);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[5]) == "crash") {
    auto client =
        jitcache::Client::Connect({.socket_path = argv[1],
                                   .local_fallback = false,
                                   .compile_deadline = absl::Seconds(120)});
    if (!client.ok()) return 3;
    return CrashMix(*client, std::atoi(argv[2]), std::atoi(argv[3]),
                    absl::Now() + absl::Seconds(std::atoi(argv[4])));
  }
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SOCKET SEED REQUESTS MAX_SECONDS\n",
                 argv[0]);
    return 2;
  }
  const std::string socket = argv[1];
  const int seed = std::atoi(argv[2]);
  const int requests = std::atoi(argv[3]);
  const absl::Time stop = absl::Now() + absl::Seconds(std::atoi(argv[4]));
  auto client = jitcache::Client::Connect(
      {.socket_path = socket, .compile_deadline = absl::Seconds(60)});
  if (!client.ok()) return 3;

  int ok = 0, compile_error = 0, exhausted = 0, invalid = 0, unexpected = 0;
  int sent = 0;
  for (int i = 0; i < requests && absl::Now() < stop; ++i, ++sent) {
    const int kind = i % 20;  // 14 hit, 1 new, 1 broken, 4 bad
    std::string source;
    jitcache::ProgramOptions options;
    if (kind < 14) {
      source = WarmKernel(i % 8);
    } else if (kind == 14) {
      source =
          absl::StrCat("extern \"C\" __global__ void fresh(int* x) { x[0] = ",
                       seed * 1000000 + i, "; }");
    } else if (kind == 15) {
      source = absl::StrCat("__global__ void broken", i % 4, "( { }");
    } else if (kind == 16) {
      source = WarmKernel(0);
      options.extra_options = {"--no-such-option"};
    } else if (kind == 17) {
      source = std::string("__global__ void k() {}\0", 23);
    } else if (kind == 18) {
      source = WarmKernel(1);
      options.arch = "sm_1";
    } else {
      source = WarmKernel(2);
      options.extra_options = {"--pch-dir=/tmp"};
    }
    auto code = client->Compile(jitcache::Program(source, "load.cu"), options,
                                jitcache::CodeType::kPtx);
    if (code.ok()) {
      if (code->compiled) {
        ++ok;
      } else {
        ++compile_error;
      }
    } else if (code.status().code() == absl::StatusCode::kResourceExhausted) {
      ++exhausted;
    } else if (code.status().code() == absl::StatusCode::kInvalidArgument) {
      ++invalid;
    } else {
      if (++unexpected <= 3) {
        std::fprintf(stderr, "unexpected: %s\n",
                     code.status().ToString().c_str());
      }
    }
  }
  std::printf(
      "ok=%d compile_error=%d resource_exhausted=%d invalid_argument=%d "
      "unexpected=%d sent=%d\n",
      ok, compile_error, exhausted, invalid, unexpected, sent);
  return 0;
}
