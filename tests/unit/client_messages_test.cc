// The client's typed stats against the proto they come from: a field
// added to StatsResponse or UserStats without its member here, a member
// naming a field that is not there, or one of the wrong type fails.
#include <map>
#include <set>
#include <string>

#include "client/rpc/messages.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool IsScalar(const FieldDescriptor& f) {
  return !f.is_repeated() && f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
}

// Sets every scalar field of `message` to a value of its own (1, 2, ...;
// strings "f1", "f2", ...), and returns them as text by field name.
std::map<std::string, std::string> FillDistinct(Message* message) {
  const Descriptor& d = *message->GetDescriptor();
  const Reflection& r = *message->GetReflection();
  std::map<std::string, std::string> set;
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (!IsScalar(f)) continue;
    const int v = 1000 + i;
    switch (f.cpp_type()) {
      case FieldDescriptor::CPPTYPE_UINT64:
        r.SetUInt64(message, &f, v);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        r.SetUInt32(message, &f, v);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        r.SetDouble(message, &f, v + 0.5);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        r.SetString(message, &f, "f" + std::to_string(v));
        break;
      default:
        ADD_FAILURE() << f.name() << ": a type the client cannot copy";
        continue;
    }
    set[f.name()] = f.cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                        ? std::to_string(v + 0.5)
                    : f.cpp_type() == FieldDescriptor::CPPTYPE_STRING
                        ? "f" + std::to_string(v)
                        : std::to_string(v);
  }
  return set;
}

template <typename T>
std::string MemberText(const T& value, const internal::FieldMember<T>& member) {
  return std::visit(
      [&](auto pointer) -> std::string {
        const auto& field = value.*pointer;
        if constexpr (std::is_same_v<std::decay_t<decltype(field)>,
                                     std::string>) {
          return field;
        } else {
          return std::to_string(field);
        }
      },
      member.member);
}

// Each scalar field reaches exactly one member, with its value.
template <typename T>
void ExpectEveryFieldReachesItsMember(
    const std::map<std::string, std::string>& set, const T& converted,
    std::span<const internal::FieldMember<T>> members) {
  std::set<std::string> named;
  for (const internal::FieldMember<T>& m : members) {
    const std::string field(m.field);
    EXPECT_TRUE(named.insert(field).second) << field << " named twice";
    auto it = set.find(field);
    if (it == set.end()) {
      ADD_FAILURE() << field << ": no such number in the proto";
      continue;
    }
    EXPECT_EQ(MemberText(converted, m), it->second) << field;
  }
  for (const auto& [field, value] : set) {
    EXPECT_TRUE(named.contains(field))
        << field << " has no typed member in the client";
  }
}

TEST(ClientMessages, EveryNumberOfStatsResponseIsATypedMember) {
  v1::StatsResponse response;
  const std::map<std::string, std::string> set = FillDistinct(&response);
  ASSERT_GT(set.size(), 30u);
  v1::UserStats* user = response.add_users();
  const std::map<std::string, std::string> user_set = FillDistinct(user);
  (*response.mutable_rejected())["data_loss"] = 7;

  const DaemonStats stats = DaemonStatsFrom(response);
  ExpectEveryFieldReachesItsMember(set, stats, internal::DaemonStatsMembers());
  ASSERT_EQ(stats.users.size(), 1u);
  ExpectEveryFieldReachesItsMember(user_set, stats.users[0],
                                   internal::UserUsageMembers());
  EXPECT_EQ(stats.rejected.at("data_loss"), 7u);
}

TEST(ClientMessages, ValuesListEveryNumberUnderItsWireNameInProtoOrder) {
  v1::StatsResponse response;
  const std::map<std::string, std::string> set = FillDistinct(&response);
  (*response.mutable_rejected())["internal"] = 3;
  (*response.mutable_rejected())["data_loss"] = 7;
  const DaemonStats stats = DaemonStatsFrom(response);
  std::vector<std::string> names;
  for (const auto& [name, value] : stats.values) {
    names.push_back(name);
    auto it = set.find(name);
    if (it != set.end()) {
      EXPECT_EQ(std::to_string(value), std::to_string(std::stod(it->second)))
          << name;
    }
  }
  std::vector<std::string> expected;
  const Descriptor& d = *v1::StatsResponse::descriptor();
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (f.is_map()) {
      expected.push_back(f.name() + "_data_loss");
      expected.push_back(f.name() + "_internal");
    } else if (IsScalar(f)) {
      expected.push_back(f.name());
    }
  }
  EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace jitcache
