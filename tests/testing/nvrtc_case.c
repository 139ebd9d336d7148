/* Runs NVRTC compiles described in a case file and writes everything the
   caller could observe, for the differential tests (whichever
   libnvrtc.so.13 the loader finds: the toolkit's, or jitcache's in front):
     jitcache_nvrtc_case CASEFILE OUTDIR [CASE]
   With CASE, only that case runs (the real NVRTC keeps state between
   compiles in one process, so the oracle runs each case in a fresh one).
   A case file holds cases of lines "KEY VALUE", KEY one of:
     case ID          starts a case; its results go to OUTDIR/ID
     name NAME        the program name (absent: NULL, NVRTC's default)
     source PATH      the source's file
     header NAME\tPATH  an in-memory header (repeatable, in order)
     opt OPTION       one option (repeatable, in order)
     again OPTION     an option of a second compile of the same program
                      (repeatable; with none, the program compiles once)
     expr EXPR        a name expression (repeatable)
     chdir DIR        the working directory of the compile
     end              runs the case
     outdir DIR       later cases' results go to DIR instead of OUTDIR
     pause PATH       creates PATH.ready, then waits until PATH exists (the
                      caller changes files meanwhile)
   The result file has, in order: the create result, what the PCH queries
   give before the compile, then for each compile its result, the log,
   each kind's size result and bytes (PTX, cubin, LTO-IR, OptiX IR), each
   name expression's lowered name and what the PCH queries give. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kMaxItems = 64, kMaxLine = 8192 };

struct Case {
  char id[256];
  char* name;
  char* source_path;
  int num_headers;
  char* header_names[kMaxItems];
  char* header_paths[kMaxItems];
  int num_options;
  char* options[kMaxItems];
  int num_again;
  char* again[kMaxItems];
  int num_exprs;
  char* exprs[kMaxItems];
  char* dir;
};

static char* ReadAll(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  char* data = malloc(cap);
  size_t got;
  while ((got = fread(data + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) data = realloc(data, cap *= 2);
  }
  fclose(f);
  data[n] = '\0';
  if (size != NULL) *size = n;
  return data;
}

static void Section(FILE* out, const char* what, int code, const char* data,
                    size_t size) {
  fprintf(out, "%s %d %zu\n", what, code, size);
  if (data != NULL && size > 0) fwrite(data, 1, size, out);
  fputc('\n', out);
}

typedef nvrtcResult (*SizeFn)(nvrtcProgram, size_t*);
typedef nvrtcResult (*GetFn)(nvrtcProgram, char*);

static void Output(FILE* out, nvrtcProgram prog, const char* what,
                   SizeFn size_fn, GetFn get_fn) {
  size_t size = 0;
  nvrtcResult r = size_fn(prog, &size);
  char* data = NULL;
  if (r == NVRTC_SUCCESS && size > 0) {
    data = calloc(size, 1);
    r = get_fn(prog, data);
  }
  Section(out, what, r, data, r == NVRTC_SUCCESS ? size : 0);
  free(data);
}

/* NVRTC's precompiled-header queries: the creation status and the heap
   size required, each with its result. */
static void Pch(FILE* out, const char* what, nvrtcProgram prog) {
  size_t heap = 12345;
  const nvrtcResult status = nvrtcGetPCHCreateStatus(prog);
  const nvrtcResult heap_result = nvrtcGetPCHHeapSizeRequired(prog, &heap);
  fprintf(out, "%s %d %d %zu\n", what, status, heap_result,
          heap_result == NVRTC_SUCCESS ? heap : 0);
}

static void Compile(FILE* out, const struct Case* c, nvrtcProgram prog,
                    int num_options, char* const* options) {
  fprintf(out, "compile %d\n",
          nvrtcCompileProgram(prog, num_options, (const char* const*)options));
  Output(out, prog, "log", nvrtcGetProgramLogSize, nvrtcGetProgramLog);
  Output(out, prog, "ptx", nvrtcGetPTXSize, nvrtcGetPTX);
  Output(out, prog, "cubin", nvrtcGetCUBINSize, nvrtcGetCUBIN);
  Output(out, prog, "ltoir", nvrtcGetLTOIRSize, nvrtcGetLTOIR);
  Output(out, prog, "optixir", nvrtcGetOptiXIRSize, nvrtcGetOptiXIR);
  for (int i = 0; i < c->num_exprs; ++i) {
    const char* lowered = NULL;
    nvrtcResult r = nvrtcGetLoweredName(prog, c->exprs[i], &lowered);
    fprintf(out, "lowered %d %s\n", r,
            r == NVRTC_SUCCESS && lowered ? lowered : "");
  }
  Pch(out, "pch", prog);
}

