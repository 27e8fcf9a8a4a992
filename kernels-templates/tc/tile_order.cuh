// The fixed tile order of persistent tensor-core kernels (docs/tensor-core.md §5): tiles are
// numbered in groups of kGroupRows tile rows, column-major inside a group (so that a wave of CTAs
// shares B columns and A rows in L2). A CTA (or cluster) walks t = its id, + count, ...; the grid
// size changes who computes a tile, never how.
#pragma once

struct TcTileOrder {
    static constexpr int kGroupRows = 8;
    int tiles_m, tiles_n;  // tile rows (of a cluster) and tile columns
    __device__ __forceinline__ int count() const { return tiles_m * tiles_n; }
    __device__ __forceinline__ void tile(int t, int& tm, int& tn) const {
        const int per_group = kGroupRows * tiles_n;
        const int g = t / per_group, r = t - g * per_group;
        const int first = g * kGroupRows;
        const int rows = min(kGroupRows, tiles_m - first);
        tm = first + r % rows;
        tn = r / rows;
    }
};
