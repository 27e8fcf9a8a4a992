// Warpgroup tensor-core wrappers (sm_90a): shared-memory matrix descriptors for 128-byte
// swizzled tiles, the fence / commit / wait protocol, and wgmma.mma_async m64nNk16 with f32
// accumulators for bf16 and f16, N in {64, 128, 192, 256}. One call is one k16 step of contract
// tc-k16: D = A * B + D (scale-d = 1 always: accumulators start from explicit +0). TA / TB are the
// instruction's transpose bits: 0 = the operand is K-major in shared memory, 1 = MN-major.
// The asm operand lists are long but regular: d[0..N/2) are the accumulators, in the PTX ISA's
// fragment order (d[4j + 2h + e] is row 16 * warp + lane / 4 + 8h, column 8j + 2 (lane % 4) + e).
#pragma once
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Whether a kernel of `threads` threads (one producer warpgroup, `consumers` consumer warpgroups)
// may move registers with setmaxnreg: the producer down to `producer`, the consumers up to
// `consumer` (a multiple of 8, at most 256) a thread. The pool is what the launch allocated,
// threads x the cap __launch_bounds__(threads, 1) gives (65536 / threads, down to a multiple of
// 8: 168 at 384); asking the consumers for more than the producer gives back waits forever (a
// 64 / 224 split hung on the H200). One consumer warpgroup takes no setmaxnreg.
constexpr bool setmaxnreg_fits(int threads, int consumers, int producer, int consumer) {
    return consumers == 1 || (consumer % 8 == 0 && consumer <= 256 &&
                              128 * producer + 128 * consumers * consumer <= threads * (65536 / threads / 8 * 8));
}

// Descriptor of a 128B-swizzled tile at shared address `saddr` (1024-byte aligned atoms):
// lbo / sbo in bytes (K-major: sbo = 8 rows x 128 B, lbo unused; MN-major: lbo = stride between
// 64-element MN chunks, sbo = stride between 8-row K groups).
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    uint64_t d = 0;
    d |= (uint64_t)((saddr & 0x3FFFF) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
    d |= (uint64_t)1 << 62;  // layout type SWIZZLE_128B
    return d;
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// Keeps the compiler from moving accumulator reads above the wait.
__device__ __forceinline__ void wgmma_reg_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// One width's wrapper, written once and instantiated for bf16 and f16 (only the instruction's
// type word differs): wgmma_m64n<N>k16_bf16 and wgmma_m64n<N>k16_f16.
#define TC_WGMMA_M64N64K16(T) \
template <int TA, int TB> \
__device__ __forceinline__ void wgmma_m64n64k16_##T(float* d, uint64_t da, uint64_t db) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." #T "." #T " " \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}" \
        ", %32, %33, p, 1, 1, %34, %35;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
        : "l"(da), "l"(db), "n"(TA), "n"(TB)); \
}
TC_WGMMA_M64N64K16(bf16)
TC_WGMMA_M64N64K16(f16)

#define TC_WGMMA_M64N128K16(T) \
template <int TA, int TB> \
__device__ __forceinline__ void wgmma_m64n128k16_##T(float* d, uint64_t da, uint64_t db) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." #T "." #T " " \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}" \
        ", %64, %65, p, 1, 1, %66, %67;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
        : "l"(da), "l"(db), "n"(TA), "n"(TB)); \
}
TC_WGMMA_M64N128K16(bf16)
TC_WGMMA_M64N128K16(f16)

// 144 columns: an NT tile whose B is one box of 144 rows (2304 = 16 x 144 columns a wave).
#define TC_WGMMA_M64N144K16(T) \
template <int TA, int TB> \
__device__ __forceinline__ void wgmma_m64n144k16_##T(float* d, uint64_t da, uint64_t db) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n144k16.f32." #T "." #T " " \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63," \
        "%64,%65,%66,%67,%68,%69,%70,%71}" \
        ", %72, %73, p, 1, 1, %74, %75;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]) \
        : "l"(da), "l"(db), "n"(TA), "n"(TB)); \
}
TC_WGMMA_M64N144K16(bf16)
TC_WGMMA_M64N144K16(f16)

#define TC_WGMMA_M64N192K16(T) \
template <int TA, int TB> \
__device__ __forceinline__ void wgmma_m64n192k16_##T(float* d, uint64_t da, uint64_t db) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n192k16.f32." #T "." #T " " \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63," \
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}" \
        ", %96, %97, p, 1, 1, %98, %99;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]) \
        : "l"(da), "l"(db), "n"(TA), "n"(TB)); \
}
TC_WGMMA_M64N192K16(bf16)
TC_WGMMA_M64N192K16(f16)

#define TC_WGMMA_M64N256K16(T) \
template <int TA, int TB> \
__device__ __forceinline__ void wgmma_m64n256k16_##T(float* d, uint64_t da, uint64_t db) { \
    asm volatile( \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." #T "." #T " " \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63," \
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95," \
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111," \
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}" \
        ", %128, %129, p, 1, 1, %130, %131;\n}\n" \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
        : "l"(da), "l"(db), "n"(TA), "n"(TB)); \
}
TC_WGMMA_M64N256K16(bf16)
TC_WGMMA_M64N256K16(f16)






// One k16 step for element type TAB and width N (the accumulator array holds N / 2 floats).
template <typename TAB, int N, int TA, int TB>
__device__ __forceinline__ void wgmma_k16(float* d, uint64_t da, uint64_t db) {
    static_assert(N == 64 || N == 128 || N == 144 || N == 192 || N == 256, "wgmma_k16: N must be 64, 128, 144, 192 or 256");
    static_assert(__is_same(TAB, __nv_bfloat16) || __is_same(TAB, __half), "wgmma_k16: TAB must be __nv_bfloat16 or __half");
    constexpr bool kBf16 = __is_same(TAB, __nv_bfloat16);
    if constexpr (kBf16) {
        if constexpr (N == 64) wgmma_m64n64k16_bf16<TA, TB>(d, da, db);
        else if constexpr (N == 128) wgmma_m64n128k16_bf16<TA, TB>(d, da, db);
        else if constexpr (N == 144) wgmma_m64n144k16_bf16<TA, TB>(d, da, db);
        else if constexpr (N == 192) wgmma_m64n192k16_bf16<TA, TB>(d, da, db);
        else wgmma_m64n256k16_bf16<TA, TB>(d, da, db);
    } else {
        if constexpr (N == 64) wgmma_m64n64k16_f16<TA, TB>(d, da, db);
        else if constexpr (N == 128) wgmma_m64n128k16_f16<TA, TB>(d, da, db);
        else if constexpr (N == 144) wgmma_m64n144k16_f16<TA, TB>(d, da, db);
        else if constexpr (N == 192) wgmma_m64n192k16_f16<TA, TB>(d, da, db);
        else wgmma_m64n256k16_f16<TA, TB>(d, da, db);
    }
}
