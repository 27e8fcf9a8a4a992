//! Parsing `ptxas -v` output into per-kernel resource reports.

use serde::Serialize;
use std::collections::BTreeMap;

/// What ptxas reported for one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    pub registers: u32,
    /// Static shared memory (the templates use dynamic shared memory, so normally 0).
    pub static_shared_bytes: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// ptxas serialized the kernel's wgmma instructions (its `C7514`-family note: registers a
    /// wgmma group accumulates into are read or copied while the group may run), so each group
    /// waits for the one before: correct, and far slower.
    pub wgmma_serialized: bool,
}

impl KernelResources {
    pub fn spill_bytes(&self) -> u32 {
        self.spill_store_bytes + self.spill_load_bytes
    }
}

/// Number just before `unit` in `text`, e.g. `number_before("Used 40 registers", "registers")`.
fn number_before(text: &str, unit: &str) -> Option<u32> {
    let at = text.find(unit)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

fn quoted(line: &str) -> Option<&str> {
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(&line[start..end])
}

/// Kernel name to resources, from the text ptxas prints with `-v`.
pub fn parse(log: &str) -> BTreeMap<String, KernelResources> {
    let mut out: BTreeMap<String, KernelResources> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        let line = line.trim();
        if line.contains("wgmma.mma_async instructions are serialized") {
            // Printed apart from the kernel's block of lines, naming it in quotes.
            if let Some(name) = line.split("function ").nth(1).and_then(quoted) {
                out.entry(name.to_string()).or_default().wgmma_serialized = true;
            }
            continue;
        }
        if line.contains("Compiling entry function") {
            current = quoted(line).map(str::to_string);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            current = Some(rest.trim().to_string());
        } else if let Some(name) = &current {
            let entry = out.entry(name.clone()).or_default();
            if line.contains("bytes stack frame") {
                entry.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
                entry.spill_store_bytes = number_before(line, "bytes spill stores").unwrap_or(0);
                entry.spill_load_bytes = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                entry.registers = number_before(line, "registers").unwrap_or(0);
                entry.static_shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

/// One warning line of nvcc or ptxas, and the kernel it names, if any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The entry point the line names (`for entry k`, `function 'k'`), if it names one.
    pub kernel: Option<String>,
    /// The line as the compiler printed it, trimmed.
    pub message: String,
}

/// Whether a line of nvcc's output is a warning: `ptxas warning : ...`, `nvcc warning : ...`,
/// a front-end diagnostic `file.cu(12): warning #177-D: ...`, or a host compiler's
/// `file:12:3: warning: ...`.
fn is_warning(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let tool_warning = (lower.starts_with("ptxas") || lower.starts_with("nvcc"))
        && lower
            .split(':')
            .next()
            .is_some_and(|head| head.split_whitespace().any(|w| w == "warning"));
    tool_warning
        || lower.contains("): warning")
        || lower.contains(": warning:")
        || lower.contains(": warning #")
}

/// The kernel a warning line names: the quoted name after `function` or `entry`, or the word
/// after `entry` / `function`.
fn named_kernel(line: &str) -> Option<String> {
    for key in ["entry function '", "function '", "entry '", "kernel '"] {
        if let Some(at) = line.find(key) {
            let rest = &line[at + key.len()..];
            if let Some(end) = rest.find('\'') {
                return Some(rest[..end].to_string()).filter(|n| !n.is_empty());
            }
        }
    }
    for key in ["for entry ", "entry function ", "function "] {
        if let Some(at) = line.find(key) {
            let word: String = line[at + key.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            if !word.is_empty() {
                return Some(word);
            }
        }
    }
    None
}

/// Every warning line of an nvcc run's output (ptxas's and the front end's), in order.
pub fn warnings(log: &str) -> Vec<Warning> {
    log.lines()
        .map(str::trim)
        .filter(|l| is_warning(l))
        .map(|l| Warning {
            kernel: named_kernel(l),
            message: l.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_warning_and_the_kernel_it_names() {
        let log = "cuda/sm80.cu(2): warning #177-D: variable \"unused\" was declared but never referenced\n\
  extern \"C\" __global__ void k(float* x) { int unused; }\n\
                                               ^\n\
\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\
\n\
ptxas warning : Value of threads per SM for entry gemm_sm80_fma_nn_f32_f32_f32_tiled_m128n128k8 is out of range. .minnctapersm will be ignored\n\
ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'kgood' for 'sm_80'\n\
ptxas info    : Function properties for kgood\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n\
ptxas warning : Registers are spilled to local memory in function 'kspill', 8 bytes spill stores, 8 bytes spill loads\n\
nvcc warning : Support for offline compilation for architectures prior to '<compute/sm/arch>_75' will be removed in a future release\n";
        let w = warnings(log);
        assert_eq!(w.len(), 4, "{w:?}");
        assert_eq!(w[0].kernel, None);
        assert!(w[0].message.starts_with("cuda/sm80.cu(2): warning #177-D"));
        assert_eq!(
            w[1].kernel.as_deref(),
            Some("gemm_sm80_fma_nn_f32_f32_f32_tiled_m128n128k8")
        );
        assert!(w[1].message.ends_with(".minnctapersm will be ignored"));
        assert_eq!(w[2].kernel.as_deref(), Some("kspill"));
        assert_eq!(w[3].kernel, None);
        assert!(w[3].message.starts_with("nvcc warning :"));
        assert!(warnings("ptxas info    : Used 8 registers\n").is_empty());
    }

    #[test]
    fn marks_kernels_whose_wgmma_ptxas_serialized() {
        let log = "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n\
ptxas info    : Used 168 registers, used 16 barriers\n\
ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'k1'\n\
ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n\
ptxas info    : Used 90 registers\n";
        let r = parse(log);
        assert!(r["k1"].wgmma_serialized);
        assert_eq!(r["k1"].registers, 168);
        assert!(!r["k2"].wgmma_serialized);
        assert_eq!(r["k2"].registers, 90);
    }

    #[test]
    fn parses_registers_smem_and_spills() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n\
ptxas info    : Function properties for k1\n\
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 96 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n\
ptxas info    : Function properties for k2\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 10 registers, used 0 barriers\n";
        let r = parse(log);
        assert_eq!(
            r["k1"],
            KernelResources {
                registers: 96,
                static_shared_bytes: 1024,
                stack_bytes: 16,
                spill_store_bytes: 8,
                spill_load_bytes: 12,
                wgmma_serialized: false
            }
        );
        assert_eq!(r["k1"].spill_bytes(), 20);
        assert_eq!(r["k2"].registers, 10);
        assert_eq!(r["k2"].spill_bytes(), 0);
        assert_eq!(r.len(), 2);
    }
}
