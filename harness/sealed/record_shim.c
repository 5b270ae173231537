/* Sealed timing, design 1 (sealed replay): the recording shim for the runner's process.
 *
 * LD_PRELOAD this library into the process that runs `custom_kernel`. It forwards every
 * driver call it wraps to the real libcuda and, while a recording is open, writes what reached
 * the GPU to a JSON-lines file: the code images the launched kernels came from (each saved
 * once, named by its SHA-256), the functions, every launch (grid, block, dynamic shared
 * memory, stream, launch attributes, the parameter bytes laid out by cuFuncGetParamInfo, and
 * which 8-byte words of them are device addresses, with the allocation each lies in), and the
 * asynchronous copies and memsets. bench/sealed/replay_probe.py drives it and replays the
 * record in a trusted process (docs/sealed-timing.md).
 *
 * The driver is reached three ways, and each is answered:
 *   - direct calls into libcuda (Triton's driver module links it): the functions are exported;
 *   - dlsym(handle, "cu...") on a dlopen'd libcuda (Triton's launcher): dlsym is interposed and
 *     returns the wrapper;
 *   - cuGetProcAddress / cuGetProcAddress_v2 (the CUDA runtime, so every PyTorch and CUDA C++
 *     launch): the real entry point is kept and the wrapper returned, per-thread-stream
 *     variants included; a request for cuGetProcAddress itself gets the wrapper too.
 * Image loads and function handles are tracked from the start of the process (kernels are
 * loaded during warm-up, long before the recorded call); launches, copies and memsets are
 * written only between kj_record_begin and kj_record_end, which the probe calls through ctypes.
 *
 * Not handled: dlvsym lookups of driver symbols; dlsym(RTLD_NEXT, ...) made by another library
 * resolves as if made from this one; an image passed by pointer into a shared object that is
 * unloaded before the recording (only images outside loaded objects are copied at load time).
 *
 * Build: gcc -O2 -Wall -Wextra -Werror -shared -fPIC -I$CUDA_HOME/include record_shim.c \
 *        -o kj_record_shim.so -ldl -lpthread
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#undef cuGetProcAddress /* cuda.h maps it to _v2; the unversioned symbol is the 4-argument one */

#define EXPORT __attribute__((visibility("default")))
#define HOST_BYTES_MAX 65536 /* host data of a host-to-device copy kept up to this size */
#define MIN_POINTER 0x10000u /* smaller parameter words are not looked up as addresses */

/* ---------------------------------------------------------------- the hooked symbols */

/* Every wrapped symbol: the exported name, the name cuGetProcAddress is asked for, and
 * whether it is the per-thread default stream variant (_ptsz, _ptds). */
#define HOOKS(X)                                                    \
  X(cuGetProcAddress, "cuGetProcAddress", 0)                        \
  X(cuGetProcAddress_v2, "cuGetProcAddress_v2", 0)                  \
  X(cuModuleLoad, "cuModuleLoad", 0)                                \
  X(cuModuleLoadData, "cuModuleLoadData", 0)                        \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 0)                    \
  X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 0)              \
  X(cuLibraryLoadData, "cuLibraryLoadData", 0)                      \
  X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 0)              \
  X(cuLibraryGetModule, "cuLibraryGetModule", 0)                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", 0)                  \
  X(cuLibraryGetKernel, "cuLibraryGetKernel", 0)                    \
  X(cuKernelGetFunction, "cuKernelGetFunction", 0)                  \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", 0)                    \
  X(cuKernelSetAttribute, "cuKernelSetAttribute", 0)                \
  X(cuModuleGetGlobal_v2, "cuModuleGetGlobal", 0)                   \
  X(cuLibraryGetGlobal, "cuLibraryGetGlobal", 0)                    \
  X(cuLaunchKernel, "cuLaunchKernel", 0)                            \
  X(cuLaunchKernel_ptsz, "cuLaunchKernel", 1)                       \
  X(cuLaunchKernelEx, "cuLaunchKernelEx", 0)                        \
  X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 1)                   \
  X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0)      \
  X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 1) \
  X(cuGraphLaunch, "cuGraphLaunch", 0)                              \
  X(cuGraphLaunch_ptsz, "cuGraphLaunch", 1)                         \
  X(cuMemcpyAsync, "cuMemcpyAsync", 0)                              \
  X(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1)                         \
  X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0)                   \
  X(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1)              \
  X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0)                   \
  X(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1)              \
  X(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 0)                             \
  X(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 1)                        \
  X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0)                   \
  X(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1)              \
  X(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 0)                             \
  X(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 1)                        \
  X(cuMemsetD8Async, "cuMemsetD8Async", 0)                          \
  X(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1)                     \
  X(cuMemsetD16Async, "cuMemsetD16Async", 0)                        \
  X(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1)                   \
  X(cuMemsetD32Async, "cuMemsetD32Async", 0)                        \
  X(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1)

#define HOOK_ID(name, base, ptsz) H_##name,
enum hook_id { HOOKS(HOOK_ID) H_COUNT };

struct hook {
  const char* name; /* the exported symbol */
  const char* base; /* the name cuGetProcAddress is asked for */
  int ptsz;         /* the per-thread default stream variant */
};

#define HOOK_ENTRY(name, base, ptsz) {#name, base, ptsz},
static const struct hook hooks[H_COUNT] = {HOOKS(HOOK_ENTRY)};

static void* wrappers[H_COUNT];
static void* reals[H_COUNT];

typedef void* (*dlsym_fn)(void*, const char*);
static dlsym_fn real_dlsym_ptr;

static dlsym_fn real_dlsym(void) {
  if (!real_dlsym_ptr) {
    dlsym_fn f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    real_dlsym_ptr = f;
  }
  return real_dlsym_ptr;
}

static void* libcuda(void) {
  static void* handle;
  if (!handle) handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  return handle;
}

