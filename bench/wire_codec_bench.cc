// The gRPC-free wire's cost: the hand-written codecs of client/wire/ next to
// protobuf's generated code for the same messages, on the framed socket's
// two hot messages (a compile request out, a hit's answer in) and a link
// answer. Prints one JSON object: ns per encode or decode, each the median
// of 7 timed batches.
//
//   jitcache_wire_codec_bench [OBJECT_BYTES]   (default 157696, a CUB cubin)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "client/wire/compile_wire.h"
#include "client/wire/link_wire.h"
#include "jitcache/v1/jitcache.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

// The median over 7 batches of `iters` calls, in ns per call.
double NsPerCall(int iters, const std::function<void()>& call) {
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < iters; ++i) call();
    batches.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
        iters);
  }
  std::sort(batches.begin(), batches.end());
  return batches[3];
}

jitcache::v1::CompileRequest Request() {
  jitcache::v1::CompileRequest r;
  r.set_source(std::string(4096, 'x'));
  r.set_program_name("kernel.cu");
  for (const char* o : {"-arch=sm_90", "-std=c++17", "-DN=128", "-lineinfo"}) {
    r.add_options(o);
  }
  r.add_name_expressions("sort<128, 4>");
  r.set_target(jitcache::v1::TARGET_CUBIN);
  return r;
}

jitcache::compile_wire::Request WireRequest(
    const jitcache::v1::CompileRequest& r) {
  jitcache::compile_wire::Request w;
  w.source = r.source();
  w.program_name = r.program_name();
  w.options.assign(r.options().begin(), r.options().end());
  w.name_expressions.assign(r.name_expressions().begin(),
                            r.name_expressions().end());
  w.target = r.target();
  return w;
}

std::string HitAnswer(size_t object_bytes) {
  jitcache::v1::CompileResponse r;
  r.set_outcome(jitcache::v1::OUTCOME_OK);
  r.set_object(std::string(object_bytes, 'c'));
  r.set_log("");
  auto* lowered = r.add_lowered_names();
  lowered->set_name_expression("sort<128, 4>");
  lowered->set_lowered_name("_Z4sortILi128ELi4EEvv");
  r.set_cache_key(std::string(64, 'a'));
  r.set_served(jitcache::v1::SERVED_HIT);
  r.set_compile_time_us(812345);
  return r.SerializeAsString();
}

std::string LinkAnswer(size_t object_bytes) {
  jitcache::v1::CompileResponse r;
  r.set_object(std::string(object_bytes, 'c'));
  jitcache::v1::NvJitLinkTrace* trace = r.mutable_link_trace();
  trace->set_handle_created(true);
  for (int i = 0; i < 4; ++i) {
    jitcache::v1::NvJitLinkStep* step = trace->add_steps();
    step->set_result(0);
    step->mutable_logs()->set_info_log(std::string(200, 'i'));
  }
  trace->set_complete(true);
  return r.SerializeAsString();
}

}  // namespace

int main(int argc, char** argv) {
  const size_t object_bytes =
      argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 157696;
  const jitcache::v1::CompileRequest request = Request();
  const jitcache::compile_wire::Request wire_request = WireRequest(request);
  const std::string hit = HitAnswer(object_bytes);
  const std::string link = LinkAnswer(object_bytes);
  size_t sink = 0;

  const double encode_hand = NsPerCall(20000, [&] {
    sink += jitcache::compile_wire::Encode(wire_request).size();
  });
  std::string out;
  const double encode_protobuf = NsPerCall(20000, [&] {
    request.SerializeToString(&out);
    sink += out.size();
  });
  const double decode_hand = NsPerCall(2000, [&] {
    sink += jitcache::compile_wire::Decode(hit)->object.size();
  });
  jitcache::v1::CompileResponse parsed;
  const double decode_protobuf = NsPerCall(2000, [&] {
    parsed.ParseFromString(hit);
    sink += parsed.object().size();
  });
  const double link_hand = NsPerCall(
      2000, [&] { sink += jitcache::link_wire::Decode(link)->cubin.size(); });
  const double link_protobuf = NsPerCall(2000, [&] {
    parsed.ParseFromString(link);
    sink += parsed.object().size();
  });
  std::printf(
      "{\"object_bytes\": %zu, \"compile_request_encode_ns\": {\"hand\": %.0f, "
      "\"protobuf\": %.0f}, \"hit_answer_decode_ns\": {\"hand\": %.0f, "
      "\"protobuf\": %.0f}, \"link_answer_decode_ns\": {\"hand\": %.0f, "
      "\"protobuf\": %.0f}, \"sink\": %zu}\n",
      object_bytes, encode_hand, encode_protobuf, decode_hand, decode_protobuf,
      link_hand, link_protobuf, sink % 10);
  return 0;
}
