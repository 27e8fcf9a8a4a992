//! M buckets: the m ranges a tuned route covers. One kernel is chosen per (n, k) and bucket,
//! from its times at a few batch sizes in the bucket, and the route names the whole range.
//!
//! The default edges, m <= 16, 17-32, 33-64, 65-128, 129-256, 257-512, 513-1024, 1025-2048
//! and above, hold one measured m of the usual list each above 16 rows: the best tile changes
//! from one power of two to the next as the row tiles fill the SMs (on the H200's times one
//! kernel per wider bucket lost 2-6% at m = 65-1024 against one per m). They include the
//! shipped sm90a tier's own cuts (16, 32, 64, 128, 256, 1024), so a bucket that does not
//! straddle a hand-written cut lets a tuned route replace exactly one kernel.

/// An inclusive m range; `max = None` has no upper end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Bucket {
    pub min: u64,
    pub max: Option<u64>,
}

impl Bucket {
    pub fn contains(&self, m: u64) -> bool {
        m >= self.min && self.max.is_none_or(|max| m <= max)
    }

    /// `<= 16`, `17-64`, `>= 1025`.
    pub fn label(&self) -> String {
        match (self.min, self.max) {
            (0, Some(max)) => format!("<= {max}"),
            (min, Some(max)) => format!("{min}-{max}"),
            (min, None) => format!(">= {min}"),
        }
    }

    /// The m values measured for this bucket: those of the shape list that fall in it, or,
    /// when none does, its midpoint and upper end (an open last bucket: twice and four times
    /// its lower end, rounded to a power of two).
    pub fn measured_at(&self, list: &[u64]) -> Vec<u64> {
        let mut v: Vec<u64> = list.iter().copied().filter(|&m| self.contains(m)).collect();
        if v.is_empty() {
            v = match self.max {
                Some(max) => vec![(self.min.max(1) + max).div_ceil(2), max],
                None => {
                    let lo = self.min.max(1).next_power_of_two();
                    vec![2 * lo, 4 * lo]
                }
            };
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The buckets, in ascending m, covering every m from 0 up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buckets(Vec<Bucket>);

/// Why a list of bucket edges cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("m bucket edges {edges:?}: {problem}")]
pub struct BucketsError {
    pub edges: Vec<u64>,
    pub problem: &'static str,
}

/// The upper edges of the default buckets.
pub const DEFAULT_EDGES: [u64; 8] = [16, 32, 64, 128, 256, 512, 1024, 2048];

impl Default for Buckets {
    fn default() -> Self {
        Buckets::from_edges(&DEFAULT_EDGES).unwrap_or(Buckets(Vec::new()))
    }
}

impl Buckets {
    /// Buckets from their upper edges: `[16, 64]` is m <= 16, 17-64 and >= 65.
    pub fn from_edges(edges: &[u64]) -> Result<Buckets, BucketsError> {
        let err = |problem| BucketsError {
            edges: edges.to_vec(),
            problem,
        };
        if edges.first() == Some(&0) {
            return Err(err("the first edge must be at least 1"));
        }
        if edges.windows(2).any(|w| w[0] >= w[1]) {
            return Err(err("edges must rise"));
        }
        if edges.last().is_some_and(|&e| e >= gemm_spec::DIM_MAX) {
            return Err(err(
                "edges must lie below the largest dimension, 2147483647",
            ));
        }
        let mut v = Vec::with_capacity(edges.len() + 1);
        let mut min = 0;
        for &e in edges {
            v.push(Bucket { min, max: Some(e) });
            min = e + 1;
        }
        v.push(Bucket { min, max: None });
        Ok(Buckets(v))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Bucket> {
        self.0.iter()
    }

    pub fn labels(&self) -> Vec<String> {
        self.0.iter().map(Bucket::label).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_buckets_and_their_measured_m() {
        let b = Buckets::default();
        assert_eq!(
            b.labels(),
            [
                "<= 16",
                "17-32",
                "33-64",
                "65-128",
                "129-256",
                "257-512",
                "513-1024",
                "1025-2048",
                ">= 2049"
            ]
        );
        let list = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
        let at: Vec<Vec<u64>> = b.iter().map(|b| b.measured_at(&list)).collect();
        assert_eq!(
            at,
            [
                vec![1, 8, 16],
                vec![32],
                vec![64],
                vec![128],
                vec![256],
                vec![512],
                vec![1024],
                vec![2048],
                vec![4096]
            ]
        );
        let old = Buckets::from_edges(&[16, 64, 256, 1024]).unwrap();
        let at: Vec<Vec<u64>> = old.iter().map(|b| b.measured_at(&list)).collect();
        assert_eq!(at[1], [32, 64]);
        let at: Vec<Vec<u64>> = old.iter().map(|b| b.measured_at(&[])).collect();
        assert_eq!(
            at,
            [
                vec![9, 16],
                vec![41, 64],
                vec![161, 256],
                vec![641, 1024],
                vec![4096, 8192]
            ]
        );
    }

    #[test]
    fn edges_must_rise_from_one() {
        assert!(Buckets::from_edges(&[0, 4]).is_err());
        assert!(Buckets::from_edges(&[64, 16]).is_err());
        assert_eq!(Buckets::from_edges(&[]).unwrap().labels(), [">= 0"]);
    }
}
