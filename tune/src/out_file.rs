//! Which of a tier's routes files a run rewrites: the one `--out` names, when the tier
//! includes it. Its routes are then an earlier tuning (kept unless beaten), and the routing
//! without them is the baseline the new file is written against.

use gemm_spec::Tier;
use std::path::Path;

/// The name (as the tier's routes name their file) of the routes file of `tier` that `out`
/// is, with `specs` the spec folder the tier was loaded from; `None` when the tier does not
/// include it (or it does not exist yet).
pub fn rewritten_name(specs: &Path, tier: &Tier, out: &Path) -> Option<String> {
    let out = out.canonicalize().ok()?;
    tier.routes_files.iter().find_map(|name| {
        let listed = specs.join(name).canonicalize().ok();
        (listed.as_deref() == Some(out.as_path())).then(|| name.clone())
    })
}
