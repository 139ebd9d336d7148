#ifndef JITCACHE_PROTO_JITCACHE_V1_WIRE_FIELDS_H_
#define JITCACHE_PROTO_JITCACHE_V1_WIRE_FIELDS_H_

// The field numbers and enum values of jitcache.proto's messages that the
// front ends without protobuf (`jitcache`, `jitcache-ptxas`, libnvrtc.so.13,
// libnvJitLink.so.13, libnvvm.so.4) write and read by hand (client/wire/), by
// name, and the status codes a FramedRefusal carries. Plain constants, so
// that including this loads nothing; wire_fields_check.cc, built with the
// generated code, checks every one against protoc's own (k...FieldNumber,
// the enums) and absl::StatusCode at compile time, so a renumbered field or
// value breaks the build instead of the front ends.
namespace jitcache::wire {

struct CompileRequest {
  static constexpr int kSource = 1;
  static constexpr int kProgramName = 2;
  static constexpr int kHeaders = 3;
  static constexpr int kOptions = 4;
  static constexpr int kNameExpressions = 5;
  static constexpr int kTarget = 6;
  static constexpr int kIncludesResolved = 7;
  static constexpr int kIncludedFiles = 8;
  static constexpr int kIncludedSetSha256 = 9;
  static constexpr int kExactIncludePath = 10;
  static constexpr int kWorkingDirectory = 11;
  static constexpr int kIncludedMtimesNs = 12;
  static constexpr int kWaitForProof = 13;
};
struct Header {
  static constexpr int kName = 1;
  static constexpr int kContents = 2;
};
struct IncludedFile {
  static constexpr int kPath = 1;
  static constexpr int kSha256 = 2;
  static constexpr int kContents = 3;
  static constexpr int kMtimeNs = 4;
};
struct CompileResponse {
  static constexpr int kOutcome = 1;
  static constexpr int kObject = 2;
  static constexpr int kLog = 3;
  static constexpr int kLoweredNames = 4;
  static constexpr int kCacheKey = 5;
  static constexpr int kServed = 6;
  static constexpr int kCompileTimeUs = 7;
  static constexpr int kTarget = 8;
  static constexpr int kObjectDigest = 9;
  static constexpr int kServedRemotely = 10;
  static constexpr int kLinkTrace = 11;
  static constexpr int kPtxasRun = 12;
  static constexpr int kPlaceMatters = 13;
  static constexpr int kWorkingDirectoryOnly = 14;
  static constexpr int kProofPending = 15;
  static constexpr int kNvvmRun = 16;
};
struct LoweredName {
  static constexpr int kNameExpression = 1;
  static constexpr int kLoweredName = 2;
};
struct PingResponse {
  static constexpr int kDaemonVersion = 1;
  static constexpr int kToolchain = 2;
  static constexpr int kToolchainFingerprint = 3;
  static constexpr int kKeySchemaVersion = 4;
  static constexpr int kSupportedArchs = 5;
  static constexpr int kStorePath = 6;
  static constexpr int kIncludeDirs = 7;
  static constexpr int kLibraries = 8;
  static constexpr int kPtxas = 9;
};
struct LinkRequest {
  static constexpr int kInputs = 1;
  static constexpr int kOptions = 2;
  static constexpr int kTarget = 3;
  static constexpr int kAsCalled = 4;
  static constexpr int kStepsOnly = 5;
  static constexpr int kDisproves = 6;
};
struct LinkInput {
  static constexpr int kDigest = 1;
  static constexpr int kData = 2;
  static constexpr int kKind = 3;
  static constexpr int kName = 4;
  static constexpr int kTypedByContent = 5;
  static constexpr int kSources = 6;
};
struct NvJitLinkTrace {
  static constexpr int kHandleCreated = 1;
  static constexpr int kSteps = 2;
  static constexpr int kComplete = 3;
  static constexpr int kCubinSizeResult = 4;
  static constexpr int kCubinResult = 5;
  static constexpr int kPtxSizeResult = 6;
  static constexpr int kPtxResult = 7;
  static constexpr int kPtx = 8;
};
struct NvJitLinkStep {
  static constexpr int kResult = 1;
  static constexpr int kLogs = 2;
  static constexpr int kStderrText = 3;
};
struct NvJitLinkLogs {
  static constexpr int kErrorSizeResult = 1;
  static constexpr int kErrorLog = 2;
  static constexpr int kInfoSizeResult = 3;
  static constexpr int kInfoLog = 4;
};
struct ToolkitLibrary {
  static constexpr int kName = 1;
  static constexpr int kPath = 2;
  static constexpr int kDevice = 3;
  static constexpr int kInode = 4;
  static constexpr int kSize = 5;
  static constexpr int kMtimeNs = 6;
  static constexpr int kMajor = 7;
  static constexpr int kMinor = 8;
  static constexpr int kCtimeNs = 9;
  static constexpr int kSha256 = 10;
  static constexpr int kIrMajor = 11;
  static constexpr int kIrMinor = 12;
  static constexpr int kDebugMajor = 13;
  static constexpr int kDebugMinor = 14;
};
struct PtxasRequest {
  static constexpr int kPtxas = 1;
  static constexpr int kProgram = 2;
  static constexpr int kArguments = 3;
  static constexpr int kPtx = 4;
  static constexpr int kWorkingDirectory = 5;
  static constexpr int kWithNames = 6;
  static constexpr int kSources = 7;
};
struct PtxasSource {
  static constexpr int kPath = 1;
  static constexpr int kExists = 2;
  static constexpr int kSize = 3;
  static constexpr int kMtimeNs = 4;
};
struct PtxasRun {
  static constexpr int kExitStatus = 1;
  static constexpr int kStdout = 2;
  static constexpr int kOutputWritten = 3;
  static constexpr int kNamesMatter = 4;
};
struct NvvmRequest {
  static constexpr int kLibnvvm = 1;
  static constexpr int kCalls = 2;
  static constexpr int kWithModules = 3;
};
struct NvvmCall {
  static constexpr int kKind = 1;
  static constexpr int kName = 2;
  static constexpr int kUnnamed = 3;
  static constexpr int kDigest = 4;
  static constexpr int kModule = 5;
  static constexpr int kOptions = 6;
};
struct NvvmRun {
  static constexpr int kResult = 1;
  static constexpr int kLogSizeResult = 2;
  static constexpr int kLog = 3;
  static constexpr int kLogResult = 4;
  static constexpr int kOutputSizeResult = 5;
  static constexpr int kOutputResult = 6;
  static constexpr int kFailedOutput = 7;
};
struct FramedRefusal {
  static constexpr int kCode = 1;
  static constexpr int kMessage = 2;
};

// Enum values (v1::Target, v1::Outcome, v1::Served).
struct Target {
  static constexpr int kUnspecified = 0;
  static constexpr int kPtx = 1;
  static constexpr int kCubin = 2;
  static constexpr int kLtoir = 3;
  static constexpr int kOptixIr = 7;
};
struct Outcome {
  static constexpr int kOk = 1;
  static constexpr int kCompileError = 2;
  static constexpr int kLinkError = 3;
};
struct Served {
  static constexpr int kHit = 1;
  static constexpr int kMiss = 2;
  static constexpr int kJoined = 3;
  static constexpr int kLocal = 4;
};

// FramedRefusal.code: absl::StatusCode's (google.rpc.Code's) numbers, those
// the front ends decide by.
struct Code {
  static constexpr int kOk = 0;
  // A refusal that could not be read.
  static constexpr int kUnknown = 2;
  static constexpr int kInvalidArgument = 3;
  // The daemon lacks inputs named by digest: ask again with their bytes.
  static constexpr int kNotFound = 5;
  // The compile succeeded but made no object of the kind asked for (NVRTC
  // with -fdevice-syntax-only, or no cubin for a virtual architecture): the
  // caller's NVRTC reports size 0 for that kind.
  static constexpr int kOutOfRange = 11;
};
}  // namespace jitcache::wire

#endif  // JITCACHE_PROTO_JITCACHE_V1_WIRE_FIELDS_H_
