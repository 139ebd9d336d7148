#include "common/cache_key.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace jitcache {
namespace {

struct Fields {
  std::string fingerprint = std::string(32, 'a');
  ObjectKind target = ObjectKind::kCubin;
  std::string arch = "sm_90";
  std::vector<std::string> options = {"--gpu-architecture=sm_90",
                                      "--define-macro=N=4"};
  // CompilePlace("/home/ada/project", "k.cu").ProgramForKey().
  std::string program = "P:k.cu";
  std::string source = "__global__ void k() {}";
  std::vector<std::pair<std::string, std::string>> headers = {
      {"a.h", "#define A 1"}, {"b.h", "#define B 2"}};
  std::vector<std::string> names = {"k", "k2"};

  Digest Key() const {
    CompileKeyInput in;
    in.toolchain_fingerprint = fingerprint;
    in.target = target;
    in.arch = arch;
    in.options = options;
    in.program = program;
    in.source = source;
    for (const auto& [n, b] : headers) in.headers.emplace_back(n, b);
    for (const auto& n : names) in.name_expressions.push_back(n);
    return ComputeCompileKey(in);
  }
};

// The encoding is part of the store format: a change here must come with a
// new kKeySchemaVersion. The value was computed independently of this code
// (Python's hashlib over the documented field encoding).
TEST(CacheKey, GoldenValue) {
  EXPECT_EQ(Fields().Key().Hex(),
            "b6148e9c6d72a6bb72c5e163f672b2e62f4d913865b7d6070b4c6d957e0f1ca5");
}

TEST(CacheKey, SameInputSameKey) {
  EXPECT_EQ(Fields().Key(), Fields().Key());
  EXPECT_NE(Fields().Key(), Digest{});
}

TEST(CacheKey, EveryFieldChangesTheKey) {
  const Digest base = Fields().Key();
  const std::vector<std::pair<const char*, std::function<void(Fields&)>>>
      edits = {
          {"fingerprint", [](Fields& f) { f.fingerprint[0] = 'b'; }},
          {"target", [](Fields& f) { f.target = ObjectKind::kPtx; }},
          {"arch", [](Fields& f) { f.arch = "sm_80"; }},
          {"option value",
           [](Fields& f) { f.options[1] = "--define-macro=N=5"; }},
          {"option added",
           [](Fields& f) { f.options.push_back("--ftz=true"); }},
          {"option order",
           [](Fields& f) { std::swap(f.options[0], f.options[1]); }},
          {"program name", [](Fields& f) { f.program = "P:j.cu"; }},
          {"source", [](Fields& f) { f.source += " "; }},
          {"header body", [](Fields& f) { f.headers[0].second += " "; }},
          {"header name", [](Fields& f) { f.headers[0].first = "c.h"; }},
          {"header added",
           [](Fields& f) {
             f.headers.push_back({"z.h", ""});
           }},
          {"name expression", [](Fields& f) { f.names[0] = "k3"; }},
          {"name expression added", [](Fields& f) { f.names.push_back("k4"); }},
      };
  for (const auto& [what, edit] : edits) {
    Fields f;
    edit(f);
    EXPECT_NE(f.Key(), base) << what;
  }
}

TEST(CacheKey, HeaderAndNameOrderDoNotMatter) {
  const Digest base = Fields().Key();
  Fields f;
  std::swap(f.headers[0], f.headers[1]);
  std::swap(f.names[0], f.names[1]);
  f.names.push_back("k");  // a duplicate
  EXPECT_EQ(f.Key(), base);
}

TEST(CacheKey, FieldBoundariesAreUnambiguous) {
  // Moving bytes from one field to the next must not collide.
  Fields a, b;
  a.program = "ab";
  a.source = "c";
  b.program = "a";
  b.source = "bc";
  EXPECT_NE(a.Key(), b.Key());
  Fields c, d;
  c.headers = {{"x", "yz"}};
  d.headers = {{"xy", "z"}};
  EXPECT_NE(c.Key(), d.Key());
}

struct PlacedFields {
  Digest place_free = Fields().Key();
  std::string working_directory = "/home/ada/project";
  std::string program_name = "k.cu";
  std::vector<int64_t> mtimes = {1700000000123456789, -5};

