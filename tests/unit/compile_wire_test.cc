// The hand-written wire format of the `jitcache` front end against protobuf.
#include "client/wire/compile_wire.h"

#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {
namespace {

TEST(HitWire, RequestParsesAsACompileRequest) {
  compile_wire::Request r;
  r.source = std::string("__global__ void k() {}\0tail", 27);
  r.program_name = "k.cu";
  r.headers = {{"a.h", "#define A 1"}, {"b.h", ""}};
  r.options = {"-arch=sm_90", "-DX=1"};
  r.name_expressions = {"k<int>", "k<float>"};
  r.target = 2;
  v1::CompileRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(compile_wire::Encode(r)));
  EXPECT_EQ(parsed.source(), r.source);
  EXPECT_EQ(parsed.program_name(), "k.cu");
  ASSERT_EQ(parsed.headers_size(), 2);
  EXPECT_EQ(parsed.headers(0).name(), "a.h");
  EXPECT_EQ(parsed.headers(0).contents(), "#define A 1");
  EXPECT_EQ(parsed.headers(1).contents(), "");
  ASSERT_EQ(parsed.options_size(), 2);
  EXPECT_EQ(parsed.options(1), "-DX=1");
  ASSERT_EQ(parsed.name_expressions_size(), 2);
  EXPECT_EQ(parsed.name_expressions(1), "k<float>");
  EXPECT_EQ(parsed.target(), v1::TARGET_CUBIN);
}

TEST(HitWire, DecodesACompileResponseAndSkipsOtherFields) {
  v1::CompileResponse response;
  response.set_outcome(v1::OUTCOME_OK);
  response.set_object(std::string(200000, '\x7f'));
  response.set_log("warning: x");
  auto* name = response.add_lowered_names();
  name->set_name_expression("k<int>");
  name->set_lowered_name("_Z1kIiEvv");
  response.set_cache_key(std::string(64, 'a'));
  response.set_served(v1::SERVED_HIT);
  response.set_compile_time_us(int64_t{1} << 40);
  response.set_target(v1::TARGET_CUBIN);
  response.set_object_digest(std::string(64, 'b'));
  auto decoded = compile_wire::Decode(response.SerializeAsString());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->outcome, 1);
  EXPECT_EQ(decoded->object, response.object());
  EXPECT_EQ(decoded->log, "warning: x");
  ASSERT_EQ(decoded->lowered_names.size(), 1u);
  EXPECT_EQ(decoded->lowered_names[0].first, "k<int>");
  EXPECT_EQ(decoded->lowered_names[0].second, "_Z1kIiEvv");
  EXPECT_EQ(decoded->cache_key, std::string(64, 'a'));
  EXPECT_EQ(decoded->served, 1);
  EXPECT_EQ(decoded->compile_time_us, int64_t{1} << 40);
}

TEST(HitWire, MalformedBytesAreRejectedNotTrusted) {
  v1::CompileResponse response;
  response.set_object("payload");
  const std::string good = response.SerializeAsString();
  for (size_t cut = 1; cut < good.size(); ++cut) {
    EXPECT_FALSE(compile_wire::Decode(good.substr(0, cut)).has_value()) << cut;
  }
  EXPECT_FALSE(
      compile_wire::Decode(std::string("\x12\xff\xff\xff\xff\x0f", 6)));
  EXPECT_FALSE(compile_wire::Decode(std::string(11, '\xff')).has_value());
}

}  // namespace
}  // namespace jitcache
