// Timing perturbation: seeded pseudo-random delays at the pipeline steps of the asynchronous
// templates, so that a kernel whose result depends on one side of a pipeline being faster than
// the other (a stage reused before its readers are done, a wait on the wrong phase, a missing
// fence) shows it as wrong bits instead of hiding behind today's timing.
//
// Compiled in only when the unit defines GEMM_AOT_TIMING_PERTURBATION, which the generator does
// for a build asked for it (`gemm-aot build --perturb-timing`, `Builder::timing_perturbation`);
// in every other build GEMM_PERTURB(...) is nothing, so shipped cubins are unchanged by this file.
//
// The delays come from gemm_aot_perturb_seed, a __constant__ the runtime writes into each module
// (`Context::set_timing_perturbation_seed`). Seed 0 means no delay at all (a perturbed build then
// runs at its plain pace). For another seed, each (site, step, block, warp) hashes to one of: no
// delay (half the steps), a __nanosleep of 32 ns .. 4 us, a spin of 16 .. 2048 loop turns, or a
// rare long sleep of up to 16 us. A delay is the same for every lane of a warp (the hash takes the
// warp, never the lane), so a warp stays converged for the `.sync.aligned` instruction after it.
// A delay never changes a value: every site is between pipeline steps, never inside arithmetic.
#pragma once
#include <cstdint>

// Where in a pipeline a delay sits (part of the hash, and what a site reads as).
enum : uint32_t {
    kPerturbProducerAcquire = 1,  // a producer, before it waits for a free stage
    kPerturbProducerIssue = 2,    // a producer, before it issues a stage's loads
    kPerturbConsumerWait = 3,     // a consumer, before it waits for a stage to land
    kPerturbConsumerRead = 4,     // a consumer, after the wait, before it reads the stage
    kPerturbConsumerRelease = 5,  // a consumer, before it releases the stage
    kPerturbEpilogue = 6,         // between epilogue steps (staging writes, stores, loads of old C)
};

#if defined(GEMM_AOT_TIMING_PERTURBATION)

// Written by the runtime before launches (cuModuleGetGlobal); 0 = no delays. One definition a
// unit: each generated unit is one module.
extern "C" {
__constant__ uint32_t gemm_aot_perturb_seed = 0u;
}

__device__ __forceinline__ uint32_t perturb_mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ void timing_perturb(uint32_t site, uint32_t step) {
    const uint32_t seed = gemm_aot_perturb_seed;
    if (seed == 0u) return;
    // One 32-bit hash of (seed, site, step, block, warp), kept small: the sites sit in loops
    // whose registers are already planned to the last one.
    uint32_t h = perturb_mix(seed ^ (site * 0x9E3779B1u) ^ (step * 0x85EBCA6Bu));
    h = perturb_mix(h ^ (blockIdx.x * 0xC2B2AE35u) ^ (blockIdx.y * 0x27D4EB2Fu) ^ (blockIdx.z * 0x165667B1u) ^
                    ((threadIdx.x >> 5) * 0x9E3779B9u));  // the warp, never the lane
    const uint32_t kind = h & 7u, r = h >> 3;
    if (kind >= 4u && kind <= 5u) {
        __nanosleep(32u << (r & 7u));  // 32 ns .. 4 us
    } else if (kind == 6u) {
        for (uint32_t i = 16u << (r & 7u); i != 0u; --i) asm volatile("");  // a spin of 16 .. 2048 turns
    } else if (kind == 7u && (r & 3u) == 0u) {
        __nanosleep(r & 0x3FFFu);  // now and then up to 16 us
    }  // otherwise (half the steps) no delay
}

#define GEMM_PERTURB(site, step) timing_perturb((site), (uint32_t)(step))
#else
#define GEMM_PERTURB(site, step) ((void)0)
#endif
