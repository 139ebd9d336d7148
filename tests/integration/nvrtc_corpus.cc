#include "tests/integration/nvrtc_corpus.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace jitcache::testing {
namespace {

// Loads through b twice: -restrict makes them ld.global.nc, and NVRTC used
// to carry that into the next compile of the process.
constexpr char kRestrict[] =
    "extern \"C\" __global__ void rs(float* a, float* b, int n) {\n"
    "  for (int i = 0; i < n; ++i) a[i] += b[i] * b[i + 1];\n"
    "}\n";

// Arithmetic in __float128, which device code has only with
// -device-float128 (from sm_100 on).
constexpr char kFloat128[] =
    "extern \"C\" __global__ void q(double* x) {\n"
    "  __float128 v = x[threadIdx.x];\n"
    "  v = v * v + 1;\n"
    "  x[threadIdx.x] = (double)v;\n"
    "}\n";

// A template, a name expression, and __FILE__ in the object.
constexpr char kTemplate[] =
    "extern \"C\" __device__ const char kWhere[] = __FILE__;\n"
    "template <typename T, int N> __global__ void scale(T* x, T a) {\n"
    "  for (int i = 0; i < N; ++i) x[threadIdx.x * N + i] *= a;\n"
    "}\n";

// A warning: the log names the program.
constexpr char kWarning[] =
    "__global__ void w(int* x) { int unused; x[0] = 1; }\n";

// An error: the log names the program and the line.
constexpr char kError[] = "__global__ void e(int* x) { x[0] = nope; }\n";

std::string CudaHome() {
  const char* cuda = std::getenv("CUDA_HOME");
  return cuda != nullptr && *cuda != '\0' ? cuda : "/usr/local/cuda";
}

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class Builder {
 public:
  explicit Builder(std::string root) : root_(std::move(root)) {}

  Variant& Add(const std::string& id, const std::string& source,
               std::vector<std::string> options) {
    Variant v;
    v.id = id;
    v.name = "corpus.cu";
    v.source = source;
    v.options = std::move(options);
    corpus_.push_back(std::move(v));
    return corpus_.back();
  }

  // One variant per spelling, each with -arch=sm_90 first unless it is
  // an architecture spelling itself.
  void Spellings(const std::string& group, const std::string& source,
                 const std::vector<std::vector<std::string>>& spellings,
                 bool with_arch = true) {
    int n = 0;
    for (const auto& spelling : spellings) {
      std::vector<std::string> options;
      if (with_arch) options.push_back("-arch=sm_90");
      options.insert(options.end(), spelling.begin(), spelling.end());
      Variant& v = Add(absl::StrCat(group, "-", n++), source, options);
      if (source == kTemplate) v.exprs = {"scale<float, 4>"};
    }
  }

  void File(const std::string& rel, const std::string& text) {
    Write(std::filesystem::path(root_) / rel, text);
  }
  const std::string& root() const { return root_; }
  std::vector<Variant> Take() { return std::move(corpus_); }

 private:
  std::string root_;
  std::vector<Variant> corpus_;
};

// The same option (or flag) in every spelling a user might try: NVRTC
// decides which it takes; the cache must answer each the way NVRTC does.
void OptionSpellings(Builder& b) {
  b.Spellings("base", kRestrict, {{}});
  b.Spellings("restrict", kRestrict,
              {{"-restrict"}, {"--restrict"}, {"-restrict", "-restrict"}});
  b.Spellings("arch", kRestrict,
              {{"-arch=sm_90"},
               {"-arch", "sm_90"},
               {"--gpu-architecture=sm_90"},
               {"--gpu-architecture", "sm_90"},
               {"-gpu-architecture=sm_90"},
               {"--arch=sm_90"},
               {"-arch=sm_090"},
               {"-arch=SM_90"},
               {"-arch=compute_90"},
               {"-arch=sm_90a"},
               {"-arch=sm_80", "-arch=sm_90"},
               {"-arch=sm_99"},
               {"-arch=native"},
               {}},
              false);
  b.Spellings("G", kTemplate,
              {{"-G"}, {"--G"}, {"--device-debug"}, {"-device-debug"}});
  b.Spellings("lineinfo", kTemplate,
              {{"-lineinfo"},
               {"--generate-line-info"},
               {"-generate-line-info"},
               {"--lineinfo"}});
  b.Spellings("ftz", kRestrict,
              {{"-ftz=true"},
               {"--ftz=true"},
               {"-ftz=TRUE"},
               {"-ftz=1"},
               {"-ftz", "true"},
               {"-ftz=false"},
               {"--ftz", "false"}});
  b.Spellings("std", kTemplate,
              {{"-std=c++17"},
               {"--std=c++17"},
               {"-std=C++17"},
               {"-std", "c++17"},
               {"--std", "c++17"},
               {"-std=c++20"},
               {"-std=c++03"}});
  b.Spellings("dopt", kRestrict,
              {{"-dopt=on"}, {"-dopt=ON"}, {"--dopt=on"}, {"-dopt", "on"}});
  b.Spellings("maxrreg", kRestrict,
              {{"-maxrregcount=32"},
               {"-maxrregcount=032"},
               {"-maxrregcount=+32"},
               {"-maxrregcount= 32"},
               {"--maxrregcount=32"},
               {"-maxrregcount", "32"},
               {"-maxrregcount=0x20"},
               {"-maxrregcount=26"}});
  b.Spellings("define", kTemplate,
              {{"-DFRESH=1"},
               {"-D", "FRESH=1"},
               {"--define-macro=FRESH=1"},
               {"--define-macro", "FRESH=1"},
               {"-define-macro=FRESH=1"},
               {"--D", "FRESH=1"},
               {"-DFRESH"},
               {"-DFRESH=1", "-UFRESH"},
               {"-UFRESH", "-DFRESH=1"},
               {"-DFRESH=\"caf\xe9\""}});
  b.Spellings(
      "dlto", kRestrict,
      {{"-dlto"}, {"--dlto"}, {"--dlink-time-opt"}, {"-dlink-time-opt"}});
  // OptiX IR and nothing else (PTX "", no cubin, no LTO-IR); with -dlto,
  // or given a value, NVRTC refuses it.
  b.Spellings("optix-ir", kTemplate,
              {{"-optix-ir"},
               {"--optix-ir"},
               {"-optix-ir", "-rdc=true"},
               {"-optix-ir", "-lineinfo"},
               {"-optix-ir", "-dlto"},
               {"-optix-ir=true"}});
  b.Spellings("optix-ir-virtual", kRestrict,
              {{"-arch=compute_90", "-optix-ir"}, {"-optix-ir"}},
              /*with_arch=*/false);
  b.Spellings("rdc", kTemplate,
              {{"-rdc=true"},
               {"--relocatable-device-code=true"},
               {"-rdc", "true"},
               {"-rdc=TRUE"},
               {"-dc"},
               {"--device-c"}});
  b.Spellings("fastmath", kRestrict,
              {{"-use_fast_math"},
               {"--use_fast_math"},
               {"-use-fast-math"},
               {"--fmad=false"},
               {"-prec-div=false"},
               {"-prec-sqrt=false"}});
  b.Spellings("optinfo", kTemplate,
              {{"-opt-info=inline"}, {"--optimization-info=inline"}});
  b.Spellings("misc", kWarning,
              {{"-w"},
               {"--disable-warnings"},
               {"-err-no"},
               {"--display-error-number"},
               {"-no-err-no"},
               {"--diag-suppress=177"},
               {"-diag-suppress=177"},
               {"--diag-error=177"},
               {"-Xptxas=-v"},
               {"-Xptxas", "-v"},
               {"--ptxas-options=-O1"},
               {"-default-device"},
               {"-extra-device-vectorization"},
               {"-device-int128"},
               {"--split-compile=2"},
               {"-fdevice-syntax-only"},
               {"--minimal"},
               {"-Ofast-compile=max"},
               // NVRTC 13's options the daemon takes since issue 36, in
               // the spellings NVRTC takes and some it refuses.
               {"-Ofc=max"},
               {"-Ofc=0"},
               {"--Ofc=max"},
               {"-Ofc=max", "-Ofc=0"},
               {"-frandom-seed=5"},
               {"--frandom-seed=5"},
               {"-frandom-seed=5", "-frandom-seed=6"},
               {"-fassociative-math"},
               {"--jump-table-density=50"},
               {"--jump-table-density=500"},
               {"--modify-stack-limit=false"},
               {"-modify-stack-limit=true"},
               {"-no-cache"},
               {"--no-cache"},
               {"--no-lineinfo-inlined-at", "-lineinfo"},
               // Their other spellings: the values NVRTC lists, a value as
               // the next word, the other dash, a value it must refuse.
               {"-Ofc=min"},
               {"-Ofc=mid"},
               {"-Ofc", "max"},
               {"-frandom-seed", "5"},
               {"--fassociative-math"},
               {"-jump-table-density=50"},
               {"--jump-table-density", "50"},
               {"--jump-table-density=dense"},
               {"--modify-stack-limit", "false"},
               {"--no-lineinfo-inlined-at"},
               {"-no-lineinfo-inlined-at", "-lineinfo"},
               {"-device-float128"},
               {"-no-source-include"},
               {"--brief-diagnostics=true"},
               {"-builtin-move-forward=false"},
               {"--not-an-option"},
               {"-time=-"},
               {"-pch"},
               {"", "-w"}});
  b.Spellings("error", kError, {{}, {"-w"}, {"-err-no"}});
  // -device-float128 is taken from sm_100 on (NVRTC refuses it for
  // sm_90, above); these compile a kernel without __float128.
  b.Spellings("float128", kRestrict,
              {{"-arch=sm_100", "-device-float128"},
               {"-arch=sm_100a", "--device-float128"}},
              /*with_arch=*/false);
  // A kernel that computes in __float128, with and without the option.
  b.Spellings("float128-used", kFloat128,
              {{"-arch=sm_100", "-device-float128"},
               {"-arch=sm_100a", "--device-float128"},
               {"-arch=sm_100"}},
              /*with_arch=*/false);
}

// The state NVRTC keeps between compiles of one process: a variant that
// sets it, then the base again (and the same in reverse order).
void CompilerState(Builder& b) {
  b.Spellings(
      "state", kRestrict,
      {{"-restrict"}, {"-DFRESH=1"}, {"-opt-info=inline"}, {"-DFRESH=2"}});
  // One program compiled twice, by the real NVRTC then the daemon (-time
  // stays with the real one) and the other way: the second compile's
  // answers replace the first's everywhere.
  b.Add("again-0", kWarning, {"-arch=sm_90", "-time=-"}).again = {"-arch=sm_90",
                                                                  "-w"};
  b.Add("again-1", kWarning, {"-arch=sm_90", "-w"}).again = {"-arch=sm_90",
                                                             "-time=-"};
  b.Add("again-2", kError, {"-arch=sm_90", "-time=-"}).again = {
      "-arch=compute_90", "-DNOPE=1"};
}

// Options that only tune precompiled headers, without one made or used
// (no -pch, -create-pch or -use-pch): the answer is the plain compile's,
// and the PCH queries say no PCH was attempted.
void PchModifiers(Builder& b) {
  b.Spellings("pch-modifier", kWarning,
              {{"--pch-verbose=true"},
               {"-pch-verbose=true"},
               {"--pch-verbose", "true"},
               {"--pch-messages=false"},
               {"-pch-messages=true"},
               {"--instantiate-templates-in-pch=true"},
               {"--pch-verbose"},
               {"--pch-verbose=maybe"},
               {"--pch-verbose=true", "--pch-messages=false",
                "--instantiate-templates-in-pch=false"}});
}

// Program names: NULL, empty, relative, absolute.
void ProgramNames(Builder& b) {
  int n = 0;
  for (std::optional<std::string> name :
       {std::optional<std::string>(), std::optional<std::string>(""),
        std::optional<std::string>("kern.cu"),
        std::optional<std::string>("dir/kern.cu"),
        std::optional<std::string>(b.root() + "/abs/kern.cu"),
        // Not UTF-8: NVRTC takes and gives bytes.
        std::optional<std::string>("caf\xe9.cu")}) {
    for (const char* source : {kTemplate, kWarning, kError}) {
      Variant& v = b.Add(absl::StrCat("name-", n++), source,
                         {"-arch=sm_90", "-lineinfo"});
      v.name = name;
      if (source == kTemplate) v.exprs = {"scale<float, 4>"};
    }
  }
  // Duplicate in-memory header names; a header shadowing a file.
  Variant& dup =
      b.Add("headers-dup", "#include \"h.h\"\n" + std::string(kRestrict),
            {"-arch=sm_90"});
  dup.headers = {{"h.h", "#define A 1\n"}, {"h.h", "#define A 2\n"}};
  b.File("h.h", "#error the in-memory header comes first\n");
  Variant& shadow =
      b.Add("headers-shadow", "#include \"h.h\"\n" + std::string(kRestrict),
            {"-arch=sm_90"});
  shadow.headers = {{"h.h", "#define A 1\n"}};
}

// A kernel whose bytes show which header it read (FA_VALUE) and, through
// kHeaderFile, by what name.
constexpr char kUsesHeader[] =
    "extern \"C\" __global__ void fa(int* x) { x[0] = FA_VALUE; }\n";

// A header: its value and its name (__FILE__) end up in the object.
std::string Header(int id, int generation) {
  return absl::StrCat("#define FA_VALUE ", id * 10 + generation,
                      "\nextern \"C\" __device__ const char kHeaderFile[] = "
                      "__FILE__;\n");
}

// Every way NVRTC reads a file of the caller's: beside the program, in the
// working directory, by absolute path, -include, __has_include, -I in
// every spelling, through symbolic links, directives written unusually;
// and working directories that the output records. The headers' contents
// depend on `generation`: a second generation shows a stale hit.
void FileAccess(Builder& b, int generation) {
  const std::string& root = b.root();
  int n = 0;
  auto add = [&](const std::string& tag, const std::string& source,
                 std::vector<std::string> options) -> Variant& {
    options.insert(options.begin(), "-arch=sm_90");
    return b.Add(absl::StrCat("file-", tag), source, std::move(options));
  };
  auto header = [&](const std::string& rel) {
    b.File(rel, Header(++n, generation));
  };
  // In-memory headers whose names name files too: NVRTC compiles the text
  // it was given but stats the file, and with line information the file's
  // time and size are in the object (for a header that holds code). The
  // files' bytes stay the same in every generation; their times do not
  // (each is written anew).
  constexpr char kShadowingHeader[] =
      "__device__ __noinline__ int fa_value(int* x) { return x[1] + 7; }\n"
      "#define FA_VALUE fa_value(x)\n";
  b.File("fa_shadowed.h", "#error the in-memory header comes first\n");
  b.File("memabs/fa_shadowed.h", "#error the in-memory header comes first\n");
  for (const char* lines : {"-lineinfo", "-G"}) {
    add(absl::StrCat("shadowed", lines),
        "#include \"fa_shadowed.h\"\n" + std::string(kUsesHeader), {lines})
        .headers = {{"fa_shadowed.h", kShadowingHeader}};
  }
  const std::string absolute = root + "/memabs/fa_shadowed.h";
  add("shadowed-absolute",
      "#include \"" + absolute + "\"\n" + std::string(kUsesHeader),
      {"-lineinfo"})
      .headers = {{absolute, kShadowingHeader}};
  // Quoted includes: beside the program (relative and absolute names), in
  // the working directory, by absolute path.
  header("fa_cwd.h");
  add("cwd", "#include \"fa_cwd.h\"\n" + std::string(kUsesHeader), {}).name =
      "kern.cu";
  header("sub/fa_beside.h");
  add("beside", "#include \"fa_beside.h\"\n" + std::string(kUsesHeader), {})
      .name = "sub/kern.cu";
  add("beside-abs", "#include \"fa_beside.h\"\n" + std::string(kUsesHeader), {})
      .name = root + "/sub/kern.cu";
  header("abs/fa_abs.h");
  add("abs",
      "#include \"" + root + "/abs/fa_abs.h\"\n" + std::string(kUsesHeader),
      {});
  // A program in another working directory, named relative to it.
  header("wd1/fa_wd.h");
  Variant& wd = add("wd", "#include \"fa_wd.h\"\n" + std::string(kUsesHeader),
                    {"-lineinfo"});
  wd.name = "kern.cu";
  wd.dir = "wd1";
  Variant& up =
      add("wd-up", "#include \"fa_beside.h\"\n" + std::string(kUsesHeader),
          {"-lineinfo"});
  up.name = "../sub/kern.cu";
  up.dir = "wd1";
  // -include, relative and absolute, in each spelling.
  header("fa_pre.h");
  add("pre", kUsesHeader, {"-include", "fa_pre.h"});
  add("pre-glued", kUsesHeader, {"-includefa_pre.h"});
  add("pre-long", kUsesHeader, {"--pre-include=fa_pre.h"});
  add("pre-abs", kUsesHeader, {"-include", root + "/fa_pre.h"});
  // __has_include, of a file that is there and of one that is not.
  header("fa_has.h");
  add("has",
      "#if __has_include(\"fa_has.h\")\n#include \"fa_has.h\"\n#endif\n"
      "#if __has_include(\"fa_not_there.h\")\n#error found\n#endif\n" +
          std::string(kUsesHeader),
      {});
  // -I in every spelling: the name NVRTC gives the header is the spelled
  // directory joined to the include's name.
  header("inc/fa_inc.h");
  const std::string base = std::filesystem::path(root).filename().string();
  const std::string uses_inc =
      "#include <fa_inc.h>\n" + std::string(kUsesHeader);
  add("I", uses_inc, {"-Iinc"});
  add("I-space", uses_inc, {"-I", "inc"});
  add("I-dot", uses_inc, {"-I./inc"});
  add("I-slash", uses_inc, {"-Iinc/"});
  add("I-up", uses_inc, {"-I../" + base + "/inc"});
  add("I-abs", uses_inc, {"-I" + root + "/inc"});
  add("I-abs-dot", uses_inc, {"-I" + root + "/./inc"});
  add("I-long", uses_inc, {"--include-path=inc"});
  std::filesystem::create_directories(root + "/empty");
  add("I-through-empty", uses_inc, {"-Iempty/../inc"});
  add("I-quoted", "#include \"fa_inc.h\"\n" + std::string(kUsesHeader),
      {"-Iinc"});
  // One header including another beside it.
  b.File("inc/nest/fa_outer.h", "#include \"fa_inner.h\"\n");
  header("inc/nest/fa_inner.h");
  add("nested", "#include <nest/fa_outer.h>\n" + std::string(kUsesHeader),
      {"-Iinc"});
  // A header NVRTC finds nowhere (in the second generation it is there),
  // and one behind a symbolic link that leads to itself.
  if (generation > 0) header("fa_missing.h");
  add("missing", "#include \"fa_missing.h\"\n" + std::string(kUsesHeader), {});
  std::error_code loop_ec;
  std::filesystem::create_directory_symlink(root + "/loop", root + "/loop",
                                            loop_ec);
  add("loop", "#include <fa_loop.h>\n" + std::string(kUsesHeader), {"-Iloop"});
  // Directives written as few scanners expect.
  header("fa_digraph.h");
  add("digraph", "%:include \"fa_digraph.h\"\n" + std::string(kUsesHeader), {});
  header("fa_comment.h");
  add("comment",
      "/* first */ # include \"fa_comment.h\"\n" + std::string(kUsesHeader),
      {});
  header("fa_inner_comment.h");
  add("inner-comment",
      "#/**/include \"fa_inner_comment.h\"\n" + std::string(kUsesHeader), {});
  header("fa_continued.h");
  add("continued",
      "#inc\\\nlude \"fa_continued.h\"\n" + std::string(kUsesHeader), {});
  header("fa_macro.h");
  add("macro",
      "#define FA_HEADER \"fa_macro.h\"\n#include FA_HEADER\n" +
          std::string(kUsesHeader),
      {});
  // Symbolic links: a linked directory, and one followed by "..".
  header("deep/a/fa_up.h");
  header("fa_up.h");
  std::error_code ec;
  std::filesystem::create_directory_symlink(root + "/inc", root + "/linked",
                                            ec);
  std::filesystem::create_directories(root + "/deep/a/b");
  std::filesystem::create_directory_symlink(root + "/deep/a/b", root + "/jump",
                                            ec);
  add("link", uses_inc, {"-Ilinked"});
  add("link-up", "#include <fa_up.h>\n" + std::string(kUsesHeader),
      {"-Ijump/.."});
  // Outputs that record the working directory, from two directories.
  for (const char* dir : {"wd1", "wd2"}) {
    std::filesystem::create_directories(root + "/" + dir);
    for (const char* option : {"-dlto", "-G", "-lineinfo"}) {
      Variant& v =
          add(absl::StrCat("record-", dir, option), kTemplate, {option});
      v.name = "kern.cu";
      v.dir = dir;
      v.exprs = {"scale<float, 4>"};
    }
  }
}

// Where the place shows, or might: line information of code in headers
// beside the program and in the working directory (NVRTC writes their
// times and sizes), LTO-IR, #line, __FILE__, __BASE_FILE__, the file a
// source_location names (__builtin_FILE), a failing compile's log, and
// CUB; with `shared`, headers in a directory outside the place through an
// absolute -I, whose times the test changes between places.
void PlaceVariants(Builder& b, int generation, const std::string& shared) {
  const std::string value = absl::StrCat(generation + 7);
  b.File("pl/pl_beside.h",
         "__device__ int pl_add(int a) { return a + " + value + "; }\n");
  b.File("pl_cwd.h",
         "__device__ int pl_mul(int a) { return a * " + value + "; }\n");
  const std::string beside =
      "#include \"pl_beside.h\"\n"
      "extern \"C\" __global__ void pl(int* x) { x[0] = pl_add(x[1]); }\n";
  const std::string in_cwd =
      "#include \"pl_cwd.h\"\n"
      "extern \"C\" __global__ void pc(int* x) { x[0] = pl_mul(x[1]); }\n";
  const std::vector<std::vector<std::string>> recording = {
      {},        {"-lineinfo"},       {"-G"},
      {"-dlto"}, {"-lineinfo", "-G"}, {"--generate-line-info"}};
  int n = 0;
  for (const auto& options : recording) {
    std::vector<std::string> with_arch = {"-arch=sm_90"};
    with_arch.insert(with_arch.end(), options.begin(), options.end());
    b.Add(absl::StrCat("place-beside-", n), beside, with_arch).name =
        "pl/kern.cu";
    b.Add(absl::StrCat("place-cwd-", n), in_cwd, with_arch).name = "kern.cu";
    ++n;
  }
  const std::vector<std::pair<std::string, std::string>> names_shown = {
      {"line", "#line 42 \"renamed.cu\"\n" + std::string(kTemplate)},
      {"base-file",
       "extern \"C\" __device__ const char kBase[] = __BASE_FILE__;\n" +
           std::string(kTemplate)},
      {"builtin-file",
       "extern \"C\" __global__ void bf(const char** p) {\n"
       "  *p = __builtin_FILE();\n}\n"},
      {"error-lineinfo", kError},
  };
  for (const auto& [tag, source] : names_shown) {
    for (const char* option : {"-lineinfo", "-w"}) {
      Variant& v = b.Add(absl::StrCat("place-", tag, option), source,
                         {"-arch=sm_90", option});
      v.name = "kern.cu";
      if (source.find("scale") != std::string::npos) {
        v.exprs = {"scale<float, 4>"};
      }
    }
  }
  Variant& cub =
      b.Add("place-cub",
            "#include <cub/block/block_reduce.cuh>\n"
            "template <int kThreads> __global__ void red(int* x) {\n"
            "  using R = cub::BlockReduce<int, kThreads>;\n"
            "  __shared__ typename R::TempStorage t;\n"
            "  int s = R(t).Sum(x[threadIdx.x]);\n"
            "  if (threadIdx.x == 0) x[0] = s;\n}\n",
            // PTX: NVRTC numbers CUB's internal-linkage symbols per process,
            // and a number of another length moves every offset of a cubin.
            {"-arch=compute_90", "-I" + CudaHome() + "/include/cccl"});
  cub.name = "kern.cu";
  cub.exprs = {"red<128>"};
  // The toolkit through a link of the place's own: an include directory
  // the front end must tell is the toolkit's (and remember so), in each
  // place, where the real NVRTC reads the same headers.
  std::error_code ec;
  std::filesystem::create_directory_symlink(CudaHome() + "/include/cccl",
                                            b.root() + "/tk", ec);
  const std::string cub_source = cub.source;  // Add may move `cub`
  Variant& linked =
      b.Add("place-cub-toolkit-link", cub_source, {"-arch=compute_90", "-Itk"});
  linked.name = "kern.cu";
  linked.exprs = {"red<128>"};
  if (shared.empty()) return;
  Write(std::filesystem::path(shared) / "pl_shared.h",
        "__device__ int pl_sub(int a) { return a - " + value + "; }\n");
  const std::string uses_shared =
      "#include <pl_shared.h>\n"
      "extern \"C\" __global__ void ps(int* x) { x[0] = pl_sub(x[1]); }\n";
  for (const char* option : {"-w", "-lineinfo", "-G"}) {
    b.Add(absl::StrCat("place-shared", option), uses_shared,
          {"-arch=sm_90", "-I" + shared, option})
        .name = "kern.cu";
  }
}

}  // namespace

