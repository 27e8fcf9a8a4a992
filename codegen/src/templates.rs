//! The CUDA templates of `kernels-templates/`, embedded so the generator (and the runtime's
//! build script through it) works from any folder. Written next to the generated sources.

/// (path under `kernels-templates/`, text) of every template header.
pub const TEMPLATES: [(&str, &str); 9] = [
    (
        "common/tile_config.cuh",
        include_str!("../../kernels-templates/common/tile_config.cuh"),
    ),
    (
        "common/element.cuh",
        include_str!("../../kernels-templates/common/element.cuh"),
    ),
    (
        "common/operand_layout.cuh",
        include_str!("../../kernels-templates/common/operand_layout.cuh"),
    ),
    (
        "common/epilogue.cuh",
        include_str!("../../kernels-templates/common/epilogue.cuh"),
    ),
    (
        "common/fma_chunks.cuh",
        include_str!("../../kernels-templates/common/fma_chunks.cuh"),
    ),
    (
        "convert/convert_matrix.cuh",
        include_str!("../../kernels-templates/convert/convert_matrix.cuh"),
    ),
    (
        "fma/fma_decode_gemm.cuh",
        include_str!("../../kernels-templates/fma/fma_decode_gemm.cuh"),
    ),
    (
        "fma/fma_decode_staged.cuh",
        include_str!("../../kernels-templates/fma/fma_decode_staged.cuh"),
    ),
    (
        "fma/fma_gemm.cuh",
        include_str!("../../kernels-templates/fma/fma_gemm.cuh"),
    ),
];

pub fn has(path: &str) -> bool {
    TEMPLATES.iter().any(|(p, _)| *p == path)
}
