/* Drives bench/sealed/record_shim.c (preloaded) over fake_libcuda.c: the driver reached by a
 * direct call, by dlsym and by cuGetProcAddress, with a recording around part of it.
 * Usage: driver OUT.jsonl IMAGE_DIR */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef cuGetProcAddress

typedef int (*begin_fn)(const char*, const char*);
typedef long long (*end_fn)(void);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);
typedef CUresult (*gpa_fn)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*memset_fn)(CUdeviceptr, unsigned char, size_t, CUstream);

#define CHECK(x)                           \
  do {                                     \
    if ((x) != CUDA_SUCCESS) {             \
      fprintf(stderr, "failed: %s\n", #x); \
      return 1;                            \
    }                                      \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  begin_fn begin = (begin_fn)dlsym(RTLD_DEFAULT, "kj_record_begin");
  end_fn end = (end_fn)dlsym(RTLD_DEFAULT, "kj_record_end");
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!begin || !end || !cuda) {
    fprintf(stderr, "shim or fake libcuda missing\n");
    return 1;
  }
  /* A minimal cubin (ELF64 header and one section header) on the heap, and a PTX image. */
  unsigned char* cubin = calloc(1, 128);
  memcpy(cubin, "\177ELF\2\1\1", 7);
  cubin[40] = 64; /* e_shoff */
  cubin[58] = 64; /* e_shentsize */
  cubin[60] = 1;  /* e_shnum */
  char* ptx = strdup(".version 8.0\n.target sm_90\n");
  CUmodule m1, m2;
  CUfunction f1, f2;
  CHECK(cuModuleLoadData(&m1, cubin)); /* direct */
  CHECK(cuModuleGetFunction(&f1, m1, "add_kernel"));
  CHECK(cuModuleLoadData(&m2, ptx));
  CHECK(cuModuleGetFunction(&f2, m2, "ptx_kernel"));
  memset(cubin, 0, 128); /* the shim must have copied it at load time */

  unsigned long long a = (1ull << 40) + 0x100, b = (1ull << 40) + (5ull << 20) + 0x40;
  int n = 1000;
  float scale = 2.0f;
  void* params[] = {&a, &b, &n, &scale};
  CUstream stream = (CUstream)(long)0x5000;

  launch_fn by_dlsym = (launch_fn)dlsym(cuda, "cuLaunchKernel");
  gpa_fn gpa = (gpa_fn)dlsym(cuda, "cuGetProcAddress_v2");
  launch_fn by_gpa = NULL;
  memset_fn memset_gpa = NULL;
  CHECK(gpa("cuLaunchKernel", (void**)&by_gpa, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            NULL));
  gpa_fn gpa2 = NULL;
  CHECK(gpa("cuGetProcAddress", (void**)&gpa2, 13000, 0, NULL));
  CHECK(gpa2("cuMemsetD8Async", (void**)&memset_gpa, 13000, 0, NULL));

  CHECK(cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL)); /* not recorded */
  if (begin(argv[1], argv[2]) != 0) return 1;
  CHECK(cuLaunchKernel(f1, 8, 1, 1, 128, 1, 1, 0, stream, params, NULL));
  CHECK(by_dlsym(f2, 4, 2, 1, 64, 1, 1, 1024, stream, params, NULL));
  CHECK(by_gpa(f1, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
  unsigned char packed[24];
  memcpy(packed, &b, 8);
  memcpy(packed + 8, &a, 8);
  memcpy(packed + 16, &n, 4);
  memcpy(packed + 20, &scale, 4);
  size_t packed_size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig config = {16, 1, 1, 256, 1, 1, 0, stream, &attr, 1};
  CHECK(cuLaunchKernelEx(&config, f2, NULL, extra));
  CHECK(memset_gpa(a, 0, 4096, stream));
  CHECK(cuMemcpyHtoDAsync(b, &n, sizeof n, stream));
  CUfunction unseen = (CUfunction)(long)0x7777;
  CHECK(cuLaunchKernel(unseen, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
  long long calls = end();
  printf("%lld\n", calls);
  return calls == 7 ? 0 : 1;
}
