// Every hand-named field number and enum value (wire_fields.h) is the one
// protoc generated, and every status code absl's: checked when the proto
// library is built.
#include "absl/status/status.h"
#include "jitcache/v1/jitcache.pb.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache {

static_assert(wire::IncludedFile::kPath == v1::IncludedFile::kPathFieldNumber);
static_assert(wire::IncludedFile::kSha256 ==
              v1::IncludedFile::kSha256FieldNumber);
static_assert(wire::IncludedFile::kContents ==
              v1::IncludedFile::kContentsFieldNumber);
static_assert(wire::IncludedFile::kMtimeNs ==
              v1::IncludedFile::kMtimeNsFieldNumber);
static_assert(wire::CompileRequest::kSource ==
              v1::CompileRequest::kSourceFieldNumber);
static_assert(wire::CompileRequest::kProgramName ==
              v1::CompileRequest::kProgramNameFieldNumber);
static_assert(wire::CompileRequest::kHeaders ==
              v1::CompileRequest::kHeadersFieldNumber);
static_assert(wire::CompileRequest::kOptions ==
              v1::CompileRequest::kOptionsFieldNumber);
static_assert(wire::CompileRequest::kNameExpressions ==
              v1::CompileRequest::kNameExpressionsFieldNumber);
static_assert(wire::CompileRequest::kTarget ==
              v1::CompileRequest::kTargetFieldNumber);
static_assert(wire::CompileRequest::kIncludesResolved ==
              v1::CompileRequest::kIncludesResolvedFieldNumber);
static_assert(wire::CompileRequest::kIncludedFiles ==
              v1::CompileRequest::kIncludedFilesFieldNumber);
static_assert(wire::CompileRequest::kIncludedSetSha256 ==
              v1::CompileRequest::kIncludedSetSha256FieldNumber);
static_assert(wire::CompileRequest::kExactIncludePath ==
              v1::CompileRequest::kExactIncludePathFieldNumber);
static_assert(wire::CompileRequest::kWorkingDirectory ==
              v1::CompileRequest::kWorkingDirectoryFieldNumber);
static_assert(wire::CompileRequest::kIncludedMtimesNs ==
              v1::CompileRequest::kIncludedMtimesNsFieldNumber);
static_assert(wire::CompileRequest::kWaitForProof ==
              v1::CompileRequest::kWaitForProofFieldNumber);
static_assert(wire::Header::kName == v1::Header::kNameFieldNumber);
static_assert(wire::Header::kContents == v1::Header::kContentsFieldNumber);
static_assert(wire::CompileResponse::kOutcome ==
              v1::CompileResponse::kOutcomeFieldNumber);
static_assert(wire::CompileResponse::kObject ==
              v1::CompileResponse::kObjectFieldNumber);
static_assert(wire::CompileResponse::kLog ==
              v1::CompileResponse::kLogFieldNumber);
static_assert(wire::CompileResponse::kLoweredNames ==
              v1::CompileResponse::kLoweredNamesFieldNumber);
static_assert(wire::CompileResponse::kCacheKey ==
              v1::CompileResponse::kCacheKeyFieldNumber);
static_assert(wire::CompileResponse::kServed ==
              v1::CompileResponse::kServedFieldNumber);
static_assert(wire::CompileResponse::kCompileTimeUs ==
              v1::CompileResponse::kCompileTimeUsFieldNumber);
static_assert(wire::CompileResponse::kTarget ==
              v1::CompileResponse::kTargetFieldNumber);
static_assert(wire::CompileResponse::kObjectDigest ==
              v1::CompileResponse::kObjectDigestFieldNumber);
static_assert(wire::CompileResponse::kServedRemotely ==
              v1::CompileResponse::kServedRemotelyFieldNumber);
static_assert(wire::CompileResponse::kLinkTrace ==
              v1::CompileResponse::kLinkTraceFieldNumber);
static_assert(wire::CompileResponse::kPtxasRun ==
              v1::CompileResponse::kPtxasRunFieldNumber);
static_assert(wire::CompileResponse::kPlaceMatters ==
              v1::CompileResponse::kPlaceMattersFieldNumber);
