/* A C program that uses NVRTC the way JIT libraries do, for the
   NVRTC-compatible library's tests:
     jitcache_nvrtc_user OUTDIR [-I DIR]
   compiles a templated kernel (with a name expression) four ways: cubin
   for sm_90 (then also reads its PTX), PTX for compute_90, LTO-IR with
   -dlto, and OptiX IR with -optix-ir; writes OUTDIR/sm90.cubin, sm90.ptx,
   compute90.ptx, lto.ltoir, optix.optixir and prints each lowered name and log
   size. Exit status 1 on any NVRTC error. With -I DIR the source includes
   <lib/api.h> from DIR, and compiles with -lineinfo, so that file names show in
   the output. $JC_PROGRAM_NAME names the program (default scale.cu). With
   $JC_MAPS set, OUTDIR/maps receives /proc/self/maps at the end: every library
   the process had mapped by then. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* kSource =
    "template <typename T> __global__ void scale(T* x, T a) {\n"
    "  x[threadIdx.x] *= a;\n"
    "}\n";
static const char* kSourceWithHeader =
    "#include <lib/api.h>\n"
    "template <typename T> __global__ void scale(T* x, T a) {\n"
    "  x[threadIdx.x] *= a * USER_FACTOR;\n"
    "}\n";

static int Check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) {
    fprintf(stderr, "%s: %s\n", what, nvrtcGetErrorString(r));
    return 0;
  }
  return 1;
}

static int Save(const char* dir, const char* name, const char* data,
                size_t size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  return 1;
}

/* kind: 0 cubin (+ptx), 1 ptx, 2 ltoir, 3 optixir */
static int Compile(const char* dir, int kind, const char* include_option) {
  nvrtcProgram prog;
  const char* source = include_option ? kSourceWithHeader : kSource;
  const char* name = getenv("JC_PROGRAM_NAME");
  if (!Check(nvrtcCreateProgram(&prog, source, name ? name : "scale.cu", 0,
                                NULL, NULL),
             "create")) {
    return 0;
  }
  if (!Check(nvrtcAddNameExpression(prog, "scale<float>"), "name")) return 0;
  const char* options[5];
  int n = 0;
  options[n++] = kind == 1 ? "-arch=compute_90" : "-arch=sm_90";
  if (kind == 2) {
    options[n++] = "-dlto";
    options[n++] = "-rdc=true";
  }
  if (kind == 3) options[n++] = "-optix-ir";
  if (include_option) {
    options[n++] = include_option;
    options[n++] = "-lineinfo";
  }
  nvrtcResult compiled = nvrtcCompileProgram(prog, n, options);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  if (!Check(compiled, "compile")) {
    char* log = malloc(log_size);
    nvrtcGetProgramLog(prog, log);
    fprintf(stderr, "%s\n", log);
    return 0;
  }
  const char* lowered = NULL;
  if (!Check(nvrtcGetLoweredName(prog, "scale<float>", &lowered), "lowered")) {
    return 0;
  }
  printf("kind %d lowered %s log %zu\n", kind, lowered, log_size);
  size_t size = 0;
  char* data = NULL;
  if (kind == 0) {
    if (!Check(nvrtcGetCUBINSize(prog, &size), "cubin size")) return 0;
    data = malloc(size);
    if (!Check(nvrtcGetCUBIN(prog, data), "cubin")) return 0;
    Save(dir, "sm90.cubin", data, size);
    free(data);
  }
  if (kind == 0 || kind == 1) {
    if (!Check(nvrtcGetPTXSize(prog, &size), "ptx size")) return 0;
    data = malloc(size);
    if (!Check(nvrtcGetPTX(prog, data), "ptx")) return 0;
    Save(dir, kind == 0 ? "sm90.ptx" : "compute90.ptx", data, size);
    free(data);
  }
  if (kind == 2) {
    if (!Check(nvrtcGetLTOIRSize(prog, &size), "ltoir size")) return 0;
    data = malloc(size);
    if (!Check(nvrtcGetLTOIR(prog, data), "ltoir")) return 0;
    Save(dir, "lto.ltoir", data, size);
    free(data);
  }
  if (kind == 3) {
    if (!Check(nvrtcGetOptiXIRSize(prog, &size), "optixir size")) return 0;
    data = malloc(size);
    if (!Check(nvrtcGetOptiXIR(prog, data), "optixir")) return 0;
    Save(dir, "optix.optixir", data, size);
    free(data);
  }
  return Check(nvrtcDestroyProgram(&prog), "destroy");
}

static void SaveMaps(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/maps", dir);
  FILE* in = fopen("/proc/self/maps", "r");
  FILE* out = fopen(path, "w");
  char line[8192];
  while (in != NULL && out != NULL && fgets(line, sizeof(line), in) != NULL) {
    fputs(line, out);
  }
  if (in != NULL) fclose(in);
  if (out != NULL) fclose(out);
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: %s OUTDIR [-I DIR]\n", argv[0]);
    return 2;
  }
  char include_option[4200];
  const char* include = NULL;
  if (argc == 4) {
    snprintf(include_option, sizeof(include_option), "-I%s", argv[3]);
    include = include_option;
  }
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  printf("nvrtc %d.%d\n", major, minor);
  for (int kind = 0; kind < 4; ++kind) {
    if (!Compile(argv[1], kind, include)) return 1;
  }
  if (getenv("JC_MAPS") != NULL) SaveMaps(argv[1]);
  return 0;
}
