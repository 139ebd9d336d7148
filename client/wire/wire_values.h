#ifndef JITCACHE_CLIENT_WIRE_WIRE_VALUES_H_
#define JITCACHE_CLIENT_WIRE_WIRE_VALUES_H_

// The wire's enum values and refusal codes, by name, for the front ends
// that speak the wire only through client/wire: wire::Target, Outcome,
// Served and Code, each checked against protoc's and absl's numbers when
// the proto library is built (wire_fields_check.cc).
#include "jitcache/v1/wire_fields.h"  // IWYU pragma: export

#endif  // JITCACHE_CLIENT_WIRE_WIRE_VALUES_H_
