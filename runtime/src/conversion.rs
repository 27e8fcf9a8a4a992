//! One conversion launch (`convert_matrix`): the half fallback's upcasts and downcast, and the
//! repack of an operand into aligned scratch. A `rows x cols` matrix between a request operand
//! and a scratch region, each with its own leading dimension.

use crate::context::Context;
use crate::emit::{describe, RequestFacts};
use crate::error::GemmError;
use crate::launcher::{Geometry, NO_CLUSTER};
use crate::observer::{LaunchKind, Observer};
use crate::request::Placed;
use crate::table::{self, ArgSources, KernelRef};

/// One conversion of a call.
pub(crate) struct Conversion {
    pub kind: LaunchKind,
    pub info: &'static table::ConversionInfo,
    pub rows: u64,
    pub cols: u64,
    /// Leading dimensions of the source and the destination, in elements.
    pub ld_src: u64,
    pub ld_dst: u64,
    /// The request's operand (source of an upcast or repack, destination of a downcast).
    pub operand: Placed,
    /// Byte offset of the scratch region.
    pub region: usize,
}

impl Context {
    /// One conversion launch from `src` to `dst`.
    pub(crate) fn emit_conversion<O: Observer>(
        &self,
        observer: &mut O,
        facts: RequestFacts,
        step: &Conversion,
        src: Option<Placed>,
        dst: Option<Placed>,
    ) -> Result<(), GemmError> {
        let (Some(src), Some(dst)) = (src, dst) else {
            // Regions exist for every planned step; an empty matrix has no step.
            return Ok(());
        };
        let abi = self
            .kernels()
            .abi(step.info.abi)
            .ok_or(GemmError::UnknownAbi { abi: step.info.abi })?;
        let args = (abi.bind)(&ArgSources {
            src: src.address,
            dst: dst.address,
            rows: step.rows as i32,
            cols: step.cols as i32,
            ld_src: step.ld_src as i32,
            ld_dst: step.ld_dst as i32,
            ..ArgSources::default()
        });
        let geometry = Geometry {
            grid: step.info.launch_grid(step.rows, step.cols),
            block: (step.info.block_threads, 1, 1),
            shared_bytes: 0,
            cluster: NO_CLUSTER,
        };
        let kernel = KernelRef::Conversion(step.info.id);
        self.emit(observer, kernel, geometry, &args, |args| {
            describe(
                self,
                facts,
                (step.kind, kernel, (step.info.from, step.info.to)),
                &geometry,
                (abi, args),
                &[
                    ("src", Some((src.span, src.offset))),
                    ("dst", Some((dst.span, dst.offset))),
                ],
                &[],
            )
        })
    }
}
