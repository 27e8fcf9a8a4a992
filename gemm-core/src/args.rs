//! Kernel arguments: every value a launch can fill an argument struct from ([`ArgSources`]),
//! a set's argument structs as data ([`AbiInfo`]: layout, fields, flag bits, and the generated
//! `bind` that fills the struct), and the struct's bytes held inline ([`ArgBytes`]), which is
//! what the one raw launch path passes to the driver.

use crate::table::{Operand, TensorMap};

/// Every value an argument struct can be filled from (a spec field's `bind`). A set's generated
/// `bind` of each ABI copies the fields it binds and sets its flag bits from what is present,
/// so the runtime fills one `ArgSources` a launch and names no argument struct. Pointers are
/// device addresses (0 when absent); dimensions and leading dimensions in elements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ArgSources {
    /// `a.ptr`: A as stored.
    pub a: u64,
    /// `b.ptr`: B as stored.
    pub b: u64,
    /// `bias.ptr`: the bias of n elements, or 0.
    pub bias: u64,
    /// `c.ptr`: the output C.
    pub c: u64,
    /// `a.tensor_map`: A's tensor map, when the kernel reads one.
    pub a_map: Option<TensorMap>,
    /// `b.tensor_map`: B's tensor map.
    pub b_map: Option<TensorMap>,
    /// `c.tensor_map`: C's tensor map, when C can take TMA and the kernel stores through it.
    pub c_map: Option<TensorMap>,
    /// `m`: rows of C.
    pub m: i32,
    /// `n`: columns of C.
    pub n: i32,
    /// `k`: the reduction length.
    pub k: i32,
    /// `lda`: leading dimension of A as stored.
    pub lda: i32,
    /// `ldb`: leading dimension of B as stored.
    pub ldb: i32,
    /// `ldc`: leading dimension of C.
    pub ldc: i32,
    /// `beta`: 0 overwrites C, else C = fma(beta, C, result).
    pub beta: f32,
    /// `src`: a conversion's source.
    pub src: u64,
    /// `dst`: a conversion's destination.
    pub dst: u64,
    /// `rows`: rows a conversion converts.
    pub rows: i32,
    /// `cols`: columns a conversion converts.
    pub cols: i32,
    /// `ld_src`: leading dimension of src.
    pub ld_src: i32,
    /// `ld_dst`: leading dimension of dst.
    pub ld_dst: i32,
    /// `a.batch_stride`: elements from one batch entry's A to the next (a batched kind's grid
    /// z walks the entries); 0 for one GEMM.
    pub a_batch_stride: i64,
    /// `b.batch_stride`: likewise for B (0 also when every entry reads one B).
    pub b_batch_stride: i64,
    /// `c.batch_stride`: likewise for C.
    pub c_batch_stride: i64,
    /// `bias.batch_stride`: likewise for the bias.
    pub bias_batch_stride: i64,
}

impl ArgSources {
    /// Whether the source a flag bit names (`bias.ptr`, `c.tensor_map`, ...) is present.
    pub fn present(&self, source: &str) -> bool {
        match source {
            "a.ptr" => self.a != 0,
            "b.ptr" => self.b != 0,
            "bias.ptr" => self.bias != 0,
            "c.ptr" => self.c != 0,
            "src" => self.src != 0,
            "dst" => self.dst != 0,
            "a.tensor_map" => self.a_map.is_some(),
            "b.tensor_map" => self.b_map.is_some(),
            "c.tensor_map" => self.c_map.is_some(),
            _ => false,
        }
    }

    /// The little-endian bytes a field of `size` bytes bound to `source` holds (pointers and
    /// 32-bit values widened to the field), or `None` for a word that is no value source.
    fn value_bytes(&self, source: &str, size: usize) -> Option<Vec<u8>> {
        let int = |v: i64| v.to_le_bytes()[..size.min(8)].to_vec();
        let uint = |v: u64| v.to_le_bytes()[..size.min(8)].to_vec();
        Some(match source {
            "a.ptr" => uint(self.a),
            "b.ptr" => uint(self.b),
            "bias.ptr" => uint(self.bias),
            "c.ptr" => uint(self.c),
            "src" => uint(self.src),
            "dst" => uint(self.dst),
            "m" => int(self.m.into()),
            "n" => int(self.n.into()),
            "k" => int(self.k.into()),
            "lda" => int(self.lda.into()),
            "ldb" => int(self.ldb.into()),
            "ldc" => int(self.ldc.into()),
            "rows" => int(self.rows.into()),
            "cols" => int(self.cols.into()),
            "ld_src" => int(self.ld_src.into()),
            "ld_dst" => int(self.ld_dst.into()),
            "a.batch_stride" => int(self.a_batch_stride),
            "b.batch_stride" => int(self.b_batch_stride),
            "c.batch_stride" => int(self.c_batch_stride),
            "bias.batch_stride" => int(self.bias_batch_stride),
            "beta" => self.beta.to_le_bytes().to_vec(),
            "a.tensor_map" => self.a_map.map_or(vec![0; 128], |m| m.0.to_vec()),
            "b.tensor_map" => self.b_map.map_or(vec![0; 128], |m| m.0.to_vec()),
            "c.tensor_map" => self.c_map.map_or(vec![0; 128], |m| m.0.to_vec()),
            _ => return None,
        })
    }

