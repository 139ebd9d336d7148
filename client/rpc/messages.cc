#include "client/rpc/messages.h"

#include <map>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "client/rpc/code_types.h"
#include "common/compile_options.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {

namespace internal {

std::vector<std::string> NvrtcOptionsFor(const ProgramOptions& options,
                                         CodeType target) {
  std::vector<std::string> out = options.AsNvrtcOptions();
  if (target == CodeType::kLtoir && options.dlto_for_ltoir &&
      !AsksForLtoIr(out)) {
    out.push_back("-dlto");
  }
  // NVRTC makes OptiX IR only when asked to, and then nothing else.
  if (target == CodeType::kOptixIr && !AsksForOptixIr(out)) {
    out.push_back("-optix-ir");
  }
  return out;
}

}  // namespace internal

Served FromWire(v1::Served served) {
  switch (served) {
    case v1::SERVED_HIT:
      return Served::kHit;
    case v1::SERVED_JOINED:
      return Served::kJoined;
    case v1::SERVED_LOCAL:
      return Served::kLocal;
    default:
      return Served::kMiss;
  }
}

v1::CompileRequest CompileRequestFor(const Program& program,
                                     const ProgramOptions& options,
                                     CodeType target) {
  v1::CompileRequest request;
  request.set_source(program.source());
  request.set_program_name(program.name());
  for (const auto& [name, contents] : program.headers()) {
    v1::Header* header = request.add_headers();
    header->set_name(name);
    header->set_contents(contents);
  }
  for (std::string& option : internal::NvrtcOptionsFor(options, target)) {
    request.add_options(std::move(option));
  }
  for (const std::string& expr : options.name_expressions) {
    request.add_name_expressions(expr);
  }
  request.set_target(ToWireTarget(ToObjectKind(target)));
  request.set_exact_include_path(!options.toolkit_include_dirs);
  request.set_wait_for_proof(options.wait_for_proof);
  return request;
}

ObjectCode ToObjectCode(v1::CompileResponse& response, CodeType target,
                        const std::string& name) {
  ObjectCode code;
  code.compiled = response.outcome() == v1::OUTCOME_OK;
  code.bytes = std::move(*response.mutable_object());
  code.code_type = target;
  code.name = name;
  code.log = std::move(*response.mutable_log());
  for (const v1::LoweredName& n : response.lowered_names()) {
    code.symbol_mapping[n.name_expression()] = n.lowered_name();
  }
  code.served = FromWire(response.served());
  code.cache_key = response.cache_key();
  code.object_digest = response.object_digest();
  code.compile_time_us = response.compile_time_us();
  code.served_remotely = response.served_remotely();
  code.proof_pending = response.proof_pending();
  return code;
}

namespace internal {

std::span<const FieldMember<DaemonStats>> DaemonStatsMembers() {
  static constexpr FieldMember<DaemonStats> kMembers[] = {
      {"requests", &DaemonStats::requests},
      {"hits", &DaemonStats::hits},
      {"misses", &DaemonStats::misses},
      {"joins", &DaemonStats::joins},
      {"compile_errors", &DaemonStats::compile_errors},
      {"compiles", &DaemonStats::compiles},
      {"link_requests", &DaemonStats::link_requests},
      {"link_errors", &DaemonStats::link_errors},
      {"ptxas_requests", &DaemonStats::ptxas_requests},
      {"queued", &DaemonStats::queued},
      {"running", &DaemonStats::running},
      {"waiting", &DaemonStats::waiting},
      {"compile_seconds_spent", &DaemonStats::compile_seconds_spent},
      {"compile_seconds_saved", &DaemonStats::compile_seconds_saved},
      {"store_entries", &DaemonStats::store_entries},
      {"store_bytes", &DaemonStats::store_bytes},
      {"store_corrupt_removed", &DaemonStats::store_corrupt_removed},
      {"store_write_failures", &DaemonStats::store_write_failures},
      {"store_objects", &DaemonStats::store_objects},
      {"store_uploads", &DaemonStats::store_uploads},
      {"store_live_bytes", &DaemonStats::store_live_bytes},
      {"store_max_bytes", &DaemonStats::store_max_bytes},
      {"store_evicted_entries", &DaemonStats::store_evicted_entries},
      {"store_evicted_bytes", &DaemonStats::store_evicted_bytes},
      {"store_eviction_runs", &DaemonStats::store_eviction_runs},
      {"compiler_crashes", &DaemonStats::compiler_crashes},
      {"compiler_exits", &DaemonStats::compiler_exits},
      {"compiler_memory_limited", &DaemonStats::compiler_memory_limited},
      {"compiler_time_limited", &DaemonStats::compiler_time_limited},
      {"compile_workers_started", &DaemonStats::compile_workers_started},
      {"remote_hits", &DaemonStats::remote_hits},
      {"remote_misses", &DaemonStats::remote_misses},
      {"remote_errors", &DaemonStats::remote_errors},
      {"remote_corrupt", &DaemonStats::remote_corrupt},
      {"remote_leases_waited", &DaemonStats::remote_leases_waited},
      {"remote_bytes_up", &DaemonStats::remote_bytes_up},
      {"remote_bytes_down", &DaemonStats::remote_bytes_down},
      {"hot_hits", &DaemonStats::hot_hits},
      {"hot_entries", &DaemonStats::hot_entries},
      {"hot_bytes", &DaemonStats::hot_bytes},
      {"hot_max_bytes", &DaemonStats::hot_max_bytes},
      {"socket_hits", &DaemonStats::socket_hits},
      {"shared_answers", &DaemonStats::shared_answers},
      {"shared_answer_bytes", &DaemonStats::shared_answer_bytes},
      {"remote_redirects", &DaemonStats::remote_redirects},
      {"remote_cluster_refreshes", &DaemonStats::remote_cluster_refreshes},
      {"remote_replica_hits", &DaemonStats::remote_replica_hits},
      {"remote_replica_misses", &DaemonStats::remote_replica_misses},
      {"store_recovered", &DaemonStats::store_recovered},
      {"store_quarantined", &DaemonStats::store_quarantined},
      {"socket_batches", &DaemonStats::socket_batches},
      {"place_proofs", &DaemonStats::place_proofs},
      {"place_shared", &DaemonStats::place_shared},
      {"place_kept", &DaemonStats::place_kept},
      {"place_name_kept", &DaemonStats::place_name_kept},
      {"place_answered_before_proof",
       &DaemonStats::place_answered_before_proof},
      {"place_proofs_running", &DaemonStats::place_proofs_running},
      {"nvvm_requests", &DaemonStats::nvvm_requests},
      {"records_disproved", &DaemonStats::records_disproved},
      {"disproofs_refuted", &DaemonStats::disproofs_refuted},
  };
  return kMembers;
}

std::span<const FieldMember<UserUsage>> UserUsageMembers() {
  static constexpr FieldMember<UserUsage> kMembers[] = {
      {"uid", &UserUsage::uid},
      {"name", &UserUsage::name},
      {"requests", &UserUsage::requests},
      {"hits", &UserUsage::hits},
      {"misses", &UserUsage::misses},
      {"joins", &UserUsage::joins},
      {"rejected", &UserUsage::rejected},
      {"compile_seconds", &UserUsage::compile_seconds},
      {"queued", &UserUsage::queued},
  };
  return kMembers;
}

}  // namespace internal

