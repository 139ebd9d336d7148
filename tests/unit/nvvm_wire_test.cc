// libnvvm.so.4's hand-written wire format against protobuf's, both ways.
#include "client/wire/nvvm_wire.h"

#include <deque>

#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {
namespace {

std::deque<nvvm_wire::Call> Calls() {
  std::deque<nvvm_wire::Call> calls(4);
  calls[0].kind = nvvm_wire::kAddModule;
  calls[0].name = "kernel";
  calls[0].module = std::string("; ModuleID\0\xff", 12);
  calls[0].digest = std::string(64, 'a');
  calls[1].kind = nvvm_wire::kVerify;
  calls[1].options = {"-opt=3", "-arch=compute_90a"};
  // Unnamed (NULL): proto3 leaves the empty name out, and so must we.
  calls[2].kind = nvvm_wire::kLazyAddModule;
  calls[2].unnamed = true;
  calls[2].module = std::string(70000, '\x42');
  calls[2].digest = std::string(64, 'b');
  calls[3].kind = nvvm_wire::kCompile;
  calls[3].options = {"-opt=3", "-arch=compute_90a", "-gen-lto"};
  return calls;
}

TEST(NvvmWire, RequestParsesAsAnNvvmRequest) {
  link_wire::Library lib;
  lib.name = "libnvvm.so.4";
  lib.path = "/opt/cuda/nvvm/lib64/libnvvm.so.4";
  lib.stamp = {7, 1234567, 63019680, 1700000000123456789, 1700000000987654321};
  const std::deque<nvvm_wire::Call> calls = Calls();
  for (const bool with_modules : {false, true}) {
    const std::string bytes = nvvm_wire::Encode(lib, calls, with_modules);
    v1::NvvmRequest parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    EXPECT_EQ(parsed.with_modules(), with_modules);
    EXPECT_EQ(parsed.libnvvm().name(), lib.name);
    EXPECT_EQ(parsed.libnvvm().path(), lib.path);
    EXPECT_EQ(parsed.libnvvm().device(), lib.stamp.dev);
    EXPECT_EQ(parsed.libnvvm().inode(), lib.stamp.ino);
    EXPECT_EQ(parsed.libnvvm().size(), lib.stamp.size);
    EXPECT_EQ(parsed.libnvvm().mtime_ns(), lib.stamp.mtime_ns);
    EXPECT_EQ(parsed.libnvvm().ctime_ns(), lib.stamp.ctime_ns);
    ASSERT_EQ(parsed.calls_size(), 4);
    for (int i = 0; i < 4; ++i) {
      const nvvm_wire::Call& call = calls[i];
      const v1::NvvmCall& got = parsed.calls(i);
      EXPECT_EQ(static_cast<int>(got.kind()), static_cast<int>(call.kind));
      EXPECT_EQ(got.name(), call.name);
      EXPECT_EQ(got.unnamed(), call.unnamed);
      EXPECT_EQ(got.digest(), call.digest);
      EXPECT_EQ(got.module(), with_modules ? call.module : "");
      ASSERT_EQ(static_cast<size_t>(got.options_size()), call.options.size());
      for (size_t k = 0; k < call.options.size(); ++k) {
        EXPECT_EQ(got.options(static_cast<int>(k)), call.options[k]);
      }
    }
    // Byte for byte what protobuf writes.
    EXPECT_EQ(parsed.SerializeAsString(), bytes);
  }
}

TEST(NvvmWire, DecodesARunAndSkipsOtherFields) {
  v1::CompileResponse response;
  response.set_outcome(v1::OUTCOME_OK);
  response.set_object(std::string(300000, '\x7f'));
  response.set_log("log text");
  response.set_served(v1::SERVED_HIT);
  response.set_cache_key(std::string(64, 'c'));
  response.mutable_link_trace()->set_handle_created(true);
  v1::NvvmRun* run = response.mutable_nvvm_run();
  run->set_result(9);
  run->set_log_size_result(0);
  run->set_log(std::string("m (1, 0): parse error\0", 22));
  run->set_log_result(0);
  run->set_output_size_result(-3);
  run->set_output_result(5);
  std::optional<nvvm_wire::Answer> a =
      nvvm_wire::Decode(response.SerializeAsString());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->result, 9);
  EXPECT_EQ(a->log, run->log());
  EXPECT_EQ(a->log_size_result, 0);
  EXPECT_EQ(a->output_size_result, -3);
  EXPECT_EQ(a->output_result, 5);
  EXPECT_EQ(a->output, response.object());

  // A failed call's buffer comes in the run.
  response.clear_object();
  run->set_failed_output(std::string("\0", 1));
  a = nvvm_wire::Decode(response.SerializeAsString());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->output, std::string("\0", 1));
}

TEST(NvvmWire, ARunlessOrBrokenResponseIsNoAnswer) {
  v1::CompileResponse response;
  response.set_object("ptx");
  EXPECT_FALSE(nvvm_wire::Decode(response.SerializeAsString()).has_value());
  response.mutable_nvvm_run()->set_result(0);
  std::string bytes = response.SerializeAsString();
  EXPECT_TRUE(nvvm_wire::Decode(bytes).has_value());
  bytes.pop_back();
  EXPECT_FALSE(nvvm_wire::Decode(bytes).has_value());
}

TEST(NvvmWire, ThePingNamesLibNvvmWithItsIrVersions) {
  v1::PingResponse ping;
  v1::ToolkitLibrary* lib = ping.add_libraries();
  lib->set_name("libnvvm.so.4");
  lib->set_path("/w/libnvvm.so.4");
  lib->set_major(2);
  lib->set_minor(0);
  lib->set_ir_major(2);
  lib->set_ir_minor(0);
  lib->set_debug_major(3);
  lib->set_debug_minor(2);
  lib->set_sha256(std::string(32, '\x01'));
  std::optional<std::vector<link_wire::Library>> libraries =
      link_wire::DecodeLibraries(ping.SerializeAsString());
  ASSERT_TRUE(libraries.has_value());
  ASSERT_EQ(libraries->size(), 1u);
  const link_wire::Library& got = (*libraries)[0];
  EXPECT_EQ(got.name, "libnvvm.so.4");
  EXPECT_EQ(got.major, 2u);
  EXPECT_EQ(got.ir_major, 2u);
  EXPECT_EQ(got.ir_minor, 0u);
  EXPECT_EQ(got.debug_major, 3u);
  EXPECT_EQ(got.debug_minor, 2u);
}

}  // namespace
}  // namespace jitcache
