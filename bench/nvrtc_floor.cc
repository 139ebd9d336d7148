// jitcache_nvrtc_floor: NVRTC's C API hit against its floor, the way an
// unmodified program sees it. It loads the NVRTC library it is given with
// dlopen and links nothing of jitcache's (nor Abseil, gRPC, protobuf), so
// that what a library loads is measured as a program pays for it.
//
//   jitcache_nvrtc_floor api LIB CASEFILE ITERS OPTION...
//       ITERS warm hits of the whole call sequence (create, add name
//       expressions, compile, CUBIN size, CUBIN, lowered names, destroy)
//       after one compile that primes the daemon; per step and in total.
//   jitcache_nvrtc_floor floor REQUEST_BYTES ANSWER_BYTES ITERS
//       The floor: a Unix-socket round trip to another process that
//       carries a request of REQUEST_BYTES and an answer of ANSWER_BYTES,
//       read into a buffer (one copy), as one ask of the daemon would.
//   jitcache_nvrtc_floor first LIB CASEFILE OPTION...
//       A fresh process: dlopen of LIB (what preloading it costs) and its
//       first hit (a new connection, the toolkit check, the include scan).
//   jitcache_nvrtc_floor loop LIB CASEFILE SECONDS OPTION...
//       Warm hits for SECONDS; prints how many.
//   jitcache_nvrtc_floor miss LIB CASEFILE COUNT SEED OPTION...
//       COUNT misses: the case's source under a first line no compile has
//       seen ("// SEED i"), each compiled by the daemon; the whole call
//       sequence's time.
// CASEFILE: the source, a line "--", then one name expression a line
// (`jitcache_bench case NAME`). Each prints one JSON object.
#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

struct Nvrtc {
  decltype(&nvrtcCreateProgram) create;
  decltype(&nvrtcAddNameExpression) add_name;
  decltype(&nvrtcCompileProgram) compile;
  decltype(&nvrtcGetCUBINSize) cubin_size;
  decltype(&nvrtcGetCUBIN) cubin;
  decltype(&nvrtcGetLoweredName) lowered;
  decltype(&nvrtcDestroyProgram) destroy;
};

bool Load(const char* path, Nvrtc* api) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return false;
  }
