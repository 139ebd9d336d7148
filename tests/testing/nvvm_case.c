/* Drives one libNVVM program and prints what every call answered, for
   NvvmDifferential: the same steps through the real libNVVM and through
   jitcache's libnvvm.so.4 must print the same report.

   nvvm_case LIB REPORT STEP...   (LIB: the libnvvm.so.4 to load, by path)
     -c                   nvvmCreateProgram
     -a NAME FILE         nvvmAddModuleToProgram (NAME @null: NULL name;
     -l NAME FILE         nvvmLazyAddModuleToProgram   FILE @null: NULL
                          buffer, @empty: a buffer of size 0, FILE:N its
                          first N bytes)
     -C N OPT...          nvvmCompileProgram with N options (@null: a NULL
     -V N OPT...          nvvmVerifyProgram            option)
     -r                   every read: the log's and the result's size, then
                          each into a buffer of that size and 16 bytes more
                          (all of it printed: what was written past it too)
     -d                   nvvmDestroyProgram
     -v                   nvvmVersion and nvvmIRVersion
     -e                   nvvmGetErrorString of -1 to 11
     -s NAME=VALUE        setenv (libNVVM reads its environment at each
     -u NAME              unsetenv    compile)
   Non-printable bytes are printed as \xHH. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*Create)(void**);
typedef int (*Add)(void*, const char*, size_t, const char*);
typedef int (*Run)(void*, int, const char**);
typedef int (*SizeOf)(void*, size_t*);
typedef int (*Read)(void*, char*);

static void* lib;
static FILE* report;

static void* Need(const char* name) {
  void* f = dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "nvvm_case: no %s\n", name);
    exit(2);
  }
  return f;
}

static void Print(const char* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = (unsigned char)bytes[i];
    if (c >= 32 && c < 127 && c != '\\') {
      fputc(c, report);
    } else if (c == '\n') {
      fputs("\\n\n", report);
    } else {
      fprintf(report, "\\x%02x", c);
    }
  }
}

static char* ReadFile(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "nvvm_case: cannot read %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)n + 1);
  if (fread(bytes, 1, (size_t)n, f) != (size_t)n) exit(2);
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

static void ReadOne(void* program, const char* what, const char* size_name,
                    const char* read_name) {
  size_t size = 12345;
  int r = ((SizeOf)Need(size_name))(program, &size);
  fprintf(report, "%s size: %d %zu\n", what, r, size);
  if (r != 0 || size > (1u << 30)) return;
  char* buffer = malloc(size + 16);
  memset(buffer, 0xAB, size + 16);
  r = ((Read)Need(read_name))(program, buffer);
  fprintf(report, "%s: %d [", what, r);
  Print(buffer, size + 16);
  fputs("]\n", report);
  free(buffer);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: nvvm_case LIB REPORT STEP...\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "nvvm_case: %s\n", dlerror());
    return 2;
  }
  report = fopen(argv[2], "w");
  if (report == NULL) return 2;
  void* program = NULL;
  char* modules[64];
  int kept = 0;
  for (int i = 3; i < argc; ++i) {
    const char* step = argv[i];
    if (strcmp(step, "-c") == 0) {
      int r = ((Create)Need("nvvmCreateProgram"))(&program);
      fprintf(report, "create: %d %s\n", r, program ? "program" : "NULL");
    } else if ((strcmp(step, "-a") == 0 || strcmp(step, "-l") == 0) &&
               i + 2 < argc) {
      const char* name = strcmp(argv[i + 1], "@null") == 0 ? NULL : argv[i + 1];
      const char* file = argv[i + 2];
      const char* buffer = NULL;
      size_t size = 0;
      if (strcmp(file, "@empty") == 0) {
        buffer = "";
      } else if (strcmp(file, "@null") != 0) {
        char path[4096];
        snprintf(path, sizeof(path), "%s", file);
        char* colon = strrchr(path, ':');
        long first = -1;
        if (colon != NULL) {
          *colon = '\0';
          first = atol(colon + 1);
        }
        char* bytes = ReadFile(path, &size);
        if (first >= 0 && (size_t)first < size) size = (size_t)first;
        if (kept < 64) modules[kept++] = bytes;
        buffer = bytes;
      }
      Add add = (Add)Need(step[1] == 'a' ? "nvvmAddModuleToProgram"
                                         : "nvvmLazyAddModuleToProgram");
      int r = add(program, buffer, size, name);
      fprintf(report, "%s %s: %d\n", step[1] == 'a' ? "add" : "lazy add",
              name ? name : "(null)", r);
      i += 2;
    } else if ((strcmp(step, "-C") == 0 || strcmp(step, "-V") == 0) &&
               i + 1 < argc) {
      int n = atoi(argv[i + 1]);
      if (n < 0 || n > 64 || i + 1 + n >= argc) {
        fprintf(stderr, "nvvm_case: %s %d needs %d options\n", step, n, n);
        return 2;
      }
      const char* options[64];
      int have = 0;
      for (int k = 0; k < n; ++k) {
        options[have++] =
            strcmp(argv[i + 2 + k], "@null") == 0 ? NULL : argv[i + 2 + k];
      }
      Run run = (Run)Need(step[1] == 'C' ? "nvvmCompileProgram"
                                         : "nvvmVerifyProgram");
      int r = run(program, n, have > 0 ? options : NULL);
      fprintf(report, "%s %d: %d\n", step[1] == 'C' ? "compile" : "verify", n,
              r);
      i += 1 + have;
    } else if (strcmp(step, "-r") == 0) {
      ReadOne(program, "log", "nvvmGetProgramLogSize", "nvvmGetProgramLog");
      ReadOne(program, "result", "nvvmGetCompiledResultSize",
              "nvvmGetCompiledResult");
    } else if (strcmp(step, "-d") == 0) {
      int r = ((Create)Need("nvvmDestroyProgram"))(&program);
      fprintf(report, "destroy: %d %s\n", r, program ? "program" : "NULL");
    } else if (strcmp(step, "-v") == 0) {
      int a = -1, b = -1, c = -1, d = -1;
      int r = ((int (*)(int*, int*))Need("nvvmVersion"))(&a, &b);
      fprintf(report, "version: %d %d.%d\n", r, a, b);
      r = ((int (*)(int*, int*, int*, int*))Need("nvvmIRVersion"))(&a, &b, &c,
                                                                   &d);
      fprintf(report, "ir version: %d %d.%d %d.%d\n", r, a, b, c, d);
    } else if (strcmp(step, "-e") == 0) {
      const char* (*text)(int) =
          (const char* (*)(int))Need("nvvmGetErrorString");
      for (int e = -1; e <= 11; ++e) {
        const char* s = text(e);
        fprintf(report, "error %d: %s\n", e, s ? s : "(null)");
      }
    } else if (strcmp(step, "-s") == 0 && i + 1 < argc) {
      char* eq = strchr(argv[i + 1], '=');
      if (eq == NULL) {
        fprintf(stderr, "nvvm_case: -s needs NAME=VALUE\n");
        return 2;
      }
      *eq = '\0';
      setenv(argv[i + 1], eq + 1, 1);
      fprintf(report, "setenv %s\n", argv[i + 1]);
      ++i;
    } else if (strcmp(step, "-u") == 0 && i + 1 < argc) {
      unsetenv(argv[i + 1]);
      fprintf(report, "unsetenv %s\n", argv[i + 1]);
      ++i;
    } else {
      fprintf(stderr, "nvvm_case: unknown step %s\n", step);
      return 2;
    }
    fflush(report);
  }
  fclose(report);
  for (int k = 0; k < kept; ++k) free(modules[k]);
  /* Whether the process loaded the real libNVVM (CASE_REAL_LIBNVVM names it).
   */
  const char* real = getenv("CASE_REAL_LIBNVVM");
  if (real != NULL) {
    fputs(dlopen(real, RTLD_NOW | RTLD_NOLOAD) != NULL
              ? "real libNVVM loaded\n"
              : "real libNVVM not loaded\n",
          stderr);
  }
  return 0;
}