    /// Sources with a distinct, recognisable value in every field: what the ABI check binds.
    fn probe() -> ArgSources {
        let map = |b: u8| Some(TensorMap([b; 128]));
        ArgSources {
            a: 0x0a0a_0000_0101,
            b: 0x0b0b_0000_0202,
            bias: 0x0b1a_0000_0303,
            c: 0x0c0c_0000_0404,
            a_map: map(0xa1),
            b_map: map(0xb1),
            c_map: map(0xc1),
            m: 0x1001,
            n: 0x1002,
            k: 0x1003,
            lda: 0x1004,
            ldb: 0x1005,
            ldc: 0x1006,
            beta: 1.5,
            src: 0x5a5a_0000_0505,
            dst: 0xd5d5_0000_0606,
            rows: 0x1007,
            cols: 0x1008,
            ld_src: 0x1009,
            ld_dst: 0x100a,
            a_batch_stride: 0x2000_0000_100b,
            b_batch_stride: 0x2000_0000_100c,
            c_batch_stride: 0x2000_0000_100d,
            bias_batch_stride: 0x2000_0000_100e,
        }
    }
}

/// Bytes of one [`Line`].
const LINE: usize = 128;

/// 128 bytes, 128-byte aligned: the unit [`ArgBytes`] stores its bytes in.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Line([u8; LINE]);

/// An argument struct as its exact bytes, inline and 128-byte aligned (as a struct holding a
/// `CUtensorMap` is under CUDA 13's `cuda.h`): what a launch passes as its one parameter. At
/// most [`ArgBytes::CAPACITY`] bytes (the specs refuse a larger struct).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ArgBytes {
    len: u16,
    lines: [Line; ArgBytes::LINES],
}

impl std::fmt::Debug for ArgBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ArgBytes({} bytes)", self.len)
    }
}

impl Default for ArgBytes {
    /// No bytes.
    fn default() -> Self {
        ArgBytes {
            len: 0,
            lines: [Line([0; LINE]); ArgBytes::LINES],
        }
    }
}

impl ArgBytes {
    const LINES: usize = 8;
    /// The largest argument struct a launch carries, in bytes.
    pub const CAPACITY: usize = ArgBytes::LINES * LINE;

    /// The struct of these bytes; `None` when they exceed [`CAPACITY`](Self::CAPACITY).
    pub fn new(bytes: &[u8]) -> Option<ArgBytes> {
        if bytes.len() > Self::CAPACITY {
            return None;
        }
        let mut args = ArgBytes {
            len: bytes.len() as u16,
            ..ArgBytes::default()
        };
        // The bytes in one copy over the zeroed lines (the zeros past `len` keep equality
        // exact); the lines are contiguous bytes.
        // SAFETY: `lines` is `CAPACITY` contiguous bytes and `bytes` is at most that long; the
        // two do not overlap (`args` is a fresh local).
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                args.lines.as_mut_ptr() as *mut u8,
                bytes.len(),
            )
        };
        Some(args)
    }

    /// The struct's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `lines` is a contiguous array of `[u8; LINE]`, at least `len` bytes long.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const u8, self.len as usize) }
    }

    /// The first byte, 128-byte aligned: the kernel's single by-value parameter.
    pub fn as_ptr(&self) -> *const u8 {
        self.lines.as_ptr() as *const u8
    }
}

/// What a field of an argument struct holds, for the observer's digest and the ABI check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A device address.
    Pointer,
    /// A tensor map of this operand.
    TensorMap(Operand),
    /// A number (dimension, leading dimension, beta).
    Value,
    /// The flag bits.
    Flags,
}

/// One field of an argument struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiFieldInfo {
    /// Its name.
    pub name: &'static str,
    /// Its byte offset.
    pub offset: u32,
    /// Its size in bytes.
    pub size: u32,
    /// The source that fills it (`a.ptr`, `m`, `flags`, ...).
    pub bind: &'static str,
    /// What it holds.
    pub kind: FieldKind,
    /// `families.toml:95`: where the spec declares it.
    pub location: &'static str,
}

/// One bit of an argument struct's `flags` field, set exactly when its source is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiFlagInfo {
    /// Its name (`bias`); templates read `Args::kFlagBias`.
    pub name: &'static str,
    /// Its bit.
    pub bit: u32,
    /// The source whose presence sets it (`bias.ptr`, `c.tensor_map`).
    pub set: &'static str,
}

/// The generated filling of one argument struct.
pub type BindFn = fn(&ArgSources) -> ArgBytes;