/* The real entry point: as handed out by dlsym or cuGetProcAddress, else from libcuda. */
static void* real_fn(int id) {
  void* f = __atomic_load_n(&reals[id], __ATOMIC_ACQUIRE);
  if (!f && libcuda() && real_dlsym()) {
    f = real_dlsym()(libcuda(), hooks[id].name);
    if (f == wrappers[id]) f = NULL;
    __atomic_store_n(&reals[id], f, __ATOMIC_RELEASE);
  }
  return f;
}

/* Driver functions the shim calls itself, never wrapped. */
static void* driver_fn(const char* name) {
  return libcuda() && real_dlsym() ? real_dlsym()(libcuda(), name) : NULL;
}

static int hook_by_name(const char* name) {
  for (int i = 0; i < H_COUNT; i++)
    if (strcmp(hooks[i].name, name) == 0) return i;
  return -1;
}

static int hook_by_base(const char* base, int ptsz) {
  for (int i = 0; i < H_COUNT; i++)
    if (hooks[i].ptsz == ptsz && strcmp(hooks[i].base, base) == 0) return i;
  return -1;
}

/* ---------------------------------------------------------------- SHA-256 */

struct sha256 {
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t fill;
};

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256* s, const unsigned char* p) {
  uint32_t w[64], v[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  memcpy(v, s->h, sizeof v);
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = v[7] + (ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25)) +
                  ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha_k[i] + w[i];
    uint32_t t2 = (ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22)) +
                  ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
    memmove(v + 1, v, 7 * sizeof v[0]);
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha256_hex(const void* data, size_t n, char out[65]) {
  struct sha256 s = {{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
                      0x1f83d9ab, 0x5be0cd19},
                     0,
                     {0},
                     0};
  const unsigned char* p = data;
  s.len = (uint64_t)n * 8;
  for (; n >= 64; n -= 64, p += 64) sha256_block(&s, p);
  memcpy(s.buf, p, n);
  s.buf[n] = 0x80;
  if (n >= 56) {
    memset(s.buf + n + 1, 0, 63 - n);
    sha256_block(&s, s.buf);
    memset(s.buf, 0, 56);
  } else {
    memset(s.buf + n + 1, 0, 55 - n);
  }
  for (int i = 0; i < 8; i++) s.buf[56 + i] = (unsigned char)(s.len >> (56 - 8 * i));
  sha256_block(&s, s.buf);
  for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", s.h[i]);
}

/* ---------------------------------------------------------------- what the process loaded */

struct image {
  const void* ptr; /* the caller's bytes, when they lie in a loaded object */
  char* copy;      /* else a copy, taken at load time */
  char* path;      /* cuModuleLoad / cuLibraryLoadFromFile */
  size_t size;
  char hash[65];
  unsigned emitted; /* the recording it was last written to */
};

#define MAX_ATTRS 8
struct func {
  int image; /* -1: unknown */
  char* name;
  int is_kernel; /* a CUkernel (cuLibraryGetKernel), launched as a CUfunction */
  uintptr_t handle;
  int nattrs;
  int attr_id[MAX_ATTRS], attr_value[MAX_ATTRS];
  int nparams; /* -1: not asked yet, -2: unknown */
  size_t *offsets, *sizes;
  unsigned emitted;
};

struct global {
  int image;
  char* name;
  CUdeviceptr dptr;
  size_t size;
};

/* Open addressing: key (a handle, never 0) -> index. */
struct map {
  uintptr_t* keys;
  int* values;
  size_t cap, n;
};

static int map_get(const struct map* m, uintptr_t key) {
  if (!m->cap) return -1;
  for (size_t i = (key * 0x9e3779b97f4a7c15ull) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) return m->values[i];
    if (!m->keys[i]) return -1;
  }
}

