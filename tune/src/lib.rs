//! # gemm-aot-tune
//!
//! The core of `gemm-aot tune`, with no GPU code: for a tier and a shape list
//! ([`ShapeList`], the format of `bench/shapes/models.toml`), every op, (n, k) and m bucket
//! ([`Buckets`]) is a region. The [`Timer`] times the kernel the routes give it and every
//! candidate (the tier's kernels of the region's policy and contract) at the bucket's batch
//! sizes; the fastest replaces the routed kernel when it is more than a threshold faster.
//! [`routes_file`] writes the regions whose kernel differs from the tier's own routing as a
//! routes file (`[[route]]` tables with exact n and k, which the tier includes through
//! `routes_files` or a build through `gemm_codegen::Builder::routes_file`), and [`report`]
//! every time and decision as JSON. A run that changes nothing writes no routes file.
//!
//! Batch invariance is kept by construction and proved again: a candidate shares the
//! region's contract, and the file passes the same validation as hand-written routes.
//! The GPU timer lives in the binary (`src/gpu_timer.rs`); [`RecordedTimer`] reads an earlier
//! run's times back (`--recorded`), to choose again with no GPU. docs/tuning.md has the loop.

pub mod buckets;
pub mod date;
mod error;
pub mod out_file;
pub mod recorded;
pub mod report;
pub mod routes_text;
pub mod shapes;
pub mod tier_view;
pub mod timer;
mod tune;

pub use buckets::{Bucket, Buckets, BucketsError};
pub use error::TuneError;
pub use out_file::rewritten_name;
pub use recorded::{RecordedError, RecordedTimer};
pub use report::report;
pub use routes_text::{routes_file, Provenance};
pub use shapes::{ShapeList, ShapesError};
pub use tier_view::Pick;
pub use timer::{Timer, TimerError};
pub use tune::{check_only, tune, Confirmation, DroppedRoute, Options, Region, TunedRoute, Tuning};
