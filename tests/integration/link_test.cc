// Link-time optimisation through the daemon: real NVRTC, real nvJitLink.
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/linker.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/elf_symbols.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

// Unit A: a CUB block sort kernel that calls a device function of unit B.
constexpr char kUnitB2[] = "__device__ int transform(int v) { return 5 * v; }";

class LinkTest : public testing::DaemonFixture {
 protected:
  ObjectCode Ltoir(const char* source, const char* name) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.relocatable_device_code = true;
    // Settled on return: the tests count the daemon's proofs.
    options.wait_for_proof = true;
    auto code =
        client_->Compile(Program(source, name), options, CodeType::kLtoir);
    EXPECT_TRUE(code.ok()) << code.status();
    EXPECT_TRUE(code->compiled) << code->log;
    return *code;
  }

  static LinkerOptions Sm90() {
    LinkerOptions options;
    options.arch = "sm_90";
    return options;
  }
};

TEST_F(LinkTest, TwoLtoUnitsLinkIntoACubinAndTheSecondLinkHits) {
  const ObjectCode a = Ltoir(kernels::kLtoSortUnit, "a.cu");
  const ObjectCode b = Ltoir(kernels::kLtoTransformUnit, "b.cu");
  Linker linker(*client_);
  linker.Add(a).Add(b);
  auto first = linker.Link(Sm90());
  auto second = linker.Link(Sm90());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(first->compiled) << first->log;
  EXPECT_EQ(first->served, Served::kMiss);
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_EQ(second->bytes, first->bytes);
  EXPECT_EQ(second->cache_key, first->cache_key);

  bool exported = false;
  for (const auto& sym : testing::ElfSymbols(first->bytes)) {
    if (sym.name == "sort_transformed" && sym.type == 2 && sym.binding == 1) {
      exported = true;
    }
  }
  EXPECT_TRUE(exported) << "the linked cubin does not export the kernel";
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->link_requests, 2u);
}

// libnvJitLink.so.13's requests: a link as the caller drove it is run once
// and recorded call by call; its first steps are then answered from the
// record alone (never by a link of their own), under keys that hold each
// input's name.
TEST_F(LinkTest, AsCalledFirstStepsAreAnsweredOnlyFromAWholeLinksRecord) {
  const ObjectCode a = Ltoir(kernels::kLtoSortUnit, "a.cu");
  const ObjectCode b = Ltoir(kernels::kLtoTransformUnit, "b.cu");
  std::vector<Client::LinkInput> inputs = {
      {CodeType::kLtoir, "a", Digest::Of(a.bytes).Hex(), a.bytes},
      {CodeType::kLtoir, "b", Digest::Of(b.bytes).Hex(), b.bytes}};
  const std::vector<std::string> options = {"-arch=sm_90", "-lto"};
  auto steps = client_->LinkAsCalled(inputs, options, /*steps_only=*/true);
  EXPECT_TRUE(absl::IsNotFound(steps.status())) << steps.status();
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->compiles, 2u);  // the two units; no link

  auto whole = client_->LinkAsCalled(inputs, options, /*steps_only=*/false);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->steps.size(), 4u);  // create, two adds, complete
  EXPECT_TRUE(whole->complete);
  for (const Client::NvJitLinkStep& step : whole->steps) {
    EXPECT_EQ(step.result, 0);
  }
  EXPECT_EQ(whole->cubin_size_result, 0);
  EXPECT_FALSE(whole->cubin.empty());
  EXPECT_FALSE(whole->hit);

  for (size_t first = 0; first <= inputs.size(); ++first) {
    const std::vector<Client::LinkInput> prefix(inputs.begin(),
                                                inputs.begin() + first);
    auto recorded = client_->LinkAsCalled(prefix, options, true);
    ASSERT_TRUE(recorded.ok()) << first << ": " << recorded.status();
    EXPECT_EQ(recorded->steps.size(), first + 1);
    EXPECT_FALSE(recorded->complete);
    EXPECT_TRUE(recorded->hit);
  }
  // Another name for the same bytes: the daemon's proof (the link again
  // under other names) found the real nvJitLink's answer the same, so the
  // steps hold for any names (NvJitLinkDifferential checks this against
  // the real nvJitLink, both ways). Until the proof ends, the caller's
  // names alone have them.
  ASSERT_TRUE(testing::ProofsSettled(dir_.Sub("s.sock")));
  inputs[0].name = "renamed";
  auto renamed = client_->LinkAsCalled(inputs, options, true);
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_TRUE(renamed->hit);
  auto proven = client_->Stats();
  ASSERT_TRUE(proven.ok());
  // The one link's proof (the units' compiles had theirs before it).
  EXPECT_EQ(proven->place_proofs, stats->place_proofs + 1);
  EXPECT_EQ(proven->place_shared, stats->place_shared + 1);
  auto again =
      client_->LinkAsCalled({inputs[1]}, {"-arch=sm_90", "-lto", "-O3"}, true);
  EXPECT_TRUE(absl::IsNotFound(again.status()));
  stats = client_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->compiles, 3u);  // one link, however often asked
  // An option nvJitLink would see cut short is refused.
  EXPECT_TRUE(absl::IsInvalidArgument(
      client_
          ->LinkAsCalled(inputs, {std::string("-arch=sm_90\0-lto", 16)}, false)
          .status()));
}