static int Run(const struct Case* c, const char* outdir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", outdir, c->id);
  FILE* out = fopen(path, "wb");
  if (out == NULL) return 0;
  char* source = ReadAll(c->source_path, NULL);
  const char* bodies[kMaxItems];
  for (int i = 0; i < c->num_headers; ++i) {
    bodies[i] = ReadAll(c->header_paths[i], NULL);
  }
  // Which case the lines a front end prints to stderr belong to
  // (JITCACHE_NVRTC_VERBOSE): the cross-place test reads them.
  if (getenv("JITCACHE_CASE_TRACE") != NULL) {
    fprintf(stderr, "jitcache-case: %s\n", c->id);
  }
  char home[4096];
  if (getcwd(home, sizeof(home)) == NULL) home[0] = '\0';
  if (c->dir != NULL && chdir(c->dir) != 0) {
    fprintf(stderr, "case %s: cannot enter %s\n", c->id, c->dir);
    return 0;
  }
  nvrtcProgram prog = NULL;
  nvrtcResult created =
      nvrtcCreateProgram(&prog, source, c->name, c->num_headers, bodies,
                         (const char* const*)c->header_names);
  fprintf(out, "create %d\n", created);
  if (created == NVRTC_SUCCESS) {
    for (int i = 0; i < c->num_exprs; ++i) {
      fprintf(out, "add %d\n", nvrtcAddNameExpression(prog, c->exprs[i]));
    }
    Pch(out, "pch-before", prog);
    Compile(out, c, prog, c->num_options, c->options);
    if (c->num_again > 0) Compile(out, c, prog, c->num_again, c->again);
    nvrtcDestroyProgram(&prog);
  }
  if (home[0] != '\0' && chdir(home) != 0) return 0;
  fclose(out);
  free(source);
  for (int i = 0; i < c->num_headers; ++i) free((char*)bodies[i]);
  return 1;
}

static void Reset(struct Case* c) {
  free(c->name);
  free(c->source_path);
  free(c->dir);
  for (int i = 0; i < c->num_headers; ++i) {
    free(c->header_names[i]);
    free(c->header_paths[i]);
  }
  for (int i = 0; i < c->num_options; ++i) free(c->options[i]);
  for (int i = 0; i < c->num_again; ++i) free(c->again[i]);
  for (int i = 0; i < c->num_exprs; ++i) free(c->exprs[i]);
  memset(c, 0, sizeof(*c));
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: %s CASEFILE OUTDIR [CASE]\n", argv[0]);
    return 2;
  }
  FILE* in = fopen(argv[1], "r");
  if (in == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  struct Case c;
  memset(&c, 0, sizeof(c));
  static char line[kMaxLine];
  int failed = 0, ran = 0;
  const char* out = argv[2];
  char* out_set = NULL;
  while (fgets(line, sizeof(line), in) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char* value = strchr(line, ' ');
    if (value != NULL) *value++ = '\0';
    if (strcmp(line, "case") == 0 && value) {
      Reset(&c);
      snprintf(c.id, sizeof(c.id), "%s", value);
    } else if (strcmp(line, "name") == 0 && value) {
      c.name = strdup(value);
    } else if (strcmp(line, "source") == 0 && value) {
      c.source_path = strdup(value);
    } else if (strcmp(line, "header") == 0 && value &&
               c.num_headers < kMaxItems) {
      char* tab = strchr(value, '\t');
      if (tab == NULL) continue;
      *tab++ = '\0';
      c.header_names[c.num_headers] = strdup(value);
      c.header_paths[c.num_headers++] = strdup(tab);
    } else if (strcmp(line, "opt") == 0 && c.num_options < kMaxItems) {
      c.options[c.num_options++] = strdup(value ? value : "");
    } else if (strcmp(line, "again") == 0 && c.num_again < kMaxItems) {
      c.again[c.num_again++] = strdup(value ? value : "");
    } else if (strcmp(line, "expr") == 0 && value && c.num_exprs < kMaxItems) {
      c.exprs[c.num_exprs++] = strdup(value);
    } else if (strcmp(line, "chdir") == 0 && value) {
      c.dir = strdup(value);
    } else if (strcmp(line, "end") == 0) {
      if (argc == 4 && strcmp(argv[3], c.id) != 0) continue;
      ++ran;
      if (!Run(&c, out)) ++failed;
    } else if (strcmp(line, "outdir") == 0 && value) {
      free(out_set);
      out = out_set = strdup(value);
    } else if (strcmp(line, "pause") == 0 && value) {
      char ready[kMaxLine + 8];
      snprintf(ready, sizeof(ready), "%s.ready", value);
      FILE* f = fopen(ready, "w");
      if (f != NULL) fclose(f);
      while (access(value, F_OK) != 0) usleep(20 * 1000);
    }
  }
  fclose(in);
  Reset(&c);
  free(out_set);
  if (ran == 0) fprintf(stderr, "no case ran\n");
  return failed == 0 && ran > 0 ? 0 : 1;
}