void NameAfterTemporaryFiles(std::vector<Variant>& corpus,
                             const std::string& temp_dir) {
  for (Variant& v : corpus) {
    if (!v.name.has_value() || v.name->empty()) continue;
    const std::string base = std::filesystem::path(*v.name).filename().string();
    // One directory per variant, as CuPy makes one per program.
    const std::string path = temp_dir + "/" + v.id + "/" + base;
    Write(path, v.source);
    v.name = path;
  }
}

void RenamePrograms(std::vector<Variant>& corpus, const std::string& root) {
  for (Variant& v : corpus) {
    if (!v.name.has_value() || v.name->empty()) continue;
    const std::filesystem::path name(*v.name);
    const std::filesystem::path renamed =
        name.parent_path() /
        ("other_" + name.stem().string() + "_name" + name.extension().string());
    const std::filesystem::path from =
        std::filesystem::path(root) / v.dir / name;
    const std::filesystem::path to =
        std::filesystem::path(root) / v.dir / renamed;
    std::error_code ec;
    if (std::filesystem::is_regular_file(from, ec)) {
      std::filesystem::copy_file(
          from, to, std::filesystem::copy_options::overwrite_existing, ec);
    }
    v.name = renamed.string();
  }
}

std::string Variant::Describe() const {
  return absl::StrCat(
      "name ", name.has_value() ? "'" + *name + "'" : "NULL", ", options [",
      absl::StrJoin(options, " "), "]",
      again.empty() ? "" : " then [" + absl::StrJoin(again, " ") + "]",
      dir.empty() ? "" : ", in " + dir);
}