TEST_F(LinkTest, ChangingOneInputChangesTheLinkKey) {
  const ObjectCode a = Ltoir(kernels::kLtoSortUnit, "a.cu");
  Linker one(*client_), two(*client_);
  one.Add(a).Add(Ltoir(kernels::kLtoTransformUnit, "b.cu"));
  two.Add(a).Add(Ltoir(kUnitB2, "b.cu"));
  auto first = one.Link(Sm90());
  auto second = two.Link(Sm90());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->cache_key, second->cache_key);
  EXPECT_EQ(second->served, Served::kMiss);
  EXPECT_NE(first->bytes, second->bytes);
}

TEST_F(LinkTest, UndefinedSymbolIsALinkErrorWithTheLogCachedLikeAResult) {
  Linker linker(*client_);
  linker.Add(Ltoir(kernels::kLtoSortUnit, "a.cu"));
  auto first = linker.Link(Sm90());
  auto second = linker.Link(Sm90());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(first->compiled);
  EXPECT_THAT(first->log, HasSubstr("Unresolved extern function"));
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_EQ(second->log, first->log);
  EXPECT_EQ(client_->Stats()->link_errors, 2u);
}

TEST_F(LinkTest, UploadWhoseBytesDoNotMatchTheDigestIsRefused) {
  const std::string claimed = Digest::Of("what was promised").Hex();
  absl::Status s =
      client_->UploadObject(claimed, CodeType::kLtoir, "other bytes");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr(claimed));
  auto fetched = client_->FetchObject(claimed);
  EXPECT_EQ(fetched.status().code(), absl::StatusCode::kNotFound);

  const std::string bytes = "honest bytes";
  const std::string digest = Digest::Of(bytes).Hex();
  ASSERT_TRUE(client_->UploadObject(digest, CodeType::kLtoir, bytes).ok());
  auto missing = client_->FindMissingObjects({digest, claimed});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, std::vector<std::string>{claimed});
  auto back = client_->FetchObject(digest);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->bytes, bytes);
  EXPECT_EQ(back->code_type, CodeType::kLtoir);
}

// The one way a caller sends what a miss lacks: a link by digest of
// objects this daemon never saw is answered NOT_FOUND before anything runs,
// the Linker asks again with the bytes, and the daemon keeps them: a later
// link names them by digest alone.
TEST_F(LinkTest, InputsTheDaemonLacksAreSentWithTheRequestAndKept) {
  // LTO-IR made by another daemon, with a store of its own.
  testing::TempDir elsewhere;
  testing::DaemonProcess other(elsewhere.Sub("o.sock"), ":memory:");
  ASSERT_TRUE(other.Start().ok()) << other.Log();
  absl::StatusOr<Client> there =
      Client::Connect({.socket_path = other.socket(), .local_fallback = false});
  ASSERT_TRUE(there.ok());
  ProgramOptions options;
  options.arch = "sm_90";
  options.relocatable_device_code = true;
  auto a = there->Compile(Program(kernels::kLtoSortUnit, "a.cu"), options,
                          CodeType::kLtoir);
  auto b = there->Compile(Program(kernels::kLtoTransformUnit, "b.cu"), options,
                          CodeType::kLtoir);
  ASSERT_TRUE(a.ok() && a->compiled && b.ok() && b->compiled);
  const std::vector<Client::LinkInput> by_digest = {
      {CodeType::kLtoir, "a.ltoir", Digest::Of(a->bytes).Hex(), ""},
      {CodeType::kLtoir, "b.ltoir", Digest::Of(b->bytes).Hex(), ""}};
  const uint64_t compiles_before = testing::StatsOf(daemon_->socket()).compiles;
  auto lacking =
      client_->Link(by_digest, {"-arch=sm_90", "-lto"}, CodeType::kCubin);
  ASSERT_FALSE(lacking.ok());
  EXPECT_EQ(lacking.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(lacking.status().message()),
              HasSubstr("send its bytes with the request"));
  EXPECT_EQ(testing::StatsOf(daemon_->socket()).compiles, compiles_before);

  Linker linker(*client_);
  linker.Add(*a).Add(*b);
  auto linked = linker.Link(Sm90());
  ASSERT_TRUE(linked.ok()) << linked.status();
  ASSERT_TRUE(linked->compiled) << linked->log;
  // Kept: another link of the same objects, named by digest alone.
  auto again = client_->Link(by_digest, {"-arch=sm_90", "-lto", "-Xptxas=-O2"},
                             CodeType::kCubin);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->compiled) << again->log;
  EXPECT_EQ(again->served, Served::kMiss);
}

