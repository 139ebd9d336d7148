// Without a CUDA driver, loading is a clear error, not a loader failure:
// the client opens libcuda at run time. (Its own binary: the driver is
// loaded once per process.)
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/library.h"

namespace jitcache {
namespace {

TEST(DriverMissing, LoadingSaysTheDriverIsMissing) {
  setenv("JITCACHE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  ObjectCode cubin;
  cubin.compiled = true;
  cubin.code_type = CodeType::kCubin;
  cubin.bytes =
      "\x7f"
      "ELF";
  auto library = cubin.Load();
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(library.status().message()),
              ::testing::HasSubstr("cannot load the CUDA driver"));
  auto stream = Stream::Create();
  EXPECT_EQ(stream.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace jitcache
