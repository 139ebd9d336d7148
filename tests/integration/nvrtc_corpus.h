#ifndef JITCACHE_TESTS_INTEGRATION_NVRTC_CORPUS_H_
#define JITCACHE_TESTS_INTEGRATION_NVRTC_CORPUS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::testing {

// One compile of the differential corpus, as a caller of NVRTC makes it.
struct Variant {
  std::string id;                   // unique; names its result file
  std::optional<std::string> name;  // nullopt: NULL, NVRTC's default name
  std::string source;
  std::vector<std::pair<std::string, std::string>> headers;  // name, text
  std::vector<std::string> options;
  // A second compile of the same program with these options, when any.
  std::vector<std::string> again;
  std::vector<std::string> exprs;
  std::string dir;  // working directory; "" for the corpus root

  std::string Describe() const;
};

// The corpus, with the files its variants read written under `root`
// (which becomes their working directory unless a variant names another).
// The variants are the same in every `generation`; the files they read
// hold other contents in each. With `shared_dir`, variants also read
// headers there through an absolute -I (a directory outside the place).
std::vector<Variant> BuildCorpus(const std::string& root, int generation = 0,
                                 const std::string& shared_dir = "");

// The corpus as CuPy names its programs: each named program renamed to its
// base name in `temp_dir` (a fresh temporary directory), where its source
// is written first.
void NameAfterTemporaryFiles(std::vector<Variant>& corpus,
                             const std::string& temp_dir);

// Every named program under another base name with the same extension, as
// a code generator or a random temporary name gives: its file copied to the
// new name where the old one named a file (a relative name from `root`, or
// the variant's directory under it).
void RenamePrograms(std::vector<Variant>& corpus, const std::string& root);

// The case file tests/testing/nvrtc_case.c reads; `reversed`: last first.
// Sources and headers go to files beside it.
void WriteCaseFile(const std::vector<Variant>& corpus, const std::string& path,
                   bool reversed);

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_INTEGRATION_NVRTC_CORPUS_H_