/// One argument struct of a set, as its specs declare it, with its generated `bind`.
#[derive(Clone, Copy, Debug)]
pub struct AbiInfo {
    /// The struct's name (`GemmArgs`).
    pub name: &'static str,
    /// Its size in bytes.
    pub size: u32,
    /// Its alignment in bytes.
    pub align: u32,
    /// Its fields in order.
    pub fields: &'static [AbiFieldInfo],
    /// The bits of its `flags` field.
    pub flags: &'static [AbiFlagInfo],
    /// Where the spec declares it.
    pub location: &'static str,
    /// Fills the struct from the launch's sources.
    pub bind: BindFn,
}

impl AbiInfo {
    /// (field, byte offset) of every device-pointer field.
    pub fn pointer_fields(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        self.fields
            .iter()
            .filter(|f| f.kind == FieldKind::Pointer)
            .map(|f| (f.name, f.offset as usize))
    }

    /// (field, byte offset, operand) of every tensor-map field.
    pub fn tensor_map_fields(&self) -> impl Iterator<Item = (&'static str, usize, Operand)> + '_ {
        self.fields.iter().filter_map(|f| match f.kind {
            FieldKind::TensorMap(o) => Some((f.name, f.offset as usize, o)),
            _ => None,
        })
    }

    /// The field of the struct that does not hold what its declaration says after `bind`:
    /// (field, what is wrong). Binds distinct probe values and reads every field back at its
    /// declared offset, so a set whose generated `bind` or layout disagrees with its specs is
    /// found without a device.
    pub fn check(&self) -> Result<(), (&'static AbiFieldInfo, String)> {
        let src = ArgSources::probe();
        let bound = (self.bind)(&src);
        let bytes = bound.bytes();
        if bytes.len() != self.size as usize {
            let f = self.fields.last().or(self.fields.first());
            if let Some(f) = f {
                return Err((
                    f,
                    format!(
                        "the bound struct is {} bytes, its declaration {}",
                        bytes.len(),
                        self.size
                    ),
                ));
            }
        }
        for f in self.fields {
            let (lo, hi) = (f.offset as usize, (f.offset + f.size) as usize);
            let Some(got) = bytes.get(lo..hi) else {
                return Err((
                    f,
                    format!("bytes {lo}..{hi} lie past the struct's {}", bytes.len()),
                ));
            };
            let want = match f.kind {
                FieldKind::Flags => {
                    let bits = self
                        .flags
                        .iter()
                        .filter(|b| src.present(b.set))
                        .fold(0u32, |acc, b| acc | (1 << b.bit));
                    bits.to_le_bytes()[..(f.size as usize).min(4)].to_vec()
                }
                _ => match src.value_bytes(f.bind, f.size as usize) {
                    Some(v) => v,
                    None => return Err((f, format!("binds `{}`, which is no source", f.bind))),
                },
            };
            let want: Vec<u8> = want
                .into_iter()
                .chain(std::iter::repeat(0))
                .take(got.len())
                .collect();
            if got != want.as_slice() {
                return Err((
                    f,
                    format!(
                        "at bytes {lo}..{hi} does not hold its source `{}` after the set's bind",
                        f.bind
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_inline_aligned_and_bounded() {
        let b = ArgBytes::new(&[7u8; 300]).unwrap();
        assert_eq!(b.bytes().len(), 300);
        assert!(b.bytes().iter().all(|&x| x == 7));
        assert_eq!(b.as_ptr() as usize % 128, 0);
        assert!(ArgBytes::new(&vec![0u8; ArgBytes::CAPACITY + 1]).is_none());
    }

    fn two_fields(s: &ArgSources) -> ArgBytes {
        let mut v = Vec::new();
        v.extend(s.m.to_le_bytes());
        v.extend(s.n.to_le_bytes());
        ArgBytes::new(&v).unwrap()
    }

    fn swapped(s: &ArgSources) -> ArgBytes {
        let mut v = Vec::new();
        v.extend(s.n.to_le_bytes());
        v.extend(s.m.to_le_bytes());
        ArgBytes::new(&v).unwrap()
    }

    const FIELDS: [AbiFieldInfo; 2] = [
        AbiFieldInfo {
            name: "m",
            offset: 0,
            size: 4,
            bind: "m",
            kind: FieldKind::Value,
            location: "x.toml:3",
        },
        AbiFieldInfo {
            name: "n",
            offset: 4,
            size: 4,
            bind: "n",
            kind: FieldKind::Value,
            location: "x.toml:4",
        },
    ];

    #[test]
    fn the_abi_check_finds_a_field_the_bind_misplaces() {
        let good = AbiInfo {
            name: "T",
            size: 8,
            align: 4,
            fields: &FIELDS,
            flags: &[],
            location: "x.toml:1",
            bind: two_fields,
        };
        good.check().unwrap();
        let bad = AbiInfo {
            bind: swapped,
            ..good
        };
        let (field, why) = bad.check().unwrap_err();
        assert_eq!(field.name, "m");
        assert_eq!(field.location, "x.toml:3");
        assert!(why.contains("does not hold"), "{why}");
    }
}
