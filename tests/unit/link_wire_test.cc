// libnvJitLink.so.13's hand-written wire format against protobuf's, both
// ways, and its SHA-256 against OpenSSL's.
#include "client/wire/link_wire.h"

#include <openssl/evp.h>

#include <random>

#include "common/digest.h"
#include "common/sha256.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {
namespace {

std::vector<link_wire::Input> TwoInputs() {
  return {{3,
           "caller.ltoir",
           std::string(64, 'a'),
           std::string("\x7f\0EL", 4),
           false,
           {}},
          // Unnamed: proto3 leaves the empty name out, and so must we. PTX
          // naming two sources, one there and one not.
          {2,
           "",
           std::string(64, 'b'),
           std::string(70000, '\x01'),
           false,
           {{"/home/ada/k.py", true, 120, 1'700'000'000'123'456'789},
            {"/gone.py", false, 0, 0}}}};
}

TEST(LinkWire, RequestParsesAsAnAsCalledLinkRequest) {
  const std::vector<std::string> options = {"-arch=sm_90", "-lto",
                                            std::string("-O3\xff", 4)};
  const std::vector<link_wire::Input> inputs = TwoInputs();
  for (const bool steps_only : {false, true}) {
    for (const bool send_bytes : {false, true}) {
      const std::string bytes =
          link_wire::Encode(options, inputs, steps_only, send_bytes);
      v1::LinkRequest parsed;
      ASSERT_TRUE(parsed.ParseFromString(bytes));
      EXPECT_TRUE(parsed.as_called());
      EXPECT_EQ(parsed.steps_only(), steps_only);
      ASSERT_EQ(parsed.options_size(), 3);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(parsed.options(i), options[i]);
      ASSERT_EQ(parsed.inputs_size(), 2);
      for (int i = 0; i < 2; ++i) {
        const link_wire::Input& in = inputs[i];
        EXPECT_EQ(static_cast<int>(parsed.inputs(i).kind()), in.kind);
        EXPECT_EQ(parsed.inputs(i).name(), in.name);
        ASSERT_EQ(parsed.inputs(i).sources_size(),
                  static_cast<int>(in.sources.size()));
        for (size_t k = 0; k < in.sources.size(); ++k) {
          const v1::PtxasSource& s = parsed.inputs(i).sources(k);
          EXPECT_EQ(s.path(), in.sources[k].path);
          EXPECT_EQ(s.exists(), in.sources[k].exists);
          EXPECT_EQ(s.size(), in.sources[k].size);
          EXPECT_EQ(s.mtime_ns(), in.sources[k].mtime_ns);
        }
        // Bytes go only with a whole link that asks to send them.
        if (send_bytes && !steps_only) {
          EXPECT_EQ(parsed.inputs(i).data(), in.bytes);
        } else {
          EXPECT_EQ(parsed.inputs(i).digest(), in.digest);
        }
      }
      EXPECT_EQ(parsed.SerializeAsString(), bytes);
    }
  }
}

TEST(LinkWire, DecodesATraceAndSkipsOtherFields) {
  v1::CompileResponse response;
  response.set_outcome(v1::OUTCOME_LINK_ERROR);
  response.set_object(std::string(200000, '\x7f'));
  response.set_log("error log");
  response.set_served(v1::SERVED_HIT);
  response.set_cache_key(std::string(64, 'c'));
  response.add_lowered_names()->set_lowered_name("_Z1kv");
  v1::NvJitLinkTrace* t = response.mutable_link_trace();
  t->set_handle_created(true);
  for (int i = 0; i < 3; ++i) {
    v1::NvJitLinkStep* step = t->add_steps();
    step->set_result(i == 2 ? 4 : 0);
    step->mutable_logs()->set_error_size_result(i);
    step->mutable_logs()->set_error_log(std::string(i, 'e') + '\0');
    step->mutable_logs()->set_info_size_result(-1 - i);
    step->mutable_logs()->set_info_log(i == 1 ? "" : "info\n");
  }
  t->set_complete(true);
  t->set_cubin_size_result(0);
  t->set_cubin_result(7);
  t->set_ptx_size_result(-2);
  t->set_ptx_result(3);
  t->set_ptx(std::string(".version 9.0\0", 13));
  std::optional<link_wire::Trace> got =
      link_wire::Decode(response.SerializeAsString());
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->handle_created);
  ASSERT_EQ(got->steps.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const link_wire::Step& step = got->steps[i];
    EXPECT_EQ(step.result, i == 2 ? 4 : 0);
    EXPECT_EQ(step.error_size_result, i);
    EXPECT_EQ(step.error_log, std::string(i, 'e') + '\0');
    EXPECT_EQ(step.info_size_result, -1 - i);  // sign-extended
    EXPECT_EQ(step.info_log, i == 1 ? "" : "info\n");
  }
  EXPECT_TRUE(got->complete);
  EXPECT_EQ(got->cubin_size_result, 0);
  EXPECT_EQ(got->cubin_result, 7);
  EXPECT_EQ(got->ptx_size_result, -2);
  EXPECT_EQ(got->ptx_result, 3);
  EXPECT_EQ(got->ptx, std::string(".version 9.0\0", 13));
  EXPECT_EQ(got->cubin, response.object());
}

