#ifndef JITCACHE_TESTS_INTEGRATION_NVRTC_ORACLE_H_
#define JITCACHE_TESTS_INTEGRATION_NVRTC_ORACLE_H_

// Running the NVRTC corpus (nvrtc_corpus.h) through tests/testing/
// nvrtc_case.c, with the real NVRTC or with jitcache's libnvrtc.so.13 in
// front, and comparing what a caller observes.
#include <string>
#include <vector>

namespace jitcache::testing {

// What differs between two runs of the real NVRTC itself: the digits
// it writes into the names of internal-linkage symbols and into the
// directory of -pch files, and the times -time and -Xptxas -v report (the
// log of a cached compile keeps the times of the compile that ran).
std::string WithoutRunNoise(std::string text);

// "" when the oracle's result file `real` and ours match (apart from run
// noise); otherwise where they first differ, with the text around it.
std::string FirstDifference(const std::string& real_path,
                            const std::string& ours_path);

// Each of `ids` of `cases` in a process of its own, two at a time, with
// `env` (an /usr/bin/env command line; empty: the real NVRTC alone).
// "" when every one ran; otherwise what those that did not printed.
std::string RunEachCase(const std::vector<std::string>& env,
                        const std::string& cases, const std::string& out,
                        const std::vector<std::string>& ids);

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_INTEGRATION_NVRTC_ORACLE_H_