static void map_put(struct map* m, uintptr_t key, int value) {
  if (!key) return;
  if (2 * (m->n + 1) > m->cap) {
    struct map grown = {NULL, NULL, m->cap ? 2 * m->cap : 256, 0};
    grown.keys = calloc(grown.cap, sizeof *grown.keys);
    grown.values = calloc(grown.cap, sizeof *grown.values);
    if (!grown.keys || !grown.values) {
      free(grown.keys);
      free(grown.values);
      return;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) map_put(&grown, m->keys[i], m->values[i]);
    free(m->keys);
    free(m->values);
    *m = grown;
  }
  size_t i = (key * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key;
  m->values[i] = value;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct image* images;
static size_t nimages, cap_images;
static struct func* funcs;
static size_t nfuncs, cap_funcs;
static struct global* globals;
static size_t nglobals, cap_globals;
static struct map modules, libraries, functions, kernels;

static int recording; /* read without the lock on every call */
static unsigned serial;
static FILE* out;
static char image_dir[4096];
static unsigned long long seq;

static void* grow(void* array, size_t* cap, size_t n, size_t elem) {
  if (n < *cap) return array;
  size_t c = *cap ? 2 * *cap : 64;
  void* p = realloc(array, c * elem);
  if (p) *cap = c;
  return p;
}

/* The size of a code image from its own header: cubin (ELF), fatbin, PTX (NUL-terminated). */
static const void* unwrap(const void* p) {
  const uint32_t* w = p;
  if (w[0] == 0x466243b1u) /* __fatBinC_Wrapper_t: magic, version, data, filename */
    return *(const void* const*)((const char*)p + 8);
  return p;
}

static size_t image_size(const void* p) {
  const unsigned char* b = p;
  if (memcmp(b, ELFMAG, SELFMAG) == 0 && b[EI_CLASS] == ELFCLASS64) {
    const Elf64_Ehdr* e = p;
    size_t end = e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
    size_t ph = e->e_phoff + (size_t)e->e_phnum * e->e_phentsize;
    if (ph > end) end = ph;
    for (unsigned i = 0; i < e->e_shnum; i++) {
      const Elf64_Shdr* s = (const Elf64_Shdr*)(b + e->e_shoff + (size_t)i * e->e_shentsize);
      if (s->sh_type != SHT_NOBITS && s->sh_offset + s->sh_size > end)
        end = s->sh_offset + s->sh_size;
    }
    return end;
  }
  if (*(const uint32_t*)p == 0xba55ed50u) { /* magic, version, header size, fat size */
    uint16_t header = *(const uint16_t*)(b + 6);
    uint64_t fat = *(const uint64_t*)(b + 8);
    return header + fat;
  }
  return strlen(p) + 1;
}

static const char* image_kind(const unsigned char* b, size_t n) {
  if (n >= 4 && memcmp(b, ELFMAG, SELFMAG) == 0) return "cubin";
  if (n >= 4 && *(const uint32_t*)b == 0xba55ed50u) return "fatbin";
  return "ptx";
}

static int add_image(const void* data, const char* path) {
  struct image im = {0};
  if (path) {
    im.path = strdup(path);
  } else {
    Dl_info info;
    data = unwrap(data);
    im.size = image_size(data);
    if (dladdr(data, &info)) {
      im.ptr = data;
    } else if ((im.copy = malloc(im.size))) {
      memcpy(im.copy, data, im.size);
    }
  }
  struct image* p = grow(images, &cap_images, nimages, sizeof *images);
  if (!p) return -1;
  images = p;
  images[nimages] = im;
  return (int)nimages++;
}

static int add_func(int image, const char* name, int is_kernel, uintptr_t handle) {
  struct func* p = grow(funcs, &cap_funcs, nfuncs, sizeof *funcs);
  if (!p) return -1;
  funcs = p;
  struct func f = {0};
  f.image = image;
  f.name = name ? strdup(name) : NULL;
  f.is_kernel = is_kernel;
  f.handle = handle;
  f.nparams = -1;
  funcs[nfuncs] = f;
  return (int)nfuncs++;
}

/* ---------------------------------------------------------------- writing the record */

static void json_string(const char* s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void json_hex(const void* data, size_t n) {
  const unsigned char* b = data;
  fputc('"', out);
  for (size_t i = 0; i < n; i++) fprintf(out, "%02x", b[i]);
  fputc('"', out);
}

static char* read_file(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  char* data = NULL;
  long size;
  if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (data = malloc((size_t)size + 1)) && fread(data, 1, (size_t)size, f) == (size_t)size) {
    data[size] = 0;
    *n = (size_t)size;
  } else {
    free(data);
    data = NULL;
  }
  if (f) fclose(f);
  return data;
}

static void emit_image(int index) {
  struct image* im = &images[index];
  if (im->emitted == serial) return;
  im->emitted = serial;
  const unsigned char* bytes = im->copy ? (const unsigned char*)im->copy : im->ptr;
  char* loaded = NULL;
  size_t size = im->size;
  if (im->path) bytes = (const unsigned char*)(loaded = read_file(im->path, &size));
  if (!bytes) {
    fprintf(out, "{\"ev\":\"image\",\"index\":%d,\"error\":\"bytes not available\"}\n", index);
    return;
  }
  if (!im->hash[0]) sha256_hex(bytes, size, im->hash);
  const char* kind = image_kind(bytes, size);
  char file[4200];
  snprintf(file, sizeof file, "%s/%s.%s", image_dir, im->hash, kind);
  struct stat st;
  if (stat(file, &st) != 0) {
    FILE* f = fopen(file, "wb");
    if (f) {
      fwrite(bytes, 1, size, f);
      fclose(f);
    }
  }
  fprintf(out,
          "{\"ev\":\"image\",\"index\":%d,\"hash\":\"%s\",\"kind\":\"%s\",\"size\":%zu,\"file\":",
          index, im->hash, kind, size);
  json_string(file);
  if (im->path) {
    fputs(",\"path\":", out);
    json_string(im->path);
  }
  fputs("}\n", out);
  free(loaded);
}

typedef CUresult (*param_info_fn)(void*, size_t, size_t*, size_t*);

static void param_layout(struct func* f) {
  if (f->nparams != -1) return;
  f->nparams = -2;
  param_info_fn by_func = (param_info_fn)driver_fn("cuFuncGetParamInfo");
  param_info_fn by_kernel = (param_info_fn)driver_fn("cuKernelGetParamInfo");
  param_info_fn info = by_func;
  size_t off, size;
  if (f->is_kernel && by_kernel &&
      (!info || info((void*)f->handle, 0, &off, &size) != CUDA_SUCCESS))
    info = by_kernel;
  if (!info) return;
  size_t n = 0, cap = 0;
  size_t *offsets = NULL, *sizes = NULL;
  CUresult r;
  while ((r = info((void*)f->handle, n, &off, &size)) == CUDA_SUCCESS) {
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      size_t* o = realloc(offsets, cap * sizeof *o);
      if (o) offsets = o;
      size_t* s = realloc(sizes, cap * sizeof *s);
      if (s) sizes = s;
      if (!o || !s) break;
    }
    offsets[n] = off;
    sizes[n] = size;
    n++;
  }
  /* a function without parameters answers CUDA_ERROR_INVALID_VALUE for index 0 */
  if (r == CUDA_ERROR_INVALID_VALUE || n) {
    f->nparams = (int)n;
    f->offsets = offsets;
    f->sizes = sizes;
  } else {
    free(offsets);
    free(sizes);
  }
}

static void emit_func(int index) {
  struct func* f = &funcs[index];
  if (f->emitted == serial) return;
  f->emitted = serial;
  if (f->image >= 0) emit_image(f->image);
  param_layout(f);
  fprintf(out, "{\"ev\":\"function\",\"id\":%d,\"handle\":%llu,\"kernel\":%s,\"name\":", index,
          (unsigned long long)f->handle, f->is_kernel ? "true" : "false");
  if (f->name)
    json_string(f->name);
  else
    fputs("null", out);
  fputs(",\"image\":", out);
  if (f->image >= 0 && images[f->image].hash[0])
    fprintf(out, "\"%s\"", images[f->image].hash);
  else
    fputs("null", out);
  fputs(",\"attrs\":[", out);
  for (int i = 0; i < f->nattrs; i++)
    fprintf(out, "%s[%d,%d]", i ? "," : "", f->attr_id[i], f->attr_value[i]);
  fputs("],\"params\":", out);
  if (f->nparams < 0) {
    fputs("null", out);
  } else {
    fputc('[', out);
    for (int i = 0; i < f->nparams; i++)
      fprintf(out, "%s[%zu,%zu]", i ? "," : "", f->offsets[i], f->sizes[i]);
    fputc(']', out);
  }
  fputs("}\n", out);
}

typedef CUresult (*range_fn)(CUdeviceptr*, size_t*, CUdeviceptr);

/* The device allocation `value` lies in, if it does. */
static int lookup_range(CUdeviceptr value, CUdeviceptr* base, size_t* size) {
  static range_fn range;
  if (!range) range = (range_fn)driver_fn("cuMemGetAddressRange_v2");
  return range && value >= MIN_POINTER && range(base, size, value) == CUDA_SUCCESS;
}

/* ,"key":[base,size] when `value` lies in a device allocation. */
static void emit_range(const char* key, CUdeviceptr value) {
  CUdeviceptr base;
  size_t size;
  if (lookup_range(value, &base, &size))
    fprintf(out, ",\"%s\":[%llu,%zu]", key, (unsigned long long)base, size);
}

static int func_index(CUfunction f) {
  int i = map_get(&functions, (uintptr_t)f);
  if (i < 0) i = map_get(&kernels, (uintptr_t)f);
  if (i < 0) { /* a handle obtained some way the shim did not see: its name, if the driver says */
    typedef CUresult (*name_fn)(const char**, CUfunction);
    name_fn get_name = (name_fn)driver_fn("cuFuncGetName");
    const char* name = NULL;
    if (get_name && get_name(&name, f) != CUDA_SUCCESS) name = NULL;
    i = add_func(-1, name, 0, (uintptr_t)f);
    map_put(&functions, (uintptr_t)f, i);
  }
  return i;
}

struct launch {
  const char* api;
  int ptsz;
  CUfunction f;
  unsigned grid[3], block[3], smem;
  CUstream stream;
  void** params;
  void** extra;
  const CUlaunchAttribute* attrs;
  unsigned nattrs;
  CUresult result;
};

static void record_launch(const struct launch* l) {
  pthread_mutex_lock(&lock);
  if (!recording || !out) {
    pthread_mutex_unlock(&lock);
    return;
  }
  int fi = func_index(l->f);
  if (fi >= 0) emit_func(fi);
  struct func* f = fi >= 0 ? &funcs[fi] : NULL;
  fprintf(
      out,
      "{\"ev\":\"launch\",\"seq\":%llu,\"api\":\"%s\",\"ptsz\":%d,\"result\":%d,\"function\":%d,"
      "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"smem\":%u,\"stream\":%llu",
      seq++, l->api, l->ptsz, (int)l->result, fi, l->grid[0], l->grid[1], l->grid[2], l->block[0],
      l->block[1], l->block[2], l->smem, (unsigned long long)(uintptr_t)l->stream);
  if (l->nattrs) {
    fprintf(out, ",\"attr_size\":%zu,\"attrs\":[", sizeof(CUlaunchAttribute));
    for (unsigned i = 0; i < l->nattrs; i++) {
      fprintf(out, "%s{\"id\":%d,\"bytes\":", i ? "," : "", (int)l->attrs[i].id);
      json_hex(&l->attrs[i], sizeof l->attrs[i]);
      fputc('}', out);
    }
    fputc(']', out);
  }
  /* The parameter bytes, packed at the offsets the driver gives. */
  unsigned char* buf = NULL;
  size_t total = 0;
  const char* source = "none";
  if (f && f->nparams >= 0) {
    for (int i = 0; i < f->nparams; i++)
      if (f->offsets[i] + f->sizes[i] > total) total = f->offsets[i] + f->sizes[i];
  }
  if (l->params && f && f->nparams >= 0) {
    source = "kernelParams";
    buf = calloc(1, total + 1);
    for (int i = 0; buf && i < f->nparams; i++)
      memcpy(buf + f->offsets[i], l->params[i], f->sizes[i]);
  } else if (l->extra) {
    const void* p = NULL;
    size_t n = 0;
    for (void** e = l->extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
      if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        p = e[1];
      else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
        n = *(const size_t*)e[1];
    }
    if (p && (buf = calloc(1, n + 1))) {
      memcpy(buf, p, n);
      total = n;
      source = "extra";
    }
  } else if (f && f->nparams == 0) {
    source = "kernelParams";
  }
  fprintf(out, ",\"param_source\":\"%s\",\"params\":", source);
  if (buf || (f && f->nparams == 0))
    json_hex(buf, buf ? total : 0);
  else
    fputs("null", out);
  /* Device addresses among the parameter words (8-byte aligned), with their allocations. */
  fputs(",\"ptrs\":[", out);
  int first = 1;
  for (size_t at = 0; buf && at + 8 <= total; at += 8) {
    uint64_t v;
    CUdeviceptr base;
    size_t size;
    memcpy(&v, buf + at, 8);
    if (!lookup_range(v, &base, &size)) continue;
    fprintf(out, "%s{\"at\":%zu,\"value\":%llu,\"range\":[%llu,%zu]}", first ? "" : ",", at,
            (unsigned long long)v, (unsigned long long)base, size);
    first = 0;
  }
  fputs("]}\n", out);
  free(buf);
  pthread_mutex_unlock(&lock);
}

/* Copies and memsets: kind, addresses (with their allocations), sizes, host bytes if small. */
static void record_copy(const char* api, int ptsz, const char* kind, CUdeviceptr dst,
                        CUdeviceptr src, const void* host_src, size_t bytes, CUstream stream,
                        CUresult result) {
  pthread_mutex_lock(&lock);
  if (recording && out) {
    fprintf(
        out,
        "{\"ev\":\"memcpy\",\"seq\":%llu,\"api\":\"%s\",\"ptsz\":%d,\"result\":%d,\"kind\":\"%s\","
        "\"dst\":%llu,\"src\":%llu,\"bytes\":%zu,\"stream\":%llu",
        seq++, api, ptsz, (int)result, kind, (unsigned long long)dst, (unsigned long long)src,
        bytes, (unsigned long long)(uintptr_t)stream);
    if (strcmp(kind, "DtoH") != 0) emit_range("dst_range", dst);
    if (strcmp(kind, "HtoD") != 0) emit_range("src_range", src);
    if (host_src && bytes <= HOST_BYTES_MAX) {
      fputs(",\"host_bytes\":", out);
      json_hex(host_src, bytes);
    }
    fputs("}\n", out);
  }
  pthread_mutex_unlock(&lock);
}

static void record_memset(const char* api, int ptsz, int elem, CUdeviceptr dst, unsigned value,
                          size_t count, CUstream stream, CUresult result) {
  pthread_mutex_lock(&lock);
  if (recording && out) {
    fprintf(out,
            "{\"ev\":\"memset\",\"seq\":%llu,\"api\":\"%s\",\"ptsz\":%d,\"result\":%d,\"elem\":%d,"
            "\"dst\":%llu,\"value\":%u,\"count\":%zu,\"stream\":%llu",
            seq++, api, ptsz, (int)result, elem, (unsigned long long)dst, value, count,
            (unsigned long long)(uintptr_t)stream);
    emit_range("dst_range", dst);
    fputs("}\n", out);
  }
  pthread_mutex_unlock(&lock);
}

static void record_other(const char* ev, const char* api, int ptsz, CUstream stream,
                         CUresult result) {
  pthread_mutex_lock(&lock);
  if (recording && out)
    fprintf(
        out,
        "{\"ev\":\"%s\",\"seq\":%llu,\"api\":\"%s\",\"ptsz\":%d,\"result\":%d,\"stream\":%llu}\n",
        ev, seq++, api, ptsz, (int)result, (unsigned long long)(uintptr_t)stream);
  pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- the probe's switch */

EXPORT int kj_record_begin(const char* jsonl_path, const char* images_path) {
  pthread_mutex_lock(&lock);
  int rc = -1;
  if (!recording && strlen(images_path) < sizeof image_dir) {
    mkdir(images_path, 0755);
    out = fopen(jsonl_path, "w");
    if (out) {
      strcpy(image_dir, images_path);
      serial++;
      seq = 0;
      fprintf(out, "{\"ev\":\"begin\",\"serial\":%u,\"attr_size\":%zu}\n", serial,
              sizeof(CUlaunchAttribute));
      __atomic_store_n(&recording, 1, __ATOMIC_RELEASE);
      rc = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* Ends the recording; returns how many calls it wrote, -1 if none was open. */
EXPORT long long kj_record_end(void) {
  pthread_mutex_lock(&lock);
  long long n = -1;
  if (recording && out) {
    for (size_t i = 0; i < nglobals; i++) {
      fputs("{\"ev\":\"global\",\"name\":", out);
      json_string(globals[i].name);
      fprintf(out, ",\"dptr\":%llu,\"size\":%zu,\"image\":", (unsigned long long)globals[i].dptr,
              globals[i].size);
      int im = globals[i].image;
      if (im >= 0 && images[im].hash[0])
        fprintf(out, "\"%s\"}\n", images[im].hash);
      else
        fputs("null}\n", out);
    }
    fprintf(out, "{\"ev\":\"end\",\"calls\":%llu}\n", seq);
    fclose(out);
    out = NULL;
    n = (long long)seq;
  }
  __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  return n;
}

#define RECORDING() __atomic_load_n(&recording, __ATOMIC_ACQUIRE)
#define REAL(id, type) ((type)real_fn(id))
#define MISSING_REAL(f) \
  if (!(f)) return CUDA_ERROR_NOT_INITIALIZED;

/* ---------------------------------------------------------------- loads and handles */

typedef CUresult (*module_load_data_fn)(CUmodule*, const void*);
typedef CUresult (*module_load_fn)(CUmodule*, const char*);
typedef CUresult (*module_load_data_ex_fn)(CUmodule*, const void*, unsigned, CUjit_option*, void**);
typedef CUresult (*library_load_data_fn)(CUlibrary*, const void*, CUjit_option*, void**, unsigned,
                                         CUlibraryOption*, void**, unsigned);
typedef CUresult (*library_load_file_fn)(CUlibrary*, const char*, CUjit_option*, void**, unsigned,
                                         CUlibraryOption*, void**, unsigned);

static void loaded(struct map* m, uintptr_t handle, const void* data, const char* path) {
  pthread_mutex_lock(&lock);
  map_put(m, handle, add_image(data, path));
  pthread_mutex_unlock(&lock);
}

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  module_load_data_fn f = REAL(H_cuModuleLoadData, module_load_data_fn);
  MISSING_REAL(f);
  CUresult r = f(module, image);
  if (r == CUDA_SUCCESS) loaded(&modules, (uintptr_t)*module, image, NULL);
  return r;
}

EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned n,
                                           CUjit_option* options, void** values) {
  module_load_data_ex_fn f = REAL(H_cuModuleLoadDataEx, module_load_data_ex_fn);
  MISSING_REAL(f);
  CUresult r = f(module, image, n, options, values);
  if (r == CUDA_SUCCESS) loaded(&modules, (uintptr_t)*module, image, NULL);
  return r;
}

EXPORT CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fat) {
  module_load_data_fn f = REAL(H_cuModuleLoadFatBinary, module_load_data_fn);
  MISSING_REAL(f);
  CUresult r = f(module, fat);
  if (r == CUDA_SUCCESS) loaded(&modules, (uintptr_t)*module, fat, NULL);
  return r;
}

EXPORT CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* path) {
  module_load_fn f = REAL(H_cuModuleLoad, module_load_fn);
  MISSING_REAL(f);
  CUresult r = f(module, path);
  if (r == CUDA_SUCCESS) loaded(&modules, (uintptr_t)*module, NULL, path);
  return r;
}

EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jit,
                                          void** jit_values, unsigned njit, CUlibraryOption* lib,
                                          void** lib_values, unsigned nlib) {
  library_load_data_fn f = REAL(H_cuLibraryLoadData, library_load_data_fn);
  MISSING_REAL(f);
  CUresult r = f(library, code, jit, jit_values, njit, lib, lib_values, nlib);
  if (r == CUDA_SUCCESS) loaded(&libraries, (uintptr_t)*library, code, NULL);
  return r;
}