#define JC_SYM(field, name) \
  api->field = reinterpret_cast<decltype(api->field)>(dlsym(lib, #name));
  JC_SYM(create, nvrtcCreateProgram)
  JC_SYM(add_name, nvrtcAddNameExpression)
  JC_SYM(compile, nvrtcCompileProgram)
  JC_SYM(cubin_size, nvrtcGetCUBINSize)
  JC_SYM(cubin, nvrtcGetCUBIN)
  JC_SYM(lowered, nvrtcGetLoweredName)
  JC_SYM(destroy, nvrtcDestroyProgram)
#undef JC_SYM
  return api->create != nullptr && api->destroy != nullptr;
}

struct Case {
  std::string source;
  std::vector<std::string> names;
};

Case ReadCase(const char* path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  Case c;
  const size_t cut = text.find("\n--\n");
  c.source = text.substr(0, cut + 1);
  std::istringstream names(cut == std::string::npos ? ""
                                                    : text.substr(cut + 4));
  for (std::string line; std::getline(names, line);) {
    if (!line.empty()) c.names.push_back(line);
  }
  return c;
}

// The steps of one call sequence, timed.
enum Step { kCreate, kAdd, kCompile, kSize, kGet, kLowered, kDestroy, kSteps };
const char* const kStepNames[kSteps] = {"create",     "add_names", "compile",
                                        "cubin_size", "cubin",     "lowered",
                                        "destroy"};

// One sequence; its steps' times go to `us` (when given). False on any
// error.
bool Sequence(const Nvrtc& api, const Case& c,
              const std::vector<const char*>& options, std::string& out,
              double* us) {
  Clock::time_point t = Clock::now();
  auto lap = [&](Step s) {
    const Clock::time_point now = Clock::now();
    if (us != nullptr) us[s] = Us(now - t);
    t = now;
  };
  nvrtcProgram prog = nullptr;
  if (api.create(&prog, c.source.c_str(), "bench.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    return false;
  }
  lap(kCreate);
  for (const std::string& n : c.names) api.add_name(prog, n.c_str());
  lap(kAdd);
  const nvrtcResult compiled =
      api.compile(prog, static_cast<int>(options.size()), options.data());
  lap(kCompile);
  size_t size = 0;
  const bool sized =
      compiled == NVRTC_SUCCESS && api.cubin_size(prog, &size) == NVRTC_SUCCESS;
  lap(kSize);
  out.resize(size);
  const bool got = sized && api.cubin(prog, out.data()) == NVRTC_SUCCESS;
  lap(kGet);
  bool named = got;
  for (const std::string& n : c.names) {
    const char* lowered = nullptr;
    named = named && api.lowered(prog, n.c_str(), &lowered) == NVRTC_SUCCESS;
  }
  lap(kLowered);
  api.destroy(&prog);
  lap(kDestroy);
  return named;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

std::string Stats(const std::vector<double>& us) {
  char buffer[200];
  std::snprintf(buffer, sizeof(buffer),
                "{\"p50_us\": %.2f, \"p90_us\": %.2f, \"p99_us\": %.2f}",
                Percentile(us, 0.5), Percentile(us, 0.9), Percentile(us, 0.99));
  return buffer;
}

std::vector<const char*> OptionsFrom(int argc, char** argv, int first) {
  std::vector<const char*> options;
  for (int i = first; i < argc; ++i) options.push_back(argv[i]);
  return options;
}

int Api(const char* lib, const char* case_file, int iters,
        const std::vector<const char*>& options) {
  Nvrtc api;
  if (!Load(lib, &api)) return 1;
  const Case c = ReadCase(case_file);
  std::string out;
  if (!Sequence(api, c, options, out, nullptr)) {
    std::fprintf(stderr, "the priming compile failed\n");
    return 1;
  }
  std::vector<double> total;
  std::vector<std::vector<double>> steps(kSteps);
  for (int i = 0; i < iters; ++i) {
    double us[kSteps] = {};
    if (!Sequence(api, c, options, out, us)) return 1;
    double sum = 0;
    for (int s = 0; s < kSteps; ++s) {
      steps[s].push_back(us[s]);
      sum += us[s];
    }
    total.push_back(sum);
  }
  std::printf("{\"object_bytes\": %zu, \"source_bytes\": %zu, \"hit\": %s",
              out.size(), c.source.size(), Stats(total).c_str());
  for (int s = 0; s < kSteps; ++s) {
    std::printf(", \"%s\": %s", kStepNames[s], Stats(steps[s]).c_str());
  }
  std::printf("}\n");
  return 0;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

int Floor(size_t request_bytes, size_t answer_bytes, int iters) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    std::string request(request_bytes, 'r');
    const std::string answer(answer_bytes, 'a');
    while (ReadAll(fds[1], request.data(), request.size()) &&
           WriteAll(fds[1], answer.data(), answer.size())) {
    }
    _exit(0);
  }
  close(fds[1]);
  const std::string request(request_bytes, 'q');
  std::string answer(answer_bytes, '\0');
  std::vector<double> us;
  for (int i = 0; i <= iters; ++i) {
    const Clock::time_point t = Clock::now();
    if (!WriteAll(fds[0], request.data(), request.size()) ||
        !ReadAll(fds[0], answer.data(), answer.size())) {
      return 1;
    }
    if (i > 0) us.push_back(Us(Clock::now() - t));  // the first warms up
  }
  close(fds[0]);
  waitpid(child, nullptr, 0);
  std::printf(
      "{\"request_bytes\": %zu, \"answer_bytes\": %zu, \"floor\": %s}\n",
      request_bytes, answer_bytes, Stats(us).c_str());
  return 0;
}

int First(const char* lib, const char* case_file,
          const std::vector<const char*>& options, Clock::time_point start) {
  const Case c = ReadCase(case_file);
  const Clock::time_point before = Clock::now();
  Nvrtc api;
  if (!Load(lib, &api)) return 1;
  const Clock::time_point loaded = Clock::now();
  std::string out;
  if (!Sequence(api, c, options, out, nullptr)) return 1;
  const Clock::time_point hit = Clock::now();
  std::printf(
      "{\"load_ms\": %.3f, \"first_hit_ms\": %.3f, \"since_main_ms\": %.3f}\n",
      Us(loaded - before) / 1000, Us(hit - loaded) / 1000,
      Us(hit - start) / 1000);
  return 0;
}

int Loop(const char* lib, const char* case_file, double seconds,
         const std::vector<const char*>& options) {
  Nvrtc api;
  if (!Load(lib, &api)) return 1;
  const Case c = ReadCase(case_file);
  std::string out;
  if (!Sequence(api, c, options, out, nullptr)) return 1;
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  long hits = 0;
  while (Clock::now() < end) {
    if (!Sequence(api, c, options, out, nullptr)) return 1;
    ++hits;
  }
  std::printf("{\"hits\": %ld, \"seconds\": %.3f}\n", hits, seconds);
  return 0;
}

int Miss(const char* lib, const char* case_file, int count, const char* seed,
         const std::vector<const char*>& options) {
  Nvrtc api;
  if (!Load(lib, &api)) return 1;
  const Case base = ReadCase(case_file);
  std::string out;
  std::vector<double> us;
  for (int i = 0; i < count; ++i) {
    Case c = base;
    c.source =
        "// " + std::string(seed) + " " + std::to_string(i) + "\n" + c.source;
    const Clock::time_point t = Clock::now();
    if (!Sequence(api, c, options, out, nullptr)) return 1;
    us.push_back(Us(Clock::now() - t));
  }
  std::printf("{\"miss\": %s, \"n\": %d}\n", Stats(us).c_str(), count);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point start = Clock::now();
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "api" && argc >= 5) {
    return Api(argv[2], argv[3], std::atoi(argv[4]),
               OptionsFrom(argc, argv, 5));
  }
  if (mode == "floor" && argc == 5) {
    return Floor(std::strtoull(argv[2], nullptr, 10),
                 std::strtoull(argv[3], nullptr, 10), std::atoi(argv[4]));
  }
  if (mode == "first" && argc >= 4) {
    return First(argv[2], argv[3], OptionsFrom(argc, argv, 4), start);
  }
  if (mode == "miss" && argc >= 6) {
    return Miss(argv[2], argv[3], std::atoi(argv[4]), argv[5],
                OptionsFrom(argc, argv, 6));
  }
  if (mode == "loop" && argc >= 5) {
    return Loop(argv[2], argv[3], std::atof(argv[4]),
                OptionsFrom(argc, argv, 5));
  }
  std::fprintf(stderr,
               "usage: %s api LIB CASEFILE ITERS OPTION... | floor REQUEST "
               "ANSWER ITERS | first LIB CASEFILE OPTION... | loop LIB "
               "CASEFILE SECONDS OPTION...\n",
               argv[0]);
  return 2;
}
