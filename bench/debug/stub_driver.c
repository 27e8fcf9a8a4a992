/*
 * A stand-in for the CUDA driver (libcuda.so.1) that launches nothing: it lets a machine with no
 * GPU run the library's host path (validation, routing, tensor maps, argument assembly, the
 * launch call) under a profiler, so the host cost of a call can be read instruction by
 * instruction. Every call succeeds at once; allocations are address ranges handed out from a
 * counter (no memory behind them), modules and functions are tokens, and a launch only counts.
 * The driver's own cost (a real cuLaunchKernel takes 2.4-4.5 us on the device's hosts) is not
 * here: what a profile of this shows is the library's part alone.
 *
 * Device: one sm_90 with 132 SMs and 227 KiB of opt-in shared memory per block, as the H100/H200.
 * Set STUB_DRIVER_TRACE=1 to print each entry point's first call (to find what a path uses), and
 * STUB_DRIVER_REPORT=1 to print the launches taken at exit. CI runs the C call's path over it
 * (capi/tests/stub_driver.rs): the one test of the whole host path, launch included, that needs
 * no GPU.
 *
 * Build: cc -O2 -shared -fPIC -o DIR/libcuda.so.1 bench/debug/stub_driver.c && ln -s libcuda.so.1 DIR/libcuda.so
 * Use:   LD_LIBRARY_PATH=DIR valgrind --tool=callgrind <program>   (bench/debug/host_profile.sh)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum { OK = 0, INVALID_VALUE = 1, NOT_FOUND = 500 };

static int tracing = -1;
static void trace(const char *name, int *seen) {
    if (tracing < 0) tracing = getenv("STUB_DRIVER_TRACE") != NULL;
    if (tracing && !*seen) fprintf(stderr, "stub driver: %s\n", name);
    *seen = 1;
}
#define ENTRY(name)                                                                                     \
    static int seen_##name;                                                                             \
    trace(#name, &seen_##name)

/* Opaque handles: distinct non-null tokens. */
static char tokens[4096];
static unsigned next_token;
static void *token(void) { return &tokens[next_token++ % sizeof tokens]; }

/* Allocations: [base, base + size) ranges, 512-byte aligned, never reused. */
enum { MAX_ALLOCATIONS = 1 << 16 };
static struct { CUdeviceptr base, size; } allocations[MAX_ALLOCATIONS];
static int allocation_count;
static CUdeviceptr next_address = 0x7f0000000000ull;

static int find(CUdeviceptr p) {
    for (int i = allocation_count - 1; i >= 0; i--)
        if (allocations[i].size && p >= allocations[i].base && p < allocations[i].base + allocations[i].size) return i;
    return -1;
}

