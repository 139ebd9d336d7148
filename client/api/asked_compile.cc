#include "client/api/asked_compile.h"

namespace jitcache::internal {
namespace {
thread_local AskedCompile* recording = nullptr;
}  // namespace

RecordAskedCompile::RecordAskedCompile(AskedCompile* into)
    : previous_(recording) {
  recording = into;
}

RecordAskedCompile::~RecordAskedCompile() { recording = previous_; }

AskedCompile* RecordAskedCompile::Current() { return recording; }

}  // namespace jitcache::internal
