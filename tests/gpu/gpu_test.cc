// Loading and launching through the driver. Each test skips, saying why,
// where there is no usable driver or GPU; on a GPU machine they must pass.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/library.h"
#include "jitcache/linker.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

constexpr char kSpin[] = R"(
extern "C" __global__ void spin(long long cycles, int* done) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  *done = 1;
}
)";

// The helper's build path, unless the environment says where it was copied.
std::string SortCheckBinary() {
  const char* path = std::getenv("JITCACHE_GPU_SORT_CHECK");
  return path != nullptr ? path : JITCACHE_GPU_SORT_CHECK;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> arch = CurrentDeviceArch();
    if (!arch.ok())
      GTEST_SKIP() << "no usable CUDA driver/GPU: " << arch.status();
    arch_ = *arch;
    daemon_ = std::make_unique<testing::DaemonProcess>(dir_.Sub("s.sock"),
                                                       dir_.Sub("store"));
    ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
    client_ = std::make_unique<Client>(*Client::Connect(
        {.socket_path = dir_.Sub("s.sock"), .local_fallback = false}));
  }

  ObjectCode MustCompile(const char* source, CodeType target,
                         ProgramOptions options = {}) {
    options.arch = arch_;
    auto code = client_->Compile(Program(source, "k.cu"), options, target);
    EXPECT_TRUE(code.ok()) << code.status();
    EXPECT_TRUE(code->compiled) << code->log;
    return *code;
  }

  // Runs saxpy from `code` on random data and checks every element.
  void CheckSaxpy(const ObjectCode& code) {
    auto library = code.Load();
    ASSERT_TRUE(library.ok()) << library.status();
    auto kernel = library->GetKernel("saxpy");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_GT(*kernel->Registers(), 0);
    EXPECT_GE(*kernel->MaxThreadsPerBlock(), 256);
    constexpr int kN = 1 << 20;
    std::mt19937 random(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> x(kN), y(kN), out(kN, NAN);
    for (int i = 0; i < kN; ++i) {
      x[i] = dist(random);
      y[i] = dist(random);
    }
    auto dx = DeviceBuffer::Allocate(kN * sizeof(float));
    auto dy = DeviceBuffer::Allocate(kN * sizeof(float));
    ASSERT_TRUE(dx.ok() && dy.ok());
    ASSERT_TRUE(dx->CopyFromHost(x.data(), kN * sizeof(float)).ok());
    ASSERT_TRUE(dy->CopyFromHost(y.data(), kN * sizeof(float)).ok());
    auto stream = Stream::Create();
    ASSERT_TRUE(stream.ok());
    const float a = 1.5f;
    ASSERT_TRUE(
        kernel
            ->Launch({kN / 256}, {256}, 0, *stream, a, dx->ptr(), dy->ptr(), kN)
            .ok());
    ASSERT_TRUE(stream->Synchronize().ok());
    ASSERT_TRUE(dy->CopyToHost(out.data(), kN * sizeof(float)).ok());
    int wrong = 0;
    // The GPU fuses the multiply-add (NVRTC's default -fmad=true): compare
    // with one rounding, exactly.
    for (int i = 0; i < kN; ++i) wrong += out[i] != std::fma(a, x[i], y[i]);
    EXPECT_EQ(wrong, 0);
  }

  std::string arch_;
  testing::TempDir dir_;
  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

TEST_F(GpuTest, SaxpyFromCubin) {
  ASSERT_NO_FATAL_FAILURE(
      CheckSaxpy(MustCompile(kernels::kSaxpy, CodeType::kCubin)));
}

TEST_F(GpuTest, SaxpyFromPtx) {
  ASSERT_NO_FATAL_FAILURE(
      CheckSaxpy(MustCompile(kernels::kSaxpy, CodeType::kPtx)));
}

// A hit handed over as the daemon's sealed answer file is loaded where it
// is mapped (cubin), or from a terminated copy (PTX), and runs.
TEST_F(GpuTest, HitsMappedFromTheDaemonsSealedFileLoadAndRun) {
  testing::DaemonProcess sharing(dir_.Sub("shared.sock"),
                                 ":memory:", {"--shared_answer_size=1"});
  ASSERT_TRUE(sharing.Start().ok()) << sharing.Log();
  auto client = Client::Connect(
      {.socket_path = sharing.socket(), .local_fallback = false});
  ASSERT_TRUE(client.ok());
  ProgramOptions options;
  options.arch = arch_;
  for (CodeType target : {CodeType::kCubin, CodeType::kPtx}) {
    const Program saxpy(kernels::kSaxpy, "k.cu");
    ASSERT_TRUE(client->Compile(saxpy, options, target).ok());
    absl::StatusOr<DaemonStats> before = client->Stats();
    ASSERT_TRUE(before.ok()) << before.status();
    auto hit = client->Compile(saxpy, options, target);
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(hit->served, Served::kHit);
    // The hit came as the sealed file, whatever libjitcache made of it.
    absl::StatusOr<DaemonStats> after = client->Stats();
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(after->shared_answers, before->shared_answers + 1)
        << CodeTypeName(target);
    // PTX is handed on as a C string: a terminated copy, never the mapping.
    EXPECT_EQ(hit->bytes.shared(), target != CodeType::kPtx)
        << CodeTypeName(target);
    ASSERT_NO_FATAL_FAILURE(CheckSaxpy(*hit));
  }
}

TEST_F(GpuTest, CubRadixSortByNameExpressionMissThenHitInANewProcess) {
  std::vector<std::string> served;
  for (int run = 0; run < 2; ++run) {
    const absl::Time spawned = absl::Now();
    auto result = testing::RunProcess({SortCheckBinary(), dir_.Sub("s.sock")});
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_THAT(result.output, HasSubstr(" ok"));
    served.push_back(result.output.substr(7, result.output.find(' ') - 7));
    const size_t at = result.output.find("first_launch_unix_us=");
    int64_t launched_us = 0;
    ASSERT_TRUE(absl::SimpleAtoi(
        result.output.substr(at + 21, result.output.find(' ', at) - at - 21),
        &launched_us));
    std::cout << "process start to first launched kernel (" << served.back()
              << "): " << absl::FromUnixMicros(launched_us) - spawned << "\n";
  }
  EXPECT_EQ(served[0], "MISS");
  EXPECT_EQ(served[1], "HIT");
}

TEST_F(GpuTest, LtoLinkedCubinRuns) {
  ProgramOptions rdc;
  rdc.relocatable_device_code = true;
  Linker linker(*client_);
  linker.Add(MustCompile(kernels::kLtoSortUnit, CodeType::kLtoir, rdc))
      .Add(MustCompile(kernels::kLtoTransformUnit, CodeType::kLtoir, rdc));
  LinkerOptions options;
  options.arch = arch_;
  auto linked = linker.Link(options);
  ASSERT_TRUE(linked.ok()) << linked.status();
  ASSERT_TRUE(linked->compiled) << linked->log;
  auto library = linked->Load();
  ASSERT_TRUE(library.ok()) << library.status();
  auto kernel = library->GetKernel("sort_transformed");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<int> data(512);
  std::mt19937 random(3);
  for (int& v : data) v = static_cast<int>(random() % 1000);
  auto buffer = DeviceBuffer::Allocate(data.size() * sizeof(int));
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(
      buffer->CopyFromHost(data.data(), data.size() * sizeof(int)).ok());
  auto stream = Stream::Create();
  ASSERT_TRUE(kernel->Launch({1}, {128}, 0, *stream, buffer->ptr()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  std::vector<int> out(data.size());
  ASSERT_TRUE(buffer->CopyToHost(out.data(), out.size() * sizeof(int)).ok());
  for (int& v : data) v = 3 * v + 1;
  std::sort(data.begin(), data.end());
  EXPECT_EQ(out, data);
}

TEST_F(GpuTest, EventAndStreamCompleteOnlyAfterTheWork) {
  auto code = MustCompile(kSpin, CodeType::kCubin);
  auto library = code.Load();
  ASSERT_TRUE(library.ok()) << library.status();
  auto kernel = library->GetKernel("spin");
  ASSERT_TRUE(kernel.ok());
  auto flag = DeviceBuffer::Allocate(sizeof(int));
  const int zero = 0;
  ASSERT_TRUE(flag->CopyFromHost(&zero, sizeof(int)).ok());
  auto stream = Stream::Create();
  auto event = Event::Create();
  ASSERT_TRUE(stream.ok() && event.ok());
  const long long cycles = 1'000'000'000;  // about half a second
  ASSERT_TRUE(kernel->Launch({1}, {1}, 0, *stream, cycles, flag->ptr()).ok());
  ASSERT_TRUE(event->Record(*stream).ok());
  EXPECT_FALSE(*event->is_complete());
  EXPECT_FALSE(*stream->is_complete());
  ASSERT_TRUE(event->Synchronize().ok());
  EXPECT_TRUE(*event->is_complete());
  EXPECT_TRUE(*stream->is_complete());
  int done = 0;
  ASSERT_TRUE(flag->CopyToHost(&done, sizeof(int)).ok());
  EXPECT_EQ(done, 1);
}

TEST_F(GpuTest, LoadingLtoIrDirectlyIsAClearError) {
  ProgramOptions rdc;
  rdc.relocatable_device_code = true;
  auto library =
      MustCompile(kernels::kLtoTransformUnit, CodeType::kLtoir, rdc).Load();
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("link it first"));
}

TEST_F(GpuTest, UnknownKernelNameCarriesTheDriverError) {
  auto library = MustCompile(kernels::kSaxpy, CodeType::kCubin).Load();
  ASSERT_TRUE(library.ok());
  auto kernel = library->GetKernel("no_such_kernel");
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(std::string(kernel.status().message()),
              HasSubstr("CUDA_ERROR_NOT_FOUND"));
}

}  // namespace
}  // namespace jitcache
