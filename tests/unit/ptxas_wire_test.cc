// jitcache-ptxas's hand-written wire format against protobuf's, both ways.
#include "client/wire/ptxas_wire.h"

#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {
namespace {

TEST(PtxasWire, RequestParsesAsAPtxasRequest) {
  ptxas_wire::Request r;
  r.ptxas_path = "/opt/triton/bin/ptxas";
  r.ptxas_stamp = {66306, 1234567, 31'000'000, 1'700'000'000'123'456'789,
                   1'700'000'001'000'000'000};
  r.program = "/usr/lib/x86_64-linux-gnu/jitcache/ptxas";
  r.arguments = {"-lineinfo",  "-v", "--gpu-name=sm_90a",
                 "/tmp/k.ptx", "-o", "/tmp/k.ptx.o"};
  r.ptx = std::string(".version 8.7\n\0tail", 18);
  r.working_directory = "/home/u";
  r.with_names = true;
  r.sources = {{"/home/u/k.py", true, 4096, 1'700'000'002'000'000'000},
               {"gone.cu", false, 0, 0},
               // Before 1970: a negative time is sent as protobuf's int64.
               {"old.cu", true, 1, -5'000'000'000}};
  v1::PtxasRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(ptxas_wire::Encode(r)));
  EXPECT_EQ(parsed.ptxas().name(), "ptxas");
  EXPECT_EQ(parsed.ptxas().path(), r.ptxas_path);
  EXPECT_EQ(parsed.ptxas().device(), 66306u);
  EXPECT_EQ(parsed.ptxas().inode(), 1234567u);
  EXPECT_EQ(parsed.ptxas().size(), 31'000'000u);
  EXPECT_EQ(parsed.ptxas().mtime_ns(), 1'700'000'000'123'456'789);
  EXPECT_EQ(parsed.ptxas().ctime_ns(), 1'700'000'001'000'000'000);
  EXPECT_EQ(parsed.program(), r.program);
  ASSERT_EQ(parsed.arguments_size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(parsed.arguments(i), r.arguments[i]);
  EXPECT_EQ(parsed.ptx(), r.ptx);
  EXPECT_EQ(parsed.working_directory(), "/home/u");
  EXPECT_TRUE(parsed.with_names());
  ASSERT_EQ(parsed.sources_size(), 3);
  EXPECT_EQ(parsed.sources(0).path(), "/home/u/k.py");
  EXPECT_TRUE(parsed.sources(0).exists());
  EXPECT_EQ(parsed.sources(0).size(), 4096u);
  EXPECT_EQ(parsed.sources(0).mtime_ns(), 1'700'000'002'000'000'000);
  EXPECT_EQ(parsed.sources(1).path(), "gone.cu");
  EXPECT_FALSE(parsed.sources(1).exists());
  EXPECT_EQ(parsed.sources(2).mtime_ns(), -5'000'000'000);
  // As protobuf writes it: the same bytes.
  EXPECT_EQ(parsed.SerializeAsString(), ptxas_wire::Encode(r));
}

TEST(PtxasWire, DecodesARunsAnswerAndSkipsOtherFields) {
  v1::CompileResponse response;
  response.set_outcome(v1::OUTCOME_OK);
  response.set_object(std::string(300000, '\x7f'));
  response.set_log("ptxas info    : Used 10 registers\n");
  response.set_served(v1::SERVED_JOINED);
  response.set_cache_key(std::string(64, 'a'));
  response.set_compile_time_us(12345);
  response.set_object_digest(std::string(64, 'b'));
  v1::PtxasRun* run = response.mutable_ptxas_run();
  run->set_exit_status(255);
  run->set_stdout("out\n");
  run->set_output_written(true);
  std::optional<ptxas_wire::Answer> a =
      ptxas_wire::Decode(response.SerializeAsString());
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->exit_status, 255);
  EXPECT_EQ(a->stdout_bytes, "out\n");
  EXPECT_EQ(a->stderr_bytes, response.log());
  EXPECT_TRUE(a->output_written);
  EXPECT_EQ(a->output, response.object());
  EXPECT_FALSE(a->names_matter);
  EXPECT_EQ(a->served, v1::SERVED_JOINED);

  v1::CompileResponse names;
  names.set_served(v1::SERVED_HIT);
  names.mutable_ptxas_run()->set_names_matter(true);
  names.mutable_ptxas_run()->set_exit_status(-1);  // int32, sign-extended
  a = ptxas_wire::Decode(names.SerializeAsString());
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->names_matter);
  EXPECT_EQ(a->exit_status, -1);
  EXPECT_FALSE(a->output_written);
  EXPECT_EQ(a->served, v1::SERVED_HIT);
}

TEST(PtxasWire, AnythingButARunsAnswerIsNone) {
  // A compile's answer: no ptxas run in it.
  v1::CompileResponse compile;
  compile.set_outcome(v1::OUTCOME_OK);
  compile.set_object("cubin");
  EXPECT_FALSE(ptxas_wire::Decode(compile.SerializeAsString()).has_value());
  v1::CompileResponse run;
  run.mutable_ptxas_run()->set_stdout("x");
  run.set_object(std::string(1000, 'c'));
  const std::string bytes = run.SerializeAsString();
  ASSERT_TRUE(ptxas_wire::Decode(bytes).has_value());
  for (size_t cut : {size_t{1}, size_t{3}, bytes.size() - 1}) {
    EXPECT_FALSE(ptxas_wire::Decode(bytes.substr(0, cut)).has_value()) << cut;
  }
  EXPECT_FALSE(ptxas_wire::Decode("\xff\xff\xff").has_value());
}

}  // namespace
}  // namespace jitcache
