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

#[cfg(test)]
mod tests {
    use super::*;

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
                spill_load_bytes: 12
            }
        );
        assert_eq!(r["k1"].spill_bytes(), 20);
        assert_eq!(r["k2"].registers, 10);
        assert_eq!(r["k2"].spill_bytes(), 0);
        assert_eq!(r.len(), 2);
    }
}
