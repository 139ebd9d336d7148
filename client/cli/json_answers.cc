#include "client/cli/json_answers.h"

#include <iostream>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cli/cli_args.h"
#include "client/cli/store_commands.h"
#include "client/rpc/messages.h"
#include "client/rpc/rpc_channel.h"
#include "common/paths.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "jitcache/v1/jitcache.grpc.pb.h"

namespace jitcache::cli {
namespace {

// Asks `call` of the daemon and prints its answer as JSON.
template <typename Request, typename Response, typename Call>
int Print(const std::string& socket, const Request& request, Call call) {
  auto stub = v1::JitCache::NewStub(
      MakeDaemonChannel(socket.empty() ? DefaultClientSocketPath() : socket));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  Response response;
  const grpc::Status status = (stub.get()->*call)(&context, request, &response);
  if (!status.ok()) {
    return Failed(
        absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                     status.error_message()));
  }
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(response, &json, options)
           .ok()) {
    return Failed(absl::InternalError("the answer has no JSON form"));
  }
  std::cout << json << "\n";
  return 0;
}

}  // namespace

std::optional<int> PrintJsonAnswer(const CommandLine& line) {
  using Stub = v1::JitCache::Stub;
  const std::string& socket = line.socket;
  const std::string& command = line.command;
  if (command == "ping" || command == "config") {
    if (command == "ping") {
      return Print<v1::PingRequest, v1::PingResponse>(socket, {}, &Stub::Ping);
    }
    return Print<v1::ConfigRequest, v1::ConfigResponse>(socket, {},
                                                        &Stub::GetConfig);
  }
  if (command == "ls") {
    std::variant<ListOptions, int> parsed = ListOptionsOf(line);
    if (const int* usage = std::get_if<int>(&parsed)) return *usage;
    return Print<v1::ListEntriesRequest, v1::ListEntriesResponse>(
        socket, ToListEntriesRequest(std::get<ListOptions>(parsed)),
        &Stub::ListEntries);
  }
  if (command == "show") {
    if (line.key_prefix.empty() || line.ptx || !line.output.empty()) {
      return UsageError("show --json takes one KEY_PREFIX");
    }
    v1::ShowEntryRequest request;
    request.set_key_prefix(line.key_prefix);
    return Print<v1::ShowEntryRequest, v1::ShowEntryResponse>(socket, request,
                                                              &Stub::ShowEntry);
  }
  return std::nullopt;
}

}  // namespace jitcache::cli