EXPORT CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* path,
                                              CUjit_option* jit, void** jit_values, unsigned njit,
                                              CUlibraryOption* lib, void** lib_values,
                                              unsigned nlib) {
  library_load_file_fn f = REAL(H_cuLibraryLoadFromFile, library_load_file_fn);
  MISSING_REAL(f);
  CUresult r = f(library, path, jit, jit_values, njit, lib, lib_values, nlib);
  if (r == CUDA_SUCCESS) loaded(&libraries, (uintptr_t)*library, NULL, path);
  return r;
}

EXPORT CUresult CUDAAPI cuLibraryGetModule(CUmodule* module, CUlibrary library) {
  typedef CUresult (*fn)(CUmodule*, CUlibrary);
  fn f = REAL(H_cuLibraryGetModule, fn);
  MISSING_REAL(f);
  CUresult r = f(module, library);
  if (r == CUDA_SUCCESS) {
    pthread_mutex_lock(&lock);
    map_put(&modules, (uintptr_t)*module, map_get(&libraries, (uintptr_t)library));
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module,
                                            const char* name) {
  typedef CUresult (*fn)(CUfunction*, CUmodule, const char*);
  fn f = REAL(H_cuModuleGetFunction, fn);
  MISSING_REAL(f);
  CUresult r = f(function, module, name);
  if (r == CUDA_SUCCESS) {
    pthread_mutex_lock(&lock);
    int image = map_get(&modules, (uintptr_t)module);
    map_put(&functions, (uintptr_t)*function, add_func(image, name, 0, (uintptr_t)*function));
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel* kernel, CUlibrary library, const char* name) {
  typedef CUresult (*fn)(CUkernel*, CUlibrary, const char*);
  fn f = REAL(H_cuLibraryGetKernel, fn);
  MISSING_REAL(f);
  CUresult r = f(kernel, library, name);
  if (r == CUDA_SUCCESS) {
    pthread_mutex_lock(&lock);
    int image = map_get(&libraries, (uintptr_t)library);
    map_put(&kernels, (uintptr_t)*kernel, add_func(image, name, 1, (uintptr_t)*kernel));
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction* function, CUkernel kernel) {
  typedef CUresult (*fn)(CUfunction*, CUkernel);
  fn f = REAL(H_cuKernelGetFunction, fn);
  MISSING_REAL(f);
  CUresult r = f(function, kernel);
  if (r == CUDA_SUCCESS) {
    pthread_mutex_lock(&lock);
    int k = map_get(&kernels, (uintptr_t)kernel);
    if (k >= 0 && map_get(&functions, (uintptr_t)*function) < 0)
      map_put(&functions, (uintptr_t)*function,
              add_func(funcs[k].image, funcs[k].name, 0, (uintptr_t)*function));
    pthread_mutex_unlock(&lock);
  }
  return r;
}

static void set_attr(struct map* m, uintptr_t handle, int attr, int value) {
  pthread_mutex_lock(&lock);
  int i = map_get(m, handle);
  if (i >= 0) {
    struct func* f = &funcs[i];
    int j = 0;
    while (j < f->nattrs && f->attr_id[j] != attr) j++;
    if (j < MAX_ATTRS) {
      f->attr_id[j] = attr;
      f->attr_value[j] = value;
      if (j == f->nattrs) f->nattrs++;
    }
  }
  pthread_mutex_unlock(&lock);
}

EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attr,
                                           int value) {
  typedef CUresult (*fn)(CUfunction, CUfunction_attribute, int);
  fn f = REAL(H_cuFuncSetAttribute, fn);
  MISSING_REAL(f);
  CUresult r = f(function, attr, value);
  if (r == CUDA_SUCCESS) {
    set_attr(&functions, (uintptr_t)function, (int)attr, value);
    set_attr(&kernels, (uintptr_t)function, (int)attr, value);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attr, int value, CUkernel kernel,
                                             CUdevice dev) {
  typedef CUresult (*fn)(CUfunction_attribute, int, CUkernel, CUdevice);
  fn f = REAL(H_cuKernelSetAttribute, fn);
  MISSING_REAL(f);
  CUresult r = f(attr, value, kernel, dev);
  if (r == CUDA_SUCCESS) set_attr(&kernels, (uintptr_t)kernel, (int)attr, value);
  return r;
}

static void add_global(int image, const char* name, CUdeviceptr dptr, size_t size) {
  pthread_mutex_lock(&lock);
  struct global* p = grow(globals, &cap_globals, nglobals, sizeof *globals);
  if (p) {
    globals = p;
    globals[nglobals++] = (struct global){image, strdup(name ? name : ""), dptr, size};
  }
  pthread_mutex_unlock(&lock);
}

/* A global looked up by name: kept with the image its module or library came from, and handed
 * to the caller as the driver gave it. */
static void got_global(const struct map* owners, uintptr_t owner, const char* name, CUdeviceptr d,
                       size_t n, CUdeviceptr* dptr, size_t* bytes) {
  pthread_mutex_lock(&lock);
  int image = map_get(owners, owner);
  pthread_mutex_unlock(&lock);
  add_global(image, name, d, n);
  if (dptr) *dptr = d;
  if (bytes) *bytes = n;
}

EXPORT CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule module,
                                             const char* name) {
  typedef CUresult (*fn)(CUdeviceptr*, size_t*, CUmodule, const char*);
  fn f = REAL(H_cuModuleGetGlobal_v2, fn);
  MISSING_REAL(f);
  CUdeviceptr d = 0;
  size_t n = 0;
  CUresult r = f(&d, &n, module, name);
  if (r == CUDA_SUCCESS) got_global(&modules, (uintptr_t)module, name, d, n, dptr, bytes);
  return r;
}

EXPORT CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                           const char* name) {
  typedef CUresult (*fn)(CUdeviceptr*, size_t*, CUlibrary, const char*);
  fn f = REAL(H_cuLibraryGetGlobal, fn);
  MISSING_REAL(f);
  CUdeviceptr d = 0;
  size_t n = 0;
  CUresult r = f(&d, &n, library, name);
  if (r == CUDA_SUCCESS) got_global(&libraries, (uintptr_t)library, name, d, n, dptr, bytes);
  return r;
}

/* ---------------------------------------------------------------- launches */

typedef CUresult (*launch_kernel_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void**, void**);
typedef CUresult (*launch_coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void**);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig*, CUfunction, void**, void**);