namespace {

// Copies each field `members` names from `message` into `out`. A member
// whose field is missing or of another type is left alone (rather than
// tripping protobuf's type check): ClientMessages.* fails on it instead.
template <typename T>
void CopyMembers(const google::protobuf::Message& message,
                 std::span<const internal::FieldMember<T>> members, T* out) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor& d = *message.GetDescriptor();
  const google::protobuf::Reflection& r = *message.GetReflection();
  for (const internal::FieldMember<T>& m : members) {
    const FieldDescriptor* f = d.FindFieldByName(std::string(m.field));
    if (f == nullptr || f->is_repeated()) continue;
    if (auto* u64 = std::get_if<uint64_t T::*>(&m.member);
        u64 != nullptr && f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
      out->** u64 = r.GetUInt64(message, f);
    } else if (auto* u32 = std::get_if<unsigned T::*>(&m.member);
               u32 != nullptr &&
               f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32) {
      out->** u32 = r.GetUInt32(message, f);
    } else if (auto* dbl = std::get_if<double T::*>(&m.member);
               dbl != nullptr &&
               f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      out->** dbl = r.GetDouble(message, f);
    } else if (auto* str = std::get_if<std::string T::*>(&m.member);
               str != nullptr &&
               f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      out->** str = r.GetString(message, f);
    }
  }
}

}  // namespace

DaemonStats DaemonStatsFrom(const v1::StatsResponse& r) {
  DaemonStats stats;
  const google::protobuf::Descriptor& d = *r.GetDescriptor();
  const google::protobuf::Reflection& reflect = *r.GetReflection();
  for (int i = 0; i < d.field_count(); ++i) {
    const google::protobuf::FieldDescriptor& f = *d.field(i);
    if (f.is_map()) {
      const std::map<std::string, uint64_t> by_reason(r.rejected().begin(),
                                                      r.rejected().end());
      for (const auto& [reason, count] : by_reason) {
        stats.values.emplace_back(absl::StrCat(f.name(), "_", reason),
                                  static_cast<double>(count));
      }
    } else if (f.cpp_type() ==
               google::protobuf::FieldDescriptor::CPPTYPE_UINT64) {
      stats.values.emplace_back(f.name(),
                                static_cast<double>(reflect.GetUInt64(r, &f)));
    } else if (f.cpp_type() ==
               google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
      stats.values.emplace_back(f.name(), reflect.GetDouble(r, &f));
    }
  }
  CopyMembers(r, internal::DaemonStatsMembers(), &stats);
  stats.rejected.insert(r.rejected().begin(), r.rejected().end());
  for (const v1::UserStats& u : r.users()) {
    CopyMembers(u, internal::UserUsageMembers(), &stats.users.emplace_back());
  }
  return stats;
}

DaemonInfo::Library LibraryFrom(const v1::ToolkitLibrary& lib) {
  return {lib.name(),     lib.path(),  lib.device(), lib.inode(),   lib.size(),
          lib.mtime_ns(), lib.major(), lib.minor(),  lib.ctime_ns()};
}

v1::ListEntriesRequest ToListEntriesRequest(const ListOptions& options) {
  v1::ListEntriesRequest request;
  request.set_arch(options.arch);
  if (options.target.has_value()) {
    request.set_target(ToWireTarget(ToObjectKind(*options.target)));
  }
  request.set_sort(options.sort == ListOptions::Sort::kSize
                       ? v1::ListEntriesRequest::SORT_SIZE
                       : v1::ListEntriesRequest::SORT_USED);
  request.set_limit(static_cast<uint32_t>(options.limit));
  return request;
}

}  // namespace jitcache