std::vector<Variant> BuildCorpus(const std::string& root, int generation,
                                 const std::string& shared_dir) {
  Builder b(root);
  CompilerState(b);
  OptionSpellings(b);
  PchModifiers(b);
  ProgramNames(b);
  FileAccess(b, generation);
  PlaceVariants(b, generation, shared_dir);
  return b.Take();
}

void WriteCaseFile(const std::vector<Variant>& corpus, const std::string& path,
                   bool reversed) {
  const std::filesystem::path dir =
      std::filesystem::path(path).parent_path() / "case-files";
  std::string text;
  std::vector<const Variant*> order;
  for (const Variant& v : corpus) order.push_back(&v);
  if (reversed) std::reverse(order.begin(), order.end());
  for (const Variant* v : order) {
    const std::filesystem::path source = dir / (v->id + ".cu");
    Write(source, v->source);
    absl::StrAppend(&text, "case ", v->id, "\n");
    if (v->name.has_value()) absl::StrAppend(&text, "name ", *v->name, "\n");
    absl::StrAppend(&text, "source ", source.string(), "\n");
    for (size_t i = 0; i < v->headers.size(); ++i) {
      const std::filesystem::path header = dir / absl::StrCat(v->id, ".h", i);
      Write(header, v->headers[i].second);
      absl::StrAppend(&text, "header ", v->headers[i].first, "\t",
                      header.string(), "\n");
    }
    for (const std::string& o : v->options)
      absl::StrAppend(&text, "opt ", o, "\n");
    for (const std::string& o : v->again)
      absl::StrAppend(&text, "again ", o, "\n");
    for (const std::string& e : v->exprs)
      absl::StrAppend(&text, "expr ", e, "\n");
    const std::string cwd = std::filesystem::path(path).parent_path().string();
    absl::StrAppend(&text, "chdir ", v->dir.empty() ? cwd : cwd + "/" + v->dir,
                    "\n");
    absl::StrAppend(&text, "end\n");
  }
  Write(path, text);
}

}  // namespace jitcache::testing