static CUresult launch_kernel(int id, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream stream,
                              void** params, void** extra) {
  launch_kernel_fn real = REAL(id, launch_kernel_fn);
  MISSING_REAL(real);
  CUresult r = real(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
  if (RECORDING()) {
    struct launch l = {hooks[id].name, hooks[id].ptsz, f,      {gx, gy, gz},
                       {bx, by, bz},   smem,           stream, params,
                       extra,          NULL,           0,      r};
    record_launch(&l);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                       CUstream stream, void** params, void** extra) {
  return launch_kernel(H_cuLaunchKernel, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                            unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                            CUstream stream, void** params, void** extra) {
  return launch_kernel(H_cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, smem, stream, params,
                       extra);
}

static CUresult launch_coop(int id, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream stream,
                            void** params) {
  launch_coop_fn real = REAL(id, launch_coop_fn);
  MISSING_REAL(real);
  CUresult r = real(f, gx, gy, gz, bx, by, bz, smem, stream, params);
  if (RECORDING()) {
    struct launch l = {hooks[id].name, hooks[id].ptsz, f,      {gx, gy, gz},
                       {bx, by, bz},   smem,           stream, params,
                       NULL,           NULL,           0,      r};
    record_launch(&l);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy,
                                                  unsigned gz, unsigned bx, unsigned by,
                                                  unsigned bz, unsigned smem, CUstream stream,
                                                  void** params) {
  return launch_coop(H_cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, smem, stream, params);
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                       unsigned gz, unsigned bx, unsigned by,
                                                       unsigned bz, unsigned smem, CUstream stream,
                                                       void** params) {
  return launch_coop(H_cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz, bx, by, bz, smem, stream,
                     params);
}

static CUresult launch_ex(int id, const CUlaunchConfig* c, CUfunction f, void** params,
                          void** extra) {
  launch_ex_fn real = REAL(id, launch_ex_fn);
  MISSING_REAL(real);
  CUresult r = real(c, f, params, extra);
  if (RECORDING() && c) {
    struct launch l = {hooks[id].name,
                       hooks[id].ptsz,
                       f,
                       {c->gridDimX, c->gridDimY, c->gridDimZ},
                       {c->blockDimX, c->blockDimY, c->blockDimZ},
                       c->sharedMemBytes,
                       c->hStream,
                       params,
                       extra,
                       c->attrs,
                       c->attrs ? c->numAttrs : 0,
                       r};
    record_launch(&l);
  }
  return r;
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params,
                                         void** extra) {
  return launch_ex(H_cuLaunchKernelEx, c, f, params, extra);
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* c, CUfunction f, void** params,
                                              void** extra) {
  return launch_ex(H_cuLaunchKernelEx_ptsz, c, f, params, extra);
}

static CUresult graph_launch(int id, CUgraphExec graph, CUstream stream) {
  typedef CUresult (*fn)(CUgraphExec, CUstream);
  fn real = REAL(id, fn);
  MISSING_REAL(real);
  CUresult r = real(graph, stream);
  if (RECORDING()) record_other("graph_launch", hooks[id].name, hooks[id].ptsz, stream, r);
  return r;
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec graph, CUstream stream) {
  return graph_launch(H_cuGraphLaunch, graph, stream);
}

EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec graph, CUstream stream) {
  return graph_launch(H_cuGraphLaunch_ptsz, graph, stream);
}

/* ---------------------------------------------------------------- copies and memsets */

typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_async_fn)(CUdeviceptr, const void*, size_t, CUstream);
typedef CUresult (*dtoh_async_fn)(void*, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void*, size_t);
typedef CUresult (*dtoh_fn)(void*, CUdeviceptr, size_t);

static CUresult copy_async(int id, const char* kind, CUdeviceptr dst, CUdeviceptr src, size_t n,
                           CUstream stream) {
  copy_fn real = REAL(id, copy_fn);
  MISSING_REAL(real);
  CUresult r = real(dst, src, n, stream);
  if (RECORDING()) record_copy(hooks[id].name, hooks[id].ptsz, kind, dst, src, NULL, n, stream, r);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return copy_async(H_cuMemcpyAsync, "any", dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return copy_async(H_cuMemcpyAsync_ptsz, "any", dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                             CUstream s) {
  return copy_async(H_cuMemcpyDtoDAsync_v2, "DtoD", dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                                  CUstream s) {
  return copy_async(H_cuMemcpyDtoDAsync_v2_ptsz, "DtoD", dst, src, n, s);
}

static CUresult htod(int id, int async, CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  void* real = real_fn(id);
  MISSING_REAL(real);
  CUresult r = async ? ((htod_async_fn)real)(dst, src, n, s) : ((htod_fn)real)(dst, src, n);
  if (RECORDING())
    record_copy(hooks[id].name, hooks[id].ptsz, "HtoD", dst, (CUdeviceptr)(uintptr_t)src, src, n, s,
                r);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n,
                                             CUstream s) {
  return htod(H_cuMemcpyHtoDAsync_v2, 1, dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t n,
                                                  CUstream s) {
  return htod(H_cuMemcpyHtoDAsync_v2_ptsz, 1, dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  return htod(H_cuMemcpyHtoD_v2, 0, dst, src, n, NULL);
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t n) {
  return htod(H_cuMemcpyHtoD_v2_ptds, 0, dst, src, n, NULL);
}

static CUresult dtoh(int id, int async, void* dst, CUdeviceptr src, size_t n, CUstream s) {
  void* real = real_fn(id);
  MISSING_REAL(real);
  CUresult r = async ? ((dtoh_async_fn)real)(dst, src, n, s) : ((dtoh_fn)real)(dst, src, n);
  if (RECORDING())
    record_copy(hooks[id].name, hooks[id].ptsz, "DtoH", (CUdeviceptr)(uintptr_t)dst, src, NULL, n,
                s, r);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  return dtoh(H_cuMemcpyDtoHAsync_v2, 1, dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t n,
                                                  CUstream s) {
  return dtoh(H_cuMemcpyDtoHAsync_v2_ptsz, 1, dst, src, n, s);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  return dtoh(H_cuMemcpyDtoH_v2, 0, dst, src, n, NULL);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n) {
  return dtoh(H_cuMemcpyDtoH_v2_ptds, 0, dst, src, n, NULL);
}

#define MEMSET(symbol, type, elem)                                                              \
  EXPORT CUresult CUDAAPI symbol(CUdeviceptr dst, type value, size_t n, CUstream s) {           \
    typedef CUresult (*fn)(CUdeviceptr, type, size_t, CUstream);                                \
    fn real = REAL(H_##symbol, fn);                                                             \
    MISSING_REAL(real);                                                                         \
    CUresult r = real(dst, value, n, s);                                                        \
    if (RECORDING())                                                                            \
      record_memset(hooks[H_##symbol].name, hooks[H_##symbol].ptsz, elem, dst, value, n, s, r); \
    return r;                                                                                   \
  }
MEMSET(cuMemsetD8Async, unsigned char, 1)
MEMSET(cuMemsetD8Async_ptsz, unsigned char, 1)
MEMSET(cuMemsetD16Async, unsigned short, 2)
MEMSET(cuMemsetD16Async_ptsz, unsigned short, 2)
MEMSET(cuMemsetD32Async, unsigned int, 4)
MEMSET(cuMemsetD32Async_ptsz, unsigned int, 4)

/* ---------------------------------------------------------------- cuGetProcAddress, dlsym */

typedef CUresult (*gpa_v1_fn)(const char*, void**, int, cuuint64_t);
typedef CUresult (*gpa_v2_fn)(const char*, void**, int, cuuint64_t,
                              CUdriverProcAddressQueryResult*);

/* What the caller gets back for `symbol`, whose real entry point is *pfn. */
static void answer(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (!symbol || !pfn || !*pfn) return;
  int id;
  if (strcmp(symbol, "cuGetProcAddress") == 0)
    id = version >= 12000 ? H_cuGetProcAddress_v2 : H_cuGetProcAddress;
  else if ((id = hook_by_base(symbol,
                              (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0)) < 0)
    id = hook_by_name(symbol);
  if (id < 0 || *pfn == wrappers[id]) return;
  __atomic_store_n(&reals[id], *pfn, __ATOMIC_RELEASE);
  *pfn = wrappers[id];
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  gpa_v2_fn real = REAL(H_cuGetProcAddress_v2, gpa_v2_fn);
  MISSING_REAL(real);
  CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS) answer(symbol, pfn, version, flags);
  return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version,
                                         cuuint64_t flags) {
  gpa_v1_fn real = REAL(H_cuGetProcAddress, gpa_v1_fn);
  MISSING_REAL(real);
  CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS) answer(symbol, pfn, version, flags);
  return r;
}

EXPORT void* dlsym(void* handle, const char* symbol) {
  dlsym_fn real = real_dlsym();
  if (!real) return NULL;
  void* r = real(handle, symbol);
  if (!r || symbol[0] != 'c' || symbol[1] != 'u') return r;
  int id = hook_by_name(symbol);
  if (id < 0 || r == wrappers[id]) return r;
  __atomic_store_n(&reals[id], r, __ATOMIC_RELEASE);
  return wrappers[id];
}

__attribute__((constructor)) static void init(void) {
#define HOOK_WRAPPER(name, base, ptsz) wrappers[H_##name] = (void*)&name;
  HOOKS(HOOK_WRAPPER)
}
