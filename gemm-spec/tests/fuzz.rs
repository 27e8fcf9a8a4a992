//! Property tests: malformed and random specs give errors, never a panic.

mod support;

use gemm_spec::SpecSource;
use proptest::prelude::*;
use support::load_sources;

fn shipped() -> Vec<SpecSource> {
    let dir = std::path::Path::new("../specs");
    let mut v: Vec<SpecSource> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| SpecSource {
            file: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap(),
        })
        .collect();
    v.sort_by(|a, b| a.file.cmp(&b.file));
    v
}

/// Values a mutation may write in place of a number or a word.
const REPLACEMENTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "4294967295",
    "18446744073709551615",
    "\"\"",
    "\"x\"",
    "[]",
    "{}",
    "\"any\"",
    "\"nn\"",
    "\"fma.thin\"",
    "\"f32.f32.f32\"",
    "true",
    "1.5",
    "[9, 0]",
    "[99, 99]",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = load_sources(&[SpecSource { file: "x.toml".into(), text }]);
    }

    #[test]
    fn random_toml_shapes_never_panic(
        tier in "[a-z0-9]{0,6}",
        cc in (0u32..20, 0u32..10),
        smem in 0u64..300_000,
        m in prop_oneof![0u32..300, Just(u32::MAX)], n in prop_oneof![0u32..300, Just(u32::MAX)],
        k in prop_oneof![0u32..300, Just(u32::MAX)],
        tm in 0u32..20, tn in 0u32..20, stages in prop_oneof![0u32..4, Just(u32::MAX)],
        rmin in 0u64..100, rmax in 0u64..100,
    ) {
        let mut files = shipped();
        let text = format!(
            "[tier]\nname = \"{tier}\"\ngencode = \"arch=compute_{0}{1},code=sm_{0}{1}\"\ncompute_capability = [{0}, {1}]\n\
             max_shared_bytes = {smem}\nmax_registers_per_thread = 255\nfamilies = [\"fma\"]\n\
             [[tile]]\nfamily = \"fma\"\nname = \"t\"\nm = {m}\nn = {n}\nk = {k}\nstages = {stages}\nthread_m = {tm}\nthread_n = {tn}\n\
             [[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nm = {{ min = {rmin}, max = {rmax} }}\nkernel = \"fma.t\"\n",
            cc.0, cc.1
        );
        files.push(SpecSource { file: "zz.toml".into(), text });
        let _ = load_sources(&files);
    }

    #[test]
    fn mutated_shipped_specs_never_panic(
        file in any::<prop::sample::Index>(),
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..REPLACEMENTS.len(), 0u8..3), 1..4),
    ) {
        let mut files = shipped();
        let count = files.len();
        let f = &mut files[file.index(count)];
        for (at, rep, kind) in cuts {
            // Replace a token, delete a line, or duplicate a line.
            let lines: Vec<String> = f.text.lines().map(str::to_string).collect();
            let i = at.index(lines.len().max(1));
            let mut out = lines.clone();
            match kind {
                0 => {
                    if let Some(line) = out.get_mut(i) {
                        if let Some((key, _)) = line.split_once('=') {
                            *line = format!("{key}= {}", REPLACEMENTS[rep]);
                        }
                    }
                }
                1 => { if i < out.len() { out.remove(i); } }
                _ => { if let Some(l) = lines.get(i) { out.insert(i, l.clone()); } }
            }
            f.text = out.join("\n");
        }
        let _ = load_sources(&files);
    }
}
