/* One nvJitLink link, driven the way programs drive it, printing every
   observable, for the differential tests of libnvJitLink.so.13:
     jitcache_nvjitlink_case OUTDIR STEP...
   STEP is `-o OPTION` (an option of nvJitLinkCreate, in order), then
   `-a TYPE NAME FILE` (nvJitLinkAddData of FILE's bytes, TYPE being
   nvJitLinkInputType's number), `-s TYPE NAME FILE SHORT` (the same with a
   size SHORT bytes short of the file's: the rest of the file lies past it,
   as in a caller's buffer that holds more than it says), `-f TYPE FILE`
   (nvJitLinkAddFile), `-V`
   (nvJitLinkVersion), then `-c`
   (nvJitLinkComplete). It ends by printing on stdout the nvJitLink files
   it mapped. After
   nvJitLinkCreate and after each later call it prints the call's result
   and both logs as nvJitLinkGet*LogSize / nvJitLinkGet*Log give them;
   after nvJitLinkComplete, both outputs' sizes and results, writing the
   outputs to OUTDIR/linked.cubin and OUTDIR/linked.ptx. The report goes to
   OUTDIR/report. Exit status 0 unless the program itself cannot run. */
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE* report;

/* What a size holds before a call: a call that refuses leaves it so, or
   not, and the report shows which. */
static const size_t kUnset = 12345;

/* One log as nvJitLinkGet*LogSize and nvJitLinkGet*Log give it. */
static void Log(nvJitLinkHandle h, const char* which,
                nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                nvJitLinkResult (*get)(nvJitLinkHandle, char*)) {
  size_t size = kUnset;
  nvJitLinkResult r = get_size(h, &size);
  fprintf(report, "  %s log: %d, %zu bytes\n", which, (int)r, size);
  if (r == NVJITLINK_SUCCESS) {
    /* Read even when empty, into a buffer one byte longer than the size
       and marked: the report shows every byte the read wrote, and the one
       past (an empty log is read as one NUL). */
    char* text = malloc(size + 1);
    memset(text, 'X', size + 1);
    fprintf(report, "  read: %d\n", (int)get(h, text));
    fwrite(text, 1, size + 1, report);
    fputc('\n', report);
    free(text);
  }
}

/* The header's functions are inline wrappers: these are addressable. */
static nvJitLinkResult ErrorSize(nvJitLinkHandle h, size_t* s) {
  return nvJitLinkGetErrorLogSize(h, s);
}
static nvJitLinkResult ErrorText(nvJitLinkHandle h, char* t) {
  return nvJitLinkGetErrorLog(h, t);
}
static nvJitLinkResult InfoSize(nvJitLinkHandle h, size_t* s) {
  return nvJitLinkGetInfoLogSize(h, s);
}
static nvJitLinkResult InfoText(nvJitLinkHandle h, char* t) {
  return nvJitLinkGetInfoLog(h, t);
}

static void Logs(nvJitLinkHandle h) {
  Log(h, "error", ErrorSize, ErrorText);
  Log(h, "info", InfoSize, InfoText);
}

static char* Slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc(*size + 1);
  if (fread(data, 1, *size, f) != *size) {
    fclose(f);
    free(data);
    return NULL;
  }
  fclose(f);
  /* The byte past the input, as a caller's PTX string has it: the real
     nvJitLink reads it (a PTX input must end in a NUL there or before),
     and an uninitialized one made its answers vary from run to run. */
  data[*size] = '\0';
  return data;
}

static void Output(nvJitLinkHandle h, const char* dir, int ptx) {
  size_t size = kUnset;
  nvJitLinkResult r = ptx ? nvJitLinkGetLinkedPtxSize(h, &size)
                          : nvJitLinkGetLinkedCubinSize(h, &size);
  fprintf(report, "%s size: %d, %zu bytes\n", ptx ? "ptx" : "cubin", (int)r,
          size);
  if (r != NVJITLINK_SUCCESS) return;
  char* data = malloc(size + 1);
  r = ptx ? nvJitLinkGetLinkedPtx(h, data) : nvJitLinkGetLinkedCubin(h, data);
  fprintf(report, "%s read: %d\n", ptx ? "ptx" : "cubin", (int)r);
  char path[4096];
  snprintf(path, sizeof(path), "%s/linked.%s", dir, ptx ? "ptx" : "cubin");
  FILE* f = fopen(path, "wb");
  if (f != NULL) {
    fwrite(data, 1, size, f);
    fclose(f);
  }
  free(data);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUTDIR STEP...\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  char path[4096];
  snprintf(path, sizeof(path), "%s/report", dir);
  report = fopen(path, "wb");
  if (report == NULL) return 2;
  setvbuf(report, NULL, _IONBF, 0);
  const char* options[64];
  unsigned n = 0;
  int i = 2;
  while (i + 1 < argc && strcmp(argv[i], "-o") == 0 && n < 64) {
    options[n++] = argv[i + 1];
    i += 2;
  }
  nvJitLinkHandle h = NULL;
  nvJitLinkResult r = nvJitLinkCreate(&h, n, options);
  fprintf(report, "create: %d, handle %s\n", (int)r, h ? "given" : "none");
  if (h == NULL) return 0;
  Logs(h);
  for (; i < argc; ++i) {
    const int shortened = strcmp(argv[i], "-s") == 0;
    if ((strcmp(argv[i], "-a") == 0 || shortened) && i + 3 + shortened < argc) {
      size_t size = kUnset;
      char* data = Slurp(argv[i + 3], &size);
      if (data == NULL) return 2;
      const size_t shorter = shortened ? (size_t)atol(argv[i + 4]) : 0;
      if (shorter > size) return 2;
      r = nvJitLinkAddData(h, (nvJitLinkInputType)atoi(argv[i + 1]), data,
                           size - shorter, argv[i + 2]);
      fprintf(report, "add %s: %d\n", argv[i + 2], (int)r);
      free(data);
      Logs(h);
      i += 3 + shortened;
    } else if (strcmp(argv[i], "-f") == 0 && i + 2 < argc) {
      r = nvJitLinkAddFile(h, (nvJitLinkInputType)atoi(argv[i + 1]),
                           argv[i + 2]);
      fprintf(report, "add file %s: %d\n", argv[i + 2], (int)r);
      Logs(h);
      i += 2;
    } else if (strcmp(argv[i], "-V") == 0) {
      unsigned major = 0, minor = 0;
      r = nvJitLinkVersion(&major, &minor);
      fprintf(report, "version: %d, %u.%u\n", (int)r, major, minor);
    } else if (strcmp(argv[i], "-c") == 0) {
      r = nvJitLinkComplete(h);
      fprintf(report, "complete: %d\n", (int)r);
      Logs(h);
      Output(h, dir, 0);
      Output(h, dir, 1);
    } else {
      fprintf(stderr, "bad step %s\n", argv[i]);
      return 2;
    }
  }
  r = nvJitLinkDestroy(&h);
  fprintf(report, "destroy: %d, handle %s\n", (int)r, h ? "kept" : "cleared");
  fclose(report);
  /* Which nvJitLink files the process mapped (on stdout, not the report:
     they differ between the real library and ours by design). */
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[8192];
  while (maps != NULL && fgets(line, sizeof(line), maps) != NULL) {
    const char* path = strchr(line, '/');
    if (path != NULL && strstr(path, "libnvJitLink") != NULL) {
      printf("mapped %s", path);
    }
  }
  if (maps != NULL) fclose(maps);
  return 0;
}
