#include "client/api/mapped_hit.h"

#include <atomic>
#include <memory>
#include <string_view>
#include <utility>

#include "client/rpc/messages.h"
#include "client/wire/compile_wire.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache::internal {
namespace {

// The bytes of hits this process keeps mapped, and the most it may: the
// daemon's memory holds them for as long as the process does.
std::atomic<uint64_t> live_mapped_bytes{0};
constexpr uint64_t kMostMappedBytes = uint64_t{256} << 20;

// The object's bytes: shared with the mapping when it is binary and the
// process's budget allows, else copied (and the mapping let go).
ObjectBytes BytesOf(std::shared_ptr<const MappedAnswer> mapped,
                    std::string_view object, CodeType target) {
  const uint64_t size = mapped->bytes().size();
  if (target == CodeType::kPtx ||
      live_mapped_bytes.fetch_add(size) + size > kMostMappedBytes) {
    if (target != CodeType::kPtx) live_mapped_bytes.fetch_sub(size);
    return ObjectBytes(std::string(object));
  }
  // Counted until the last copy of the ObjectCode lets the mapping go.
  std::shared_ptr<const void> owner(mapped.get(),
                                    [mapped, size](const void*) mutable {
                                      mapped.reset();
                                      live_mapped_bytes.fetch_sub(size);
                                    });
  return ObjectBytes(std::move(owner), object);
}

}  // namespace

std::optional<ObjectCode> ObjectCodeFromMapped(MappedAnswer answer,
                                               CodeType target,
                                               const std::string& name) {
  auto mapped = std::make_shared<const MappedAnswer>(std::move(answer));
  std::optional<compile_wire::ResponseView> view =
      compile_wire::DecodeView(mapped->bytes());
  if (!view.has_value()) return std::nullopt;
  ObjectCode code;
  code.compiled = view->outcome == v1::OUTCOME_OK;
  code.bytes = BytesOf(mapped, view->object, target);
  code.code_type = target;
  code.name = name;
  code.log = view->log;
  for (const auto& [expr, lowered] : view->lowered_names) {
    code.symbol_mapping[std::string(expr)] = lowered;
  }
  code.served = FromWire(static_cast<v1::Served>(view->served));
  code.cache_key = view->cache_key;
  code.object_digest = view->object_digest;
  code.compile_time_us = view->compile_time_us;
  code.served_remotely = view->served_remotely;
  code.proof_pending = view->proof_pending;
  return code;
}

}  // namespace jitcache::internal