  Digest Key() const {
    return ComputePlacedCompileKey(
        {place_free, working_directory, program_name, mtimes});
  }
};

// Computed independently, as GoldenValue's.
TEST(PlacedCompileKey, GoldenValue) {
  EXPECT_EQ(PlacedFields().Key().Hex(),
            "77cae34d739238cbf51de849dd8acb65dd07c193e553d08a9cb70f4d8cca28d8");
}

// The name's key: one per program name, never a place-free key nor another
// name's.
TEST(NamedCompileKey, EachNameHasItsOwnKey) {
  const Digest free = Fields().Key();
  EXPECT_EQ(ComputeNamedCompileKey(free, "P:k.cu"),
            ComputeNamedCompileKey(free, "P:k.cu"));
  EXPECT_NE(ComputeNamedCompileKey(free, "P:k.cu"),
            ComputeNamedCompileKey(free, "P:s.cu"));
  EXPECT_NE(ComputeNamedCompileKey(free, "P:k.cu"), free);
  Fields other;
  other.source += " ";
  EXPECT_NE(ComputeNamedCompileKey(free, "P:k.cu"),
            ComputeNamedCompileKey(other.Key(), "P:k.cu"));
}

TEST(PlacedCompileKey, EveryPartOfThePlaceChangesTheKey) {
  const Digest base = PlacedFields().Key();
  EXPECT_NE(base, PlacedFields().place_free);
  const std::vector<std::pair<const char*, std::function<void(PlacedFields&)>>>
      edits = {
          {"place-free key",
           [](PlacedFields& f) {
             Fields other;
             other.source += " ";
             f.place_free = other.Key();
           }},
          {"working directory",
           [](PlacedFields& f) { f.working_directory = "/home/ada"; }},
          {"no working directory",
           [](PlacedFields& f) { f.working_directory.clear(); }},
          {"program name",
           [](PlacedFields& f) { f.program_name = "/tmp/x/k.cu"; }},
          {"a file's time", [](PlacedFields& f) { ++f.mtimes[1]; }},
          {"a file more", [](PlacedFields& f) { f.mtimes.push_back(0); }},
          {"times in another order",
           [](PlacedFields& f) { std::swap(f.mtimes[0], f.mtimes[1]); }},
      };
  for (const auto& [what, edit] : edits) {
    PlacedFields f;
    edit(f);
    EXPECT_NE(f.Key(), base) << what;
  }
}

TEST(PlacedCompileKey, TheWorkingDirectoryAloneKeysOnlyIt) {
  const PlacedFields f;
  auto only = [&](std::string_view cwd, std::string_view name,
                  std::vector<int64_t> mtimes) {
    return ComputePlacedCompileKey({f.place_free, cwd, name, mtimes, true});
  };
  const Digest base = only(f.working_directory, f.program_name, f.mtimes);
  EXPECT_NE(base, f.Key());
  EXPECT_EQ(only(f.working_directory, "/tmp/other/k.cu", {7}), base);
  EXPECT_NE(only("/home/bob", f.program_name, f.mtimes), base);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

struct LinkFields {
  std::string fingerprint = std::string(32, 'a');
  ObjectKind target = ObjectKind::kCubin;
  std::vector<std::string> options = {"-arch=sm_90", "-lto"};
  std::vector<std::pair<ObjectKind, Digest>> inputs = {
      {ObjectKind::kLtoir, Digest::Of("a")},
      {ObjectKind::kLtoir, Digest::Of("b")}};

  Digest Key() const {
    return ComputeLinkKey({fingerprint, target, options, inputs});
  }
};

TEST(LinkKey, EveryFieldAndTheInputOrderChangeTheKey) {
  const Digest base = LinkFields().Key();
  EXPECT_EQ(LinkFields().Key(), base);
  const std::vector<std::pair<const char*, std::function<void(LinkFields&)>>>
      edits = {
          {"input order",
           [](LinkFields& f) { std::swap(f.inputs[0], f.inputs[1]); }},
          {"input kind",
           [](LinkFields& f) { f.inputs[0].first = ObjectKind::kPtx; }},
          {"input content",
           [](LinkFields& f) { f.inputs[1].second = Digest::Of("c"); }},
          {"input added",
           [](LinkFields& f) { f.inputs.push_back(f.inputs[0]); }},
          {"option", [](LinkFields& f) { f.options.push_back("-O3"); }},
          {"arch", [](LinkFields& f) { f.options[0] = "-arch=sm_80"; }},
          {"target", [](LinkFields& f) { f.target = ObjectKind::kPtx; }},
          {"toolchain", [](LinkFields& f) { f.fingerprint[3] = 'z'; }},
      };
  for (const auto& [what, edit] : edits) {
    LinkFields f;
    edit(f);
    EXPECT_NE(f.Key(), base) << what;
  }
}

TEST(LinkKey, NeverEqualsACompileKeyOfTheSameBytes) {
  // The request kind is the second field of every key.
  CompileKeyInput compile;
  compile.toolchain_fingerprint = std::string(32, 'a');
  LinkKeyInput link;
  link.toolchain_fingerprint = compile.toolchain_fingerprint;
  EXPECT_NE(ComputeCompileKey(compile), ComputeLinkKey(link));
}

// An as-called link keyed without its inputs' names: the same for any
// names, never the key with names, and still changed by everything else.
TEST(AsCalledLinkKey, NamesAreLeftOutOnlyWhenAsked) {
  const std::string fingerprint(32, 'f');
  const std::vector<std::string> options = {"-arch=sm_90", "-lto"};
  auto key = [&](const std::string& first_name, bool names_keyed,
                 const Digest& first = Digest::Of("a"), bool complete = true) {
    const std::vector<AsCalledLinkKeyInput::Input> inputs = {
        {ObjectKind::kLtoir, first, first_name, false, {}},
        {ObjectKind::kLtoir, Digest::Of("b"), "b.ltoir", false, {}}};
    return ComputeAsCalledLinkKey({.toolchain_fingerprint = fingerprint,
                                   .options = options,
                                   .inputs = inputs,
                                   .complete = complete,
                                   .names_keyed = names_keyed});
  };
  EXPECT_EQ(key("a.ltoir", false), key("/tmp/tmpq/other.ltoir", false));
  // The extension stays in it (what nvJitLink makes of an input may
  // follow it).
  EXPECT_NE(key("a.ltoir", false), key("a.o", false));
  EXPECT_EQ(key("a", false), key("/tmp/x.y/b", false));
  EXPECT_NE(key("a.ltoir", true), key("/tmp/tmpq/other.o", true));
  EXPECT_NE(key("a.ltoir", false), key("a.ltoir", true));
  EXPECT_NE(key("a.ltoir", false, Digest::Of("c")), key("a.ltoir", false));
  EXPECT_NE(key("a.ltoir", false, Digest::Of("a"), false),
            key("a.ltoir", false));
  // With names, as before this key existed (records keep their keys).
  AsCalledLinkKeyInput::Input one{
      ObjectKind::kPtx, Digest::Of("p"), "p.ptx", false, {}};
  EXPECT_EQ(ComputeAsCalledLinkKey({.toolchain_fingerprint = fingerprint,
                                    .options = {},
                                    .inputs = std::span(&one, 1)})
                .Hex(),
            ComputeAsCalledLinkKey({.toolchain_fingerprint = fingerprint,
                                    .options = {},
                                    .inputs = std::span(&one, 1),
                                    .complete = false,
                                    .names_keyed = true})
                .Hex());
}

// PTX naming source files: what the caller's stat says of each is in the
// key (nvJitLink writes it into the cubin); an input that names none keys
// as it always did.
TEST(AsCalledLinkKey, TheStatsOfTheSourcesAPtxInputNamesAreInTheKey) {
  const std::string fingerprint(32, 'f');
  auto key = [&](std::vector<SourceStatKey> sources) {
    AsCalledLinkKeyInput::Input one{ObjectKind::kPtx, Digest::Of("p"), "p.ptx",
                                    false, sources};
    return ComputeAsCalledLinkKey({.toolchain_fingerprint = fingerprint,
                                   .options = {},
                                   .inputs = std::span(&one, 1)});
  };
  const SourceStatKey source{"/home/ada/k.py", true, 120, 1'700'000'000'000};
  EXPECT_EQ(key({source}), key({source}));
  EXPECT_NE(key({source}), key({}));
  SourceStatKey other = source;
  other.mtime_ns += 1'000'000'000;
  EXPECT_NE(key({source}), key({other}));
  other = source;
  other.size = 121;
  EXPECT_NE(key({source}), key({other}));
  other = source;
  other.exists = false;
  EXPECT_NE(key({source}), key({other}));
  other = source;
  other.path = "/home/bob/k.py";
  EXPECT_NE(key({source}), key({other}));
  AsCalledLinkKeyInput::Input plain{
      ObjectKind::kPtx, Digest::Of("p"), "p.ptx", false, {}};
  EXPECT_EQ(key({}),
            ComputeAsCalledLinkKey({.toolchain_fingerprint = fingerprint,
                                    .options = {},
                                    .inputs = std::span(&plain, 1)}));
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// A libNVVM program's key: every call, in order, and the library.
struct NvvmFields {
  std::string library = std::string(32, 'n');
  struct Call {
    int kind;
    std::string name;
    bool unnamed;
    std::string module;  // raw digest
    std::vector<std::string> options;
  };
  std::vector<Call> calls = {
      {1, "", true, std::string(Digest::Of("ir").AsBytes()), {}},
      {4, "", false, "", {"-opt=3", "-arch=compute_90a"}},
      {2, "", true, std::string(Digest::Of("libdevice").AsBytes()), {}},
      {3, "", false, "", {"-opt=3", "-arch=compute_90a"}}};
  Digest Key() const {
    std::vector<NvvmKeyInput::Call> in;
    for (const Call& c : calls) {
      in.push_back({c.kind, c.name, c.unnamed, c.module, c.options});
    }
    return ComputeNvvmKey({library, in});
  }
};

TEST(NvvmKey, EveryCallAndTheirOrderChangeTheKey) {
  const Digest base = NvvmFields().Key();
  EXPECT_EQ(NvvmFields().Key(), base);
  const std::vector<std::pair<const char*, std::function<void(NvvmFields&)>>>
      edits = {
          {"library", [](NvvmFields& f) { f.library[0] = 'm'; }},
          {"module bytes",
           [](NvvmFields& f) {
             f.calls[0].module = std::string(Digest::Of("ir2").AsBytes());
           }},
          {"named (\"\", not NULL)",
           [](NvvmFields& f) { f.calls[0].unnamed = false; }},
          {"a name",
           [](NvvmFields& f) {
             f.calls[0].unnamed = false;
             f.calls[0].name = "m";
           }},
          {"lazy, not eager", [](NvvmFields& f) { f.calls[2].kind = 1; }},
          {"no verify",
           [](NvvmFields& f) { f.calls.erase(f.calls.begin() + 1); }},
          {"verify, not compile", [](NvvmFields& f) { f.calls[3].kind = 4; }},
          {"an option",
           [](NvvmFields& f) { f.calls[3].options.push_back("-gen-lto"); }},
          {"option order",
           [](NvvmFields& f) {
             std::swap(f.calls[3].options[0], f.calls[3].options[1]);
           }},
          {"the verify's options",
           [](NvvmFields& f) { f.calls[1].options.pop_back(); }},
          {"module order",
           [](NvvmFields& f) { std::swap(f.calls[0], f.calls[2]); }},
      };
  for (const auto& [what, edit] : edits) {
    NvvmFields f;
    edit(f);
    EXPECT_NE(f.Key(), base) << what;
  }
}

}  // namespace
}  // namespace jitcache
