/*
 * gemm-aot from C: a linear layer y[batch, out] = x[batch, in] . w[out, in]^T in bf16 with an
 * f32 output, on device memory from the driver's own allocator, on the legacy default
 * stream. It checks the result against a double-precision reference, checks that a row
 * computed alone (batch 1) has the same bits as inside a batch of 33, and shows a refusal.
 *
 * Exit status: 0 all checks passed, 1 a check failed, 2 no device to run on (no driver,
 * or no tier for it): the library's message says which.
 *
 * Build: cc -std=c11 -I capi/include examples/c/gemm_example.c -L DIR -lgemm_aot -ldl -lm
 * (DIR holds libgemm_aot.so: target/release after `cargo build --release -p gemm-aot-c`).
 * The CUDA driver is opened with dlopen, so no CUDA header or library is needed to build.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_aot.h"

typedef unsigned long long cu_ptr;
typedef int (*mem_alloc_fn)(cu_ptr *, size_t);
typedef int (*mem_free_fn)(cu_ptr);
typedef int (*htod_fn)(cu_ptr, const void *, size_t);
typedef int (*dtoh_fn)(void *, cu_ptr, size_t);

static struct {
    mem_alloc_fn alloc;
    mem_free_fn free;
    htod_fn htod;
    dtoh_fn dtoh;
} cu;

static int load_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) return 0;
    *(void **)&cu.alloc = dlsym(lib, "cuMemAlloc_v2"); /* POSIX's way to a function pointer */
    *(void **)&cu.free = dlsym(lib, "cuMemFree_v2"); /* POSIX's way to a function pointer */
    *(void **)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2"); /* POSIX's way to a function pointer */
    *(void **)&cu.dtoh = dlsym(lib, "cuMemcpyDtoH_v2"); /* POSIX's way to a function pointer */
    return cu.alloc && cu.free && cu.htod && cu.dtoh;
}

/* bfloat16 bits of a float, rounded to nearest even (the inputs are finite). */
static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static cu_ptr upload(const void *host, size_t bytes) {
    cu_ptr d = 0;
    if (cu.alloc(&d, bytes) != 0 || cu.htod(d, host, bytes) != 0) {
        fprintf(stderr, "cuMemAlloc/cuMemcpyHtoD of %zu bytes failed\n", bytes);
        exit(1);
    }
    return d;
}

int main(void) {
    enum { BATCH = 33, OUT = 1000, IN = 4096 };
    printf("gemm-aot %s\n", gemm_aot_version());

    gemm_aot_context *ctx = NULL;
    int32_t status = gemm_aot_open(0, &ctx);
    if (status != GEMM_AOT_OK) {
        fprintf(stderr, "gemm_aot_open: %s: %s\n", gemm_aot_status_name(status),
                gemm_aot_last_error());
        return (status == GEMM_AOT_ERROR_NO_DRIVER || status == GEMM_AOT_ERROR_NO_DEVICE) ? 2 : 1;
    }
    printf("device 0 served by tier %s\n", gemm_aot_tier(ctx));
    if (!load_driver()) {
        fprintf(stderr, "libcuda.so.1 has no cuMemAlloc_v2 & co.\n");
        return 1;
    }

    uint16_t *x = malloc(sizeof(uint16_t) * BATCH * IN);
    uint16_t *w = malloc(sizeof(uint16_t) * OUT * IN);
    float *y = malloc(sizeof(float) * BATCH * OUT);
    float *row = malloc(sizeof(float) * OUT);
    uint32_t seed = 12345;
    for (size_t i = 0; i < (size_t)BATCH * IN; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = to_bf16((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
    }
    for (size_t i = 0; i < (size_t)OUT * IN; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = to_bf16(((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) / 64.0f);
    }
    cu_ptr dx = upload(x, sizeof(uint16_t) * BATCH * IN);
    cu_ptr dw = upload(w, sizeof(uint16_t) * OUT * IN);
    cu_ptr dy = 0, drow = 0;
    if (cu.alloc(&dy, sizeof(float) * BATCH * OUT) != 0 || cu.alloc(&drow, sizeof(float) * OUT) != 0) {
        fprintf(stderr, "cuMemAlloc failed\n");
        return 1;
    }

    status = gemm_aot_linear(ctx, (void *)dx, (void *)dw, NULL, (void *)dy, BATCH, OUT, IN,
                             GEMM_AOT_BF16, GEMM_AOT_F32, NULL);
    if (status != GEMM_AOT_OK) {
        fprintf(stderr, "gemm_aot_linear: %s: %s\n", gemm_aot_status_name(status), gemm_aot_last_error());
        return 1;
    }
    cu.dtoh(y, dy, sizeof(float) * BATCH * OUT); /* synchronous: waits for the default stream */

    /* Against float64: |y - ref| within 2^-7 of sum |x w| (bf16 inputs, f32 accumulation). */
    double worst = 0.0;
    for (int r = 0; r < BATCH; r++) {
        for (int c = 0; c < OUT; c++) {
            double ref = 0.0, mag = 0.0;
            for (int i = 0; i < IN; i++) {
                double p = from_bf16(x[(size_t)r * IN + i]) * from_bf16(w[(size_t)c * IN + i]);
                ref += p;
                mag += fabs(p);
            }
            double err = fabs(y[(size_t)r * OUT + c] - ref) / (mag > 0 ? mag : 1);
            if (err > worst) worst = err;
        }
    }
    printf("largest error relative to sum |x w|: %.3g\n", worst);
    if (worst > 1.0 / 128) {
        fprintf(stderr, "FAILED: the result is not the product\n");
        return 1;
    }

    /* Rows 0 and 32 alone: batch 1 gives the same bits as the row inside the batch of 33. */
    int rows[2] = {0, BATCH - 1};
    for (int i = 0; i < 2; i++) {
        int r = rows[i];
        status = gemm_aot_linear(ctx, (void *)(dx + sizeof(uint16_t) * (size_t)r * IN), (void *)dw, NULL,
                                 (void *)drow, 1, OUT, IN, GEMM_AOT_BF16, GEMM_AOT_F32, NULL);
        if (status != GEMM_AOT_OK) {
            fprintf(stderr, "gemm_aot_linear (batch 1): %s\n", gemm_aot_last_error());
            return 1;
        }
        cu.dtoh(row, drow, sizeof(float) * OUT);
        if (memcmp(row, y + (size_t)r * OUT, sizeof(float) * OUT) != 0) {
            fprintf(stderr, "FAILED: row %d alone differs from row %d of the batch\n", r, r);
            return 1;
        }
        printf("row %d alone: same bits as in the batch of %d\n", r, BATCH);
    }

    /* A refusal: the output overlapping an input is refused, and nothing is written. */
    status = gemm_aot_linear(ctx, (void *)dx, (void *)dw, NULL, (void *)dx, 1, 16, IN, GEMM_AOT_BF16,
                             GEMM_AOT_F32, NULL);
    printf("output over the input: %s: %s\n", gemm_aot_status_name(status), gemm_aot_last_error());
    if (status != GEMM_AOT_ERROR_OVERLAP) {
        fprintf(stderr, "FAILED: expected GEMM_AOT_ERROR_OVERLAP\n");
        return 1;
    }

    cu.free(dx);
    cu.free(dw);
    cu.free(dy);
    cu.free(drow);
    free(x);
    free(w);
    free(y);
    free(row);
    gemm_aot_close(ctx);
    printf("ok\n");
    return 0;
}