TEST(LinkWire, RefusesWhatIsNoTrace) {
  v1::CompileResponse no_trace;
  no_trace.set_object("cubin");
  EXPECT_FALSE(link_wire::Decode(no_trace.SerializeAsString()).has_value());
  v1::CompileResponse response;
  response.mutable_link_trace()->add_steps()->set_result(1);
  const std::string whole = response.SerializeAsString();
  ASSERT_TRUE(link_wire::Decode(whole).has_value());
  for (size_t cut = 1; cut < whole.size(); ++cut) {
    EXPECT_FALSE(link_wire::Decode(whole.substr(0, cut)).has_value()) << cut;
  }
  EXPECT_FALSE(link_wire::Decode("\x5a\xff\xff\xff\xff\x0f").has_value());
}

TEST(LinkWire, DecodesAPingsLibraries) {
  v1::PingResponse ping;
  ping.set_daemon_version("0.1.0");
  ping.add_include_dirs("/usr/local/cuda/include");
  v1::ToolkitLibrary* nvrtc = ping.add_libraries();
  nvrtc->set_name("libnvrtc.so.13");
  v1::ToolkitLibrary* lib = ping.add_libraries();
  lib->set_name("libnvJitLink.so.13");
  lib->set_path("/usr/local/cuda-13.0/lib64/libnvJitLink.so.13.0.48");
  lib->set_device(66306);
  lib->set_inode(987654321);
  lib->set_size(80'000'000);
  lib->set_mtime_ns(1'700'000'000'123'456'789);
  lib->set_ctime_ns(-5);
  lib->set_major(13);
  lib->set_minor(0);
  lib->set_sha256(std::string(32, '\x11'));
  ping.add_ptxas()->set_name("ptxas");
  std::optional<std::vector<link_wire::Library>> got =
      link_wire::DecodeLibraries(ping.SerializeAsString());
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].name, "libnvrtc.so.13");
  const link_wire::Library& l = (*got)[1];
  EXPECT_EQ(l.name, "libnvJitLink.so.13");
  EXPECT_EQ(l.path, lib->path());
  EXPECT_EQ(l.stamp, (FileStamp{66306, 987654321, 80'000'000,
                                1'700'000'000'123'456'789, -5}));
  EXPECT_EQ(l.major, 13u);
  EXPECT_EQ(l.minor, 0u);
  EXPECT_FALSE(link_wire::DecodeLibraries("\x42\x05"
                                          "ab")
                   .has_value());
}

// libcrypto's SHA-256 of `data`, in hex: the oracle.
std::string OpenSslHex(std::string_view data) {
  unsigned char out[32];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : out) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

// Every length around the padding's edges and the block size, and a large
// input, against OpenSSL's one-call (EVP) digest.
TEST(InputDigest, IsTheSha256OpenSslComputes) {
  std::mt19937 random(42);
  std::string bytes(3 << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  std::vector<size_t> sizes = {bytes.size()};
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {1000u, 4095u, 4096u, 65537u}) sizes.push_back(n);
  for (size_t n : sizes) {
    const std::string_view in(bytes.data(), n);
    const std::string want = OpenSslHex(in);
    EXPECT_EQ(Digest::Of(in).Hex(), want) << n;
    EXPECT_EQ(Digest{Sha256::Hash(in)}.Hex(), want) << n;
  }
  EXPECT_EQ(Digest::Of("").Hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace jitcache