static_assert(wire::CompileResponse::kWorkingDirectoryOnly ==
              v1::CompileResponse::kWorkingDirectoryOnlyFieldNumber);
static_assert(wire::CompileResponse::kProofPending ==
              v1::CompileResponse::kProofPendingFieldNumber);
static_assert(wire::CompileResponse::kNvvmRun ==
              v1::CompileResponse::kNvvmRunFieldNumber);
static_assert(wire::LoweredName::kNameExpression ==
              v1::LoweredName::kNameExpressionFieldNumber);
static_assert(wire::LoweredName::kLoweredName ==
              v1::LoweredName::kLoweredNameFieldNumber);
static_assert(wire::PingResponse::kDaemonVersion ==
              v1::PingResponse::kDaemonVersionFieldNumber);
static_assert(wire::PingResponse::kToolchain ==
              v1::PingResponse::kToolchainFieldNumber);
static_assert(wire::PingResponse::kToolchainFingerprint ==
              v1::PingResponse::kToolchainFingerprintFieldNumber);
static_assert(wire::PingResponse::kKeySchemaVersion ==
              v1::PingResponse::kKeySchemaVersionFieldNumber);
static_assert(wire::PingResponse::kSupportedArchs ==
              v1::PingResponse::kSupportedArchsFieldNumber);
static_assert(wire::PingResponse::kStorePath ==
              v1::PingResponse::kStorePathFieldNumber);
static_assert(wire::PingResponse::kIncludeDirs ==
              v1::PingResponse::kIncludeDirsFieldNumber);
static_assert(wire::PingResponse::kLibraries ==
              v1::PingResponse::kLibrariesFieldNumber);
static_assert(wire::PingResponse::kPtxas ==
              v1::PingResponse::kPtxasFieldNumber);
static_assert(wire::LinkRequest::kInputs ==
              v1::LinkRequest::kInputsFieldNumber);
static_assert(wire::LinkRequest::kOptions ==
              v1::LinkRequest::kOptionsFieldNumber);
static_assert(wire::LinkRequest::kTarget ==
              v1::LinkRequest::kTargetFieldNumber);
static_assert(wire::LinkRequest::kAsCalled ==
              v1::LinkRequest::kAsCalledFieldNumber);
static_assert(wire::LinkRequest::kStepsOnly ==
              v1::LinkRequest::kStepsOnlyFieldNumber);
static_assert(wire::LinkRequest::kDisproves ==
              v1::LinkRequest::kDisprovesFieldNumber);
static_assert(wire::LinkInput::kDigest == v1::LinkInput::kDigestFieldNumber);
static_assert(wire::LinkInput::kData == v1::LinkInput::kDataFieldNumber);
static_assert(wire::LinkInput::kKind == v1::LinkInput::kKindFieldNumber);
static_assert(wire::LinkInput::kName == v1::LinkInput::kNameFieldNumber);
static_assert(wire::LinkInput::kTypedByContent ==
              v1::LinkInput::kTypedByContentFieldNumber);
static_assert(wire::LinkInput::kSources == v1::LinkInput::kSourcesFieldNumber);
static_assert(wire::NvJitLinkTrace::kHandleCreated ==
              v1::NvJitLinkTrace::kHandleCreatedFieldNumber);
static_assert(wire::NvJitLinkTrace::kSteps ==
              v1::NvJitLinkTrace::kStepsFieldNumber);
static_assert(wire::NvJitLinkTrace::kComplete ==
              v1::NvJitLinkTrace::kCompleteFieldNumber);
static_assert(wire::NvJitLinkTrace::kCubinSizeResult ==
              v1::NvJitLinkTrace::kCubinSizeResultFieldNumber);
static_assert(wire::NvJitLinkTrace::kCubinResult ==
              v1::NvJitLinkTrace::kCubinResultFieldNumber);
static_assert(wire::NvJitLinkTrace::kPtxSizeResult ==
              v1::NvJitLinkTrace::kPtxSizeResultFieldNumber);
static_assert(wire::NvJitLinkTrace::kPtxResult ==
              v1::NvJitLinkTrace::kPtxResultFieldNumber);
static_assert(wire::NvJitLinkTrace::kPtx ==
              v1::NvJitLinkTrace::kPtxFieldNumber);
