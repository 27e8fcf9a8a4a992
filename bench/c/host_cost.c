/*
 * The host cost of one gemm-aot call from C: the wall time of gemm_aot_linear (validation,
 * dispatch and the kernel's launch; no GPU work waited for) on a 1 x 64 x 64 bf16 layer,
 * the stream drained every 200 calls, median of 7 rounds of 2000 calls. What a Python call
 * costs on top of this is the interpreter's and torch's (bench/python/front.py).
 *
 * Build: cc -std=c11 -O2 -I capi/include bench/c/host_cost.c -L DIR -lgemm_aot -ldl -lm
 * Prints one line: "host cost: <median> us a call (rounds: ...)". Exit 2: no device.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gemm_aot.h"

typedef unsigned long long cu_ptr;
typedef int (*mem_alloc_fn)(cu_ptr *, size_t);
typedef int (*memset_fn)(cu_ptr, unsigned short, size_t);
typedef int (*sync_fn)(void);

enum { ROUNDS = 7, CALLS = 2000, DRAIN = 200 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    gemm_aot_context *ctx = NULL;
    int32_t status = gemm_aot_open(0, &ctx);
    if (status != GEMM_AOT_OK) {
        fprintf(stderr, "gemm_aot_open: %s: %s\n", gemm_aot_status_name(status), gemm_aot_last_error());
        return 2;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    mem_alloc_fn alloc = NULL;
    memset_fn set = NULL;
    sync_fn sync = NULL;
    if (lib) {
        *(void **)&alloc = dlsym(lib, "cuMemAlloc_v2"); /* POSIX's way to a function pointer */
        *(void **)&set = dlsym(lib, "cuMemsetD16_v2"); /* POSIX's way to a function pointer */
        *(void **)&sync = dlsym(lib, "cuCtxSynchronize"); /* POSIX's way to a function pointer */
    }
    cu_ptr x = 0, w = 0, y = 0;
    if (!alloc || !set || !sync || alloc(&x, 2 * 64) || alloc(&w, 2 * 64 * 64) || alloc(&y, 2 * 64) ||
        set(x, 0x3c00, 64) || set(w, 0x3c00, 64 * 64)) {
        fprintf(stderr, "the driver's allocator failed\n");
        return 1;
    }
    double rounds[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) { /* round -1 warms up */
        double spent = 0.0;
        for (int i = 0; i < CALLS / DRAIN; i++) {
            double t0 = now_us();
            for (int j = 0; j < DRAIN; j++) {
                status = gemm_aot_linear(ctx, (void *)x, (void *)w, NULL, (void *)y, 1, 64, 64, GEMM_AOT_BF16,
                                         GEMM_AOT_BF16, NULL);
                if (status != GEMM_AOT_OK) {
                    fprintf(stderr, "gemm_aot_linear: %s\n", gemm_aot_last_error());
                    return 1;
                }
            }
            spent += now_us() - t0;
            sync();
        }
        if (r >= 0) rounds[r] = spent / CALLS;
    }
    double sorted[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) sorted[r] = rounds[r];
    qsort(sorted, ROUNDS, sizeof(double), by_value);
    printf("host cost: %.2f us a call (rounds:", sorted[ROUNDS / 2]);
    for (int r = 0; r < ROUNDS; r++) printf(" %.2f", rounds[r]);
    printf(")\n");
    gemm_aot_close(ctx);
    return 0;
}
