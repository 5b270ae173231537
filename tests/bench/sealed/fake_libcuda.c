/* A stand-in libcuda.so.1 for testing bench/sealed/record_shim.c without a GPU: loads hand out
 * handles, launches do nothing, and "device memory" is every address in [1 << 40, 1 << 41), in
 * 1 MiB allocations. */
#include <cuda.h>
#include <string.h>

#undef cuGetProcAddress

#define DEVICE_LO (1ull << 40)
#define DEVICE_HI (1ull << 41)

static int handles = 0x1000;

CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  (void)image;
  *m = (CUmodule)(long)(handles += 16);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  (void)m;
  (void)name;
  *f = (CUfunction)(long)(handles += 16);
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char** name, CUfunction f) {
  (void)f;
  *name = "unseen_kernel";
  return CUDA_SUCCESS;
}

/* Every function takes (pointer, pointer, int32 n, float scale): offsets 0, 8, 16, 20. */
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  static const size_t offsets[] = {0, 8, 16, 20}, sizes[] = {8, 8, 4, 4};
  (void)f;
  if (index >= 4) return CUDA_ERROR_INVALID_VALUE;
  *offset = offsets[index];
  *size = sizes[index];
  return CUDA_SUCCESS;
}

/* Internal, as in the real driver: a call between exported symbols would go through the PLT
 * to the shim, and be recorded twice. */
static CUresult launch(void) { return CUDA_SUCCESS; }

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void** params,
                        void** extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s;
  (void)params, (void)extra;
  return launch();
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned smem, CUstream s, void** params,
                             void** extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s;
  (void)params, (void)extra;
  return launch();
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  (void)c, (void)f, (void)params, (void)extra;
  return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
  if (p < DEVICE_LO || p >= DEVICE_HI) return CUDA_ERROR_NOT_FOUND;
  *base = p & ~((CUdeviceptr)(1 << 20) - 1);
  *size = 1 << 20;
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  (void)dst, (void)v, (void)n, (void)s;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  (void)dst, (void)src, (void)n, (void)s;
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  (void)version;
  int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  *pfn = NULL;
  if (strcmp(symbol, "cuLaunchKernel") == 0)
    *pfn = per_thread ? (void*)&cuLaunchKernel_ptsz : (void*)&cuLaunchKernel;
  else if (strcmp(symbol, "cuGetProcAddress") == 0)
    *pfn = (void*)&cuGetProcAddress_v2;
  else if (strcmp(symbol, "cuMemsetD8Async") == 0)
    *pfn = (void*)&cuMemsetD8Async;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