CUresult cuInit(unsigned flags) { ENTRY(cuInit); (void)flags; return OK; }
CUresult cuDriverGetVersion(int *v) { ENTRY(cuDriverGetVersion); *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { ENTRY(cuDeviceGetCount); *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { ENTRY(cuDeviceGet); *d = ordinal; return ordinal == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetName(char *name, int len, int d) {
    ENTRY(cuDeviceGetName); (void)d;
    snprintf(name, (size_t)len, "stub driver (no GPU)");
    return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) { ENTRY(cuDeviceTotalMem_v2); (void)d; *bytes = 80ull << 30; return OK; }
CUresult cuDeviceGetUuid(unsigned char *uuid, int d) { ENTRY(cuDeviceGetUuid); (void)d; memset(uuid, 7, 16); return OK; }
CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int d) { ENTRY(cuDeviceGetUuid_v2); (void)d; memset(uuid, 7, 16); return OK; }
CUresult cuDeviceGetAttribute(int *v, int attribute, int d) {
    ENTRY(cuDeviceGetAttribute); (void)d;
    switch (attribute) {
    case 1: *v = 1024; break;                          /* max threads per block */
    case 2: case 3: *v = 1024; break;                  /* block dims */
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;                    /* grid dims */
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;                         /* shared per block */
    case 10: *v = 32; break;                           /* warp */
    case 12: case 82: *v = 65536; break;               /* registers */
    case 16: *v = 132; break;                          /* SMs */
    case 39: *v = 2048; break;                         /* threads per SM */
    case 41: *v = 1; break;                            /* unified addressing */
    case 75: *v = 9; break;                            /* compute capability */
    case 76: *v = 0; break;
    case 81: *v = 233472; break;                       /* shared per SM */
    case 97: *v = 232448; break;                       /* shared per block, opt-in */
    case 106: *v = 32; break;                          /* blocks per SM */
    default: *v = 0; break;
    }
    return OK;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { ENTRY(cuDevicePrimaryCtxRetain); (void)d; *ctx = &tokens[0]; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { ENTRY(cuDevicePrimaryCtxRelease_v2); (void)d; return OK; }
static void *current_ctx;
CUresult cuCtxSetCurrent(void *ctx) { ENTRY(cuCtxSetCurrent); current_ctx = ctx; return OK; }
CUresult cuCtxGetCurrent(void **ctx) { ENTRY(cuCtxGetCurrent); *ctx = current_ctx; return OK; }
CUresult cuCtxPushCurrent_v2(void *ctx) { ENTRY(cuCtxPushCurrent_v2); current_ctx = ctx; return OK; }
CUresult cuCtxPopCurrent_v2(void **ctx) { ENTRY(cuCtxPopCurrent_v2); if (ctx) *ctx = current_ctx; return OK; }
CUresult cuCtxGetDevice(int *d) { ENTRY(cuCtxGetDevice); *d = 0; return OK; }
CUresult cuCtxGetDevice_v2(int *d, void *ctx) { ENTRY(cuCtxGetDevice_v2); (void)ctx; *d = 0; return OK; }
CUresult cuCtxSynchronize(void) { ENTRY(cuCtxSynchronize); return OK; }
CUresult cuCtxSynchronize_v2(void *ctx) { ENTRY(cuCtxSynchronize_v2); (void)ctx; return OK; }
CUresult cuCtxGetApiVersion(void *ctx, unsigned *v) { ENTRY(cuCtxGetApiVersion); (void)ctx; *v = 13000; return OK; }
CUresult cuCtxGetFlags(unsigned *f) { ENTRY(cuCtxGetFlags); *f = 0; return OK; }
CUresult cuCtxSetFlags(unsigned f) { ENTRY(cuCtxSetFlags); (void)f; return OK; }

CUresult cuModuleLoadData(void **m, const void *image) { ENTRY(cuModuleLoadData); (void)image; *m = token(); return OK; }
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o, void **v) {
    ENTRY(cuModuleLoadDataEx); (void)image; (void)n; (void)o; (void)v; *m = token(); return OK;
}
CUresult cuModuleUnload(void *m) { ENTRY(cuModuleUnload); (void)m; return OK; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { ENTRY(cuModuleGetFunction); (void)m; (void)name; *f = token(); return OK; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { ENTRY(cuFuncSetAttribute); (void)f; (void)a; (void)v; return OK; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { ENTRY(cuFuncGetAttribute); (void)a; (void)f; *v = a == 0 ? 1024 : 0; return OK; }
CUresult cuFuncSetCacheConfig(void *f, int c) { ENTRY(cuFuncSetCacheConfig); (void)f; (void)c; return OK; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shared) {
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor); (void)f; (void)block; (void)shared; *n = 1; return OK;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block, size_t shared, unsigned fl) {
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags); (void)f; (void)block; (void)shared; (void)fl; *n = 1; return OK;
}
CUresult cuOccupancyMaxActiveClusters(int *n, void *f, const void *config) {
    ENTRY(cuOccupancyMaxActiveClusters); (void)f; (void)config; *n = 66; return OK;
}

CUresult cuStreamCreate(void **s, unsigned f) { ENTRY(cuStreamCreate); (void)f; *s = token(); return OK; }
CUresult cuStreamCreateWithPriority(void **s, unsigned f, int p) { ENTRY(cuStreamCreateWithPriority); (void)f; (void)p; *s = token(); return OK; }
CUresult cuStreamDestroy_v2(void *s) { ENTRY(cuStreamDestroy_v2); (void)s; return OK; }
CUresult cuStreamSynchronize(void *s) { ENTRY(cuStreamSynchronize); (void)s; return OK; }
CUresult cuStreamQuery(void *s) { ENTRY(cuStreamQuery); (void)s; return OK; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { ENTRY(cuStreamWaitEvent); (void)s; (void)e; (void)f; return OK; }
CUresult cuStreamGetCtx(void *s, void **ctx) { ENTRY(cuStreamGetCtx); (void)s; *ctx = &tokens[0]; return OK; }
CUresult cuStreamGetCtx_v2(void *s, void **ctx, void **green) {
    ENTRY(cuStreamGetCtx_v2); (void)s; *ctx = &tokens[0]; if (green) *green = NULL; return OK;
}
CUresult cuStreamIsCapturing(void *s, int *status) { ENTRY(cuStreamIsCapturing); (void)s; *status = 0; return OK; }
CUresult cuEventCreate(void **e, unsigned f) { ENTRY(cuEventCreate); (void)f; *e = token(); return OK; }
CUresult cuEventDestroy_v2(void *e) { ENTRY(cuEventDestroy_v2); (void)e; return OK; }
CUresult cuEventRecord(void *e, void *s) { ENTRY(cuEventRecord); (void)e; (void)s; return OK; }
CUresult cuEventRecordWithFlags(void *e, void *s, unsigned f) { ENTRY(cuEventRecordWithFlags); (void)e; (void)s; (void)f; return OK; }
CUresult cuEventSynchronize(void *e) { ENTRY(cuEventSynchronize); (void)e; return OK; }
CUresult cuEventQuery(void *e) { ENTRY(cuEventQuery); (void)e; return OK; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { ENTRY(cuEventElapsedTime); (void)a; (void)b; *ms = 0.001f; return OK; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { ENTRY(cuEventElapsedTime_v2); (void)a; (void)b; *ms = 0.001f; return OK; }

static CUresult allocate(CUdeviceptr *p, size_t size) {
    if (allocation_count == MAX_ALLOCATIONS) return 2; /* out of memory */
    size_t rounded = (size + 511) & ~(size_t)511;
    allocations[allocation_count].base = next_address;
    allocations[allocation_count].size = rounded ? rounded : 512;
    allocation_count++;
    *p = next_address;
    next_address += (rounded ? rounded : 512) + 4096;
    return OK;
}
static CUresult release(CUdeviceptr p) {
    int i = find(p);
    if (i < 0 || allocations[i].base != p) return INVALID_VALUE;
    allocations[i].size = 0;
    return OK;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) { ENTRY(cuMemAlloc_v2); return allocate(p, size); }
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, void *s) { ENTRY(cuMemAllocAsync); (void)s; return allocate(p, size); }
CUresult cuMemFree_v2(CUdeviceptr p) { ENTRY(cuMemFree_v2); return release(p); }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { ENTRY(cuMemFreeAsync); (void)s; return release(p); }
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    ENTRY(cuMemGetAddressRange_v2);
    int i = find(p);
    if (i < 0) return NOT_FOUND;
    if (base) *base = allocations[i].base;
    if (size) *size = allocations[i].size;
    return OK;
}
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) { ENTRY(cuMemGetInfo_v2); *free_bytes = 70ull << 30; *total = 80ull << 30; return OK; }
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) { ENTRY(cuMemsetD8_v2); (void)p; (void)v; (void)n; return OK; }
CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n) { ENTRY(cuMemsetD16_v2); (void)p; (void)v; (void)n; return OK; }
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n) { ENTRY(cuMemsetD32_v2); (void)p; (void)v; (void)n; return OK; }
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *s) { ENTRY(cuMemsetD8Async); (void)p; (void)v; (void)n; (void)s; return OK; }
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void *s) { ENTRY(cuMemsetD32Async); (void)p; (void)v; (void)n; (void)s; return OK; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { ENTRY(cuMemcpyHtoD_v2); (void)d; (void)h; (void)n; return OK; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) { ENTRY(cuMemcpyHtoDAsync_v2); (void)d; (void)h; (void)n; (void)s; return OK; }
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { ENTRY(cuMemcpyDtoH_v2); (void)d; memset(h, 0, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) { ENTRY(cuMemcpyDtoHAsync_v2); (void)d; (void)s; memset(h, 0, n); return OK; }
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) {
    ENTRY(cuPointerGetAttribute);
    int i = find(p);
    if (i < 0) return INVALID_VALUE;
    switch (attribute) {
    case 1: *(void **)data = &tokens[0]; break;        /* context */
    case 2: *(unsigned *)data = 2; break;              /* memory type: device */
    case 9: *(int *)data = 0; break;                   /* device ordinal */
    case 12: *(CUdeviceptr *)data = allocations[i].base; break; /* range start */
    case 13: *(size_t *)data = allocations[i].size; break;      /* range size */
    default: memset(data, 0, 8); break;
    }
    return OK;
}

static unsigned long long launches;
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *s, void **params, void **extra) {
    ENTRY(cuLaunchKernel);
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shared; (void)s; (void)params; (void)extra;
    launches++;
    return OK;
}
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) {
    ENTRY(cuLaunchKernelEx); (void)config; (void)f; (void)params; (void)extra;
    launches++;
    return OK;
}
CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *element_strides,
                                int interleave, int swizzle, int promotion, int fill) {
    ENTRY(cuTensorMapEncodeTiled);
    (void)dtype; (void)strides; (void)box; (void)element_strides; (void)interleave; (void)swizzle; (void)promotion; (void)fill;
    memset(map, 0, 128);
    memcpy(map, &address, sizeof address);
    memcpy((char *)map + 8, dims, sizeof(uint64_t) * (rank < 5 ? rank : 5));
    return OK;
}

static const char *message = "stub driver: no GPU";
CUresult cuGetErrorString(CUresult e, const char **s) { ENTRY(cuGetErrorString); (void)e; *s = message; return OK; }
CUresult cuGetErrorName(CUresult e, const char **s) { ENTRY(cuGetErrorName); (void)e; *s = "CUDA_ERROR_STUB"; return OK; }
CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, int *status) {
    ENTRY(cuGetProcAddress_v2); (void)symbol; (void)version; (void)flags;
    *fn = NULL;
    if (status) *status = 1; /* symbol not found */
    return NOT_FOUND;
}

/* With STUB_DRIVER_REPORT set, how many launches the stub took, printed at exit (a test checks
 * that every call launched once). */
__attribute__((destructor)) static void report(void) {
    if (getenv("STUB_DRIVER_REPORT")) fprintf(stderr, "stub driver: %llu launches\n", launches);
}