static_assert(wire::NvJitLinkStep::kResult ==
              v1::NvJitLinkStep::kResultFieldNumber);
static_assert(wire::NvJitLinkStep::kLogs ==
              v1::NvJitLinkStep::kLogsFieldNumber);
static_assert(wire::NvJitLinkStep::kStderrText ==
              v1::NvJitLinkStep::kStderrTextFieldNumber);
static_assert(wire::NvJitLinkLogs::kErrorSizeResult ==
              v1::NvJitLinkLogs::kErrorSizeResultFieldNumber);
static_assert(wire::NvJitLinkLogs::kErrorLog ==
              v1::NvJitLinkLogs::kErrorLogFieldNumber);
static_assert(wire::NvJitLinkLogs::kInfoSizeResult ==
              v1::NvJitLinkLogs::kInfoSizeResultFieldNumber);
static_assert(wire::NvJitLinkLogs::kInfoLog ==
              v1::NvJitLinkLogs::kInfoLogFieldNumber);
static_assert(wire::ToolkitLibrary::kName ==
              v1::ToolkitLibrary::kNameFieldNumber);
static_assert(wire::ToolkitLibrary::kPath ==
              v1::ToolkitLibrary::kPathFieldNumber);
static_assert(wire::ToolkitLibrary::kDevice ==
              v1::ToolkitLibrary::kDeviceFieldNumber);
static_assert(wire::ToolkitLibrary::kInode ==
              v1::ToolkitLibrary::kInodeFieldNumber);
static_assert(wire::ToolkitLibrary::kSize ==
              v1::ToolkitLibrary::kSizeFieldNumber);
static_assert(wire::ToolkitLibrary::kMtimeNs ==
              v1::ToolkitLibrary::kMtimeNsFieldNumber);
static_assert(wire::ToolkitLibrary::kMajor ==
              v1::ToolkitLibrary::kMajorFieldNumber);
static_assert(wire::ToolkitLibrary::kMinor ==
              v1::ToolkitLibrary::kMinorFieldNumber);
static_assert(wire::ToolkitLibrary::kCtimeNs ==
              v1::ToolkitLibrary::kCtimeNsFieldNumber);
static_assert(wire::ToolkitLibrary::kSha256 ==
              v1::ToolkitLibrary::kSha256FieldNumber);
static_assert(wire::ToolkitLibrary::kIrMajor ==
              v1::ToolkitLibrary::kIrMajorFieldNumber);
static_assert(wire::ToolkitLibrary::kIrMinor ==
              v1::ToolkitLibrary::kIrMinorFieldNumber);
static_assert(wire::ToolkitLibrary::kDebugMajor ==
              v1::ToolkitLibrary::kDebugMajorFieldNumber);
static_assert(wire::ToolkitLibrary::kDebugMinor ==
              v1::ToolkitLibrary::kDebugMinorFieldNumber);
static_assert(wire::PtxasRequest::kPtxas ==
              v1::PtxasRequest::kPtxasFieldNumber);
static_assert(wire::PtxasRequest::kProgram ==
              v1::PtxasRequest::kProgramFieldNumber);
static_assert(wire::PtxasRequest::kArguments ==
              v1::PtxasRequest::kArgumentsFieldNumber);
static_assert(wire::PtxasRequest::kPtx == v1::PtxasRequest::kPtxFieldNumber);
static_assert(wire::PtxasRequest::kWorkingDirectory ==
              v1::PtxasRequest::kWorkingDirectoryFieldNumber);
static_assert(wire::PtxasRequest::kWithNames ==
              v1::PtxasRequest::kWithNamesFieldNumber);
static_assert(wire::PtxasRequest::kSources ==
              v1::PtxasRequest::kSourcesFieldNumber);
static_assert(wire::PtxasSource::kPath == v1::PtxasSource::kPathFieldNumber);
static_assert(wire::PtxasSource::kExists ==
              v1::PtxasSource::kExistsFieldNumber);
static_assert(wire::PtxasSource::kSize == v1::PtxasSource::kSizeFieldNumber);
static_assert(wire::PtxasSource::kMtimeNs ==
              v1::PtxasSource::kMtimeNsFieldNumber);