TEST_F(LinkTest, LinkingAnObjectTheStoreLacksIsNotFoundNamingTheDigest) {
  const std::string digest = Digest::Of("never uploaded").Hex();
  auto code = client_->Link({{CodeType::kLtoir, "ghost.ltoir", digest, ""}},
                            {"-arch=sm_90"}, CodeType::kCubin);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(code.status().message()), HasSubstr(digest));
}

TEST_F(LinkTest, BadLinkRequestsAreInvalidArgument) {
  const ObjectCode b = Ltoir(kernels::kLtoTransformUnit, "b.cu");
  Linker linker(*client_);
  linker.Add(b);
  LinkerOptions no_arch;
  EXPECT_EQ(linker.Link(no_arch).status().code(),
            absl::StatusCode::kInvalidArgument);
  LinkerOptions unknown = Sm90();
  unknown.extra_options = {"-frobnicate"};
  auto bad = linker.Link(unknown);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("unknown nvJitLink option"));
  LinkerOptions timing = Sm90();
  timing.extra_options = {"-time"};
  EXPECT_THAT(std::string(linker.Link(timing).status().message()),
              HasSubstr("refused"));
  EXPECT_EQ(Linker(*client_).Link(Sm90()).status().code(),
            absl::StatusCode::kInvalidArgument);  // no inputs
  // OptiX IR is no input nvJitLink takes: refused as a link input and as
  // an upload, by name, before anything runs.
  ObjectCode optix = b;
  optix.code_type = CodeType::kOptixIr;
  Linker with_optix(*client_);
  with_optix.Add(optix);
  auto refused = with_optix.Link(Sm90());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("no valid kind"));
  const std::string bytes = "optix ir";
  EXPECT_EQ(
      client_->UploadObject(Digest::Of(bytes).Hex(), CodeType::kOptixIr, bytes)
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST_F(LinkTest, SixteenProcessesAskingForTheSameLinkGetOneLink) {
  const ObjectCode a = Ltoir(kernels::kLtoSortUnit, "a.cu");
  const ObjectCode b = Ltoir(kernels::kLtoTransformUnit, "b.cu");
  std::ofstream(dir_.Sub("a.ltoir"), std::ios::binary) << a.bytes;
  std::ofstream(dir_.Sub("b.ltoir"), std::ios::binary) << b.bytes;
  const uint64_t builds_before = client_->Stats()->compiles;
  constexpr int kProcesses = 16;
  std::vector<testing::ProcessResult> results(kProcesses);
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      results[i] = testing::RunProcess(
          {testing::CliBinary(), "--socket", dir_.Sub("s.sock"), "link",
           dir_.Sub("a.ltoir"), dir_.Sub("b.ltoir"), "--arch", "sm_90", "-o",
           dir_.Sub("out" + std::to_string(i) + ".cubin")});
    });
  }
  for (auto& t : threads) t.join();
  int misses = 0;
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << r.output;
    misses += r.output.rfind("MISS ", 0) == 0;
  }
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->compiles - builds_before, 1u) << "more than one link ran";
  EXPECT_EQ(misses, 1);
  EXPECT_EQ(stats->link_requests, static_cast<uint64_t>(kProcesses));
}

}  // namespace
}  // namespace jitcache
