//! The hasher of the maps a call consults on its way to the launch (span ids, base addresses,
//! kernel ids, tensor-map geometry, stream handles, the dispatch memo). std's SipHash resists
//! keys an adversary chooses and costs 40-60 instructions a word; these keys are the process's
//! own ids and device addresses, and a raw call hashes a dozen of them. Each word costs a
//! rotate, an xor and a multiply (the Fx scheme); `finish` applies murmur3's finalizer, so
//! aligned addresses (low bits zero) still spread over a table's bucket bits.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, non-keyed hasher for trusted integer-like keys (see the module's docs).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// murmur3's 64-bit finalizer: every input bit reaches every output bit.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        mix64(self.0)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length keeps "ab" and "ab\0" apart.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }
    #[inline]
    fn write_u16(&mut self, x: u16) {
        self.add(u64::from(x));
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    #[inline]
    fn write_i32(&mut self, x: i32) {
        self.add(x as u32 as u64);
    }
    #[inline]
    fn write_i64(&mut self, x: i64) {
        self.add(x as u64);
    }
    #[inline]
    fn write_isize(&mut self, x: isize) {
        self.add(x as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(t: &T) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(t)
    }

    #[test]
    fn aligned_addresses_spread_over_the_buckets() {
        // Device allocations are 512-byte aligned: their hashes must still spread over a
        // table's bucket bits, or every lookup would walk one chain.
        let buckets: HashSet<u64> = (0..1024u64)
            .map(|i| hash(&(0x7f00_0000_0000 + i * 512)) & 1023)
            .collect();
        assert!(buckets.len() > 600, "{} buckets of 1024", buckets.len());
    }

    #[test]
    fn keys_of_several_words_that_differ_in_one_hash_apart() {
        // A geometry key: the same words in other fields, or one word changed, must not collide.
        let keys = [
            (0x7f00_0000_0000u64, 64u64, 128u64, 128u64),
            (0x7f00_0000_0000, 128, 64, 128),
            (0x7f00_0000_0000, 64, 128, 64),
            (0x7f00_0000_0200, 64, 128, 128),
            (0x7f00_0000_0000, 64, 129, 128),
        ];
        let hashes: HashSet<u64> = keys.iter().map(hash).collect();
        assert_eq!(hashes.len(), keys.len());
        let bytes: HashSet<u64> = [&b"ab"[..], b"ab\0", b"ab\0\0\0\0\0\0\0"]
            .iter()
            .map(|b| {
                let mut h = FastHasher::default();
                h.write(b);
                h.finish()
            })
            .collect();
        assert_eq!(bytes.len(), 3, "trailing zero bytes change the hash");
    }

    #[test]
    fn a_map_with_it_finds_what_it_holds() {
        let mut m: FastMap<(u64, u32), usize> = FastMap::default();
        for i in 0..5000u64 {
            m.insert((i * 4096, (i % 7) as u32), i as usize);
        }
        assert!((0..5000u64).all(|i| m.get(&(i * 4096, (i % 7) as u32)) == Some(&(i as usize))));
        assert_eq!(m.get(&(4096, 0)), None);
    }
}