static_assert(wire::PtxasRun::kExitStatus ==
              v1::PtxasRun::kExitStatusFieldNumber);
static_assert(wire::PtxasRun::kStdout == v1::PtxasRun::kStdoutFieldNumber);
static_assert(wire::PtxasRun::kOutputWritten ==
              v1::PtxasRun::kOutputWrittenFieldNumber);
static_assert(wire::PtxasRun::kNamesMatter ==
              v1::PtxasRun::kNamesMatterFieldNumber);
static_assert(wire::NvvmRequest::kLibnvvm ==
              v1::NvvmRequest::kLibnvvmFieldNumber);
static_assert(wire::NvvmRequest::kCalls == v1::NvvmRequest::kCallsFieldNumber);
static_assert(wire::NvvmRequest::kWithModules ==
              v1::NvvmRequest::kWithModulesFieldNumber);
static_assert(wire::NvvmCall::kKind == v1::NvvmCall::kKindFieldNumber);
static_assert(wire::NvvmCall::kName == v1::NvvmCall::kNameFieldNumber);
static_assert(wire::NvvmCall::kUnnamed == v1::NvvmCall::kUnnamedFieldNumber);
static_assert(wire::NvvmCall::kDigest == v1::NvvmCall::kDigestFieldNumber);
static_assert(wire::NvvmCall::kModule == v1::NvvmCall::kModuleFieldNumber);
static_assert(wire::NvvmCall::kOptions == v1::NvvmCall::kOptionsFieldNumber);
static_assert(wire::NvvmRun::kResult == v1::NvvmRun::kResultFieldNumber);
static_assert(wire::NvvmRun::kLogSizeResult ==
              v1::NvvmRun::kLogSizeResultFieldNumber);
static_assert(wire::NvvmRun::kLog == v1::NvvmRun::kLogFieldNumber);
static_assert(wire::NvvmRun::kLogResult == v1::NvvmRun::kLogResultFieldNumber);
static_assert(wire::NvvmRun::kOutputSizeResult ==
              v1::NvvmRun::kOutputSizeResultFieldNumber);
static_assert(wire::NvvmRun::kOutputResult ==
              v1::NvvmRun::kOutputResultFieldNumber);
static_assert(wire::NvvmRun::kFailedOutput ==
              v1::NvvmRun::kFailedOutputFieldNumber);
static_assert(wire::FramedRefusal::kCode ==
              v1::FramedRefusal::kCodeFieldNumber);
static_assert(wire::FramedRefusal::kMessage ==
              v1::FramedRefusal::kMessageFieldNumber);

static_assert(wire::Target::kUnspecified == v1::TARGET_UNSPECIFIED);
static_assert(wire::Target::kPtx == v1::TARGET_PTX);
static_assert(wire::Target::kCubin == v1::TARGET_CUBIN);
static_assert(wire::Target::kLtoir == v1::TARGET_LTOIR);
static_assert(wire::Target::kOptixIr == v1::TARGET_OPTIXIR);
static_assert(wire::Outcome::kOk == v1::OUTCOME_OK);
static_assert(wire::Outcome::kCompileError == v1::OUTCOME_COMPILE_ERROR);
static_assert(wire::Outcome::kLinkError == v1::OUTCOME_LINK_ERROR);
static_assert(wire::Served::kHit == v1::SERVED_HIT);
static_assert(wire::Served::kMiss == v1::SERVED_MISS);
static_assert(wire::Served::kJoined == v1::SERVED_JOINED);
static_assert(wire::Served::kLocal == v1::SERVED_LOCAL);
static_assert(wire::Code::kOk == static_cast<int>(absl::StatusCode::kOk));
static_assert(wire::Code::kUnknown ==
              static_cast<int>(absl::StatusCode::kUnknown));
static_assert(wire::Code::kInvalidArgument ==
              static_cast<int>(absl::StatusCode::kInvalidArgument));
static_assert(wire::Code::kNotFound ==
              static_cast<int>(absl::StatusCode::kNotFound));
static_assert(wire::Code::kOutOfRange ==
              static_cast<int>(absl::StatusCode::kOutOfRange));
}  // namespace jitcache
