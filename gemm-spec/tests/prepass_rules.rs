//! A family's `prepass = "transpose-a"` (tn kernels that read A's transposed copy, as nn): the
//! shipped families that have one are tn-only, are instantiated for nn's layout and find the
//! transposing conversion of their inputs; a prepass on another op, an unknown prepass, one
//! without its conversion, and a transposing conversion between two types are refused, naming
//! what is wrong.

mod support;

use gemm_spec::{ConversionKind, Op, Prepass};

fn errors(sources: &[gemm_spec::SpecSource]) -> Vec<String> {
    match support::load_sources(sources) {
        Ok(_) => panic!("the edited specs validated"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn shipped_prepass_families_are_tn_read_as_nn_and_have_their_conversion() {
    let v = support::load_dir(&support::root().join("specs")).unwrap();
    let mut checked = 0;
    for f in v.specs.families.values() {
        if f.prepass == Prepass::None {
            // Every other family reads the layout it serves.
            for &(op, _) in &f.variants {
                assert_eq!(f.layout(op), op, "{}", f.name);
            }
            continue;
        }
        for &(op, d) in &f.variants {
            assert_eq!(op, Op::Tn, "{}: a transposed A is a tn call's", f.name);
            assert_eq!(f.layout(op), Op::Nn, "{}", f.name);
            assert!(
                v.specs.conversions.values().any(|c| {
                    c.variants.contains(&(d.ab, d.ab))
                        && c.kind_of(d.ab, d.ab) == Some(ConversionKind::Transpose)
                }),
                "{}: no transposing conversion of {}",
                f.name,
                d.ab
            );
            checked += 1;
        }
    }
    // A tier's tiles of such a family derive nn's numbers (no third barrier a stage).
    for tier in &v.specs.tiers {
        for tile in &tier.tiles {
            let f = &v.specs.families[&tile.family];
            for &(op, d) in f.variants.iter().filter(|_| f.prepass != Prepass::None) {
                let as_served = v.specs.derive(tier, tile, op, d).unwrap().unwrap();
                let as_read = v.specs.derive(tier, tile, Op::Nn, d).unwrap().unwrap();
                assert_eq!(as_served.shared_bytes, as_read.shared_bytes);
                assert_eq!(as_served.tensor_maps, as_read.tensor_maps);
            }
        }
    }
    eprintln!("{checked} prepass variants checked");
}

#[test]
fn a_prepass_on_an_nn_variant_is_refused() {
    let sources = support::shipped_with("families.toml", |t| {
        t.replacen(
            "prepass = \"transpose-a\"\nvariants.tn = [\"f32.f32.f32\"]",
            "prepass = \"transpose-a\"\nvariants.tn = [\"f32.f32.f32\"]\nvariants.nn = [\"f32.f32.f32\"]",
            1,
        )
    });
    let e = errors(&sources);
    assert!(
        e.iter()
            .any(|e| e.contains("prepass `transpose-a`") && e.contains("variants.nn")),
        "{e:?}"
    );
}

#[test]
fn an_unknown_prepass_is_refused_naming_the_one_there_is() {
    let sources = support::shipped_with("families.toml", |t| {
        t.replacen(
            "prepass = \"transpose-a\"\nvariants",
            "prepass = \"transpose-b\"\nvariants",
            1,
        )
    });
    let e = errors(&sources);
    assert!(
        e.iter()
            .any(|e| e.contains("`transpose-b` is not a prepass") && e.contains("transpose-a")),
        "{e:?}"
    );
}

#[test]
fn a_prepass_without_its_transposing_conversion_is_refused() {
    let sources = support::shipped_with("families.toml", |t| {
        t.replacen(
            "template = \"transpose_matrix\"\nabi = \"ConvertArgs\"\nthreads = 256\nvariants = [\"f32.f32\"]",
            "template = \"transpose_matrix\"\nabi = \"ConvertArgs\"\nthreads = 256\nvariants = [\"bf16.bf16\"]",
            1,
        )
    });
    let e = errors(&sources);
    assert!(
        e.iter()
            .any(|e| e.contains("needs a transposing conversion of f32")),
        "{e:?}"
    );
}

#[test]
fn a_transposing_conversion_between_two_types_is_refused() {
    let sources = support::shipped_with("families.toml", |t| {
        t.replacen(
            "template = \"transpose_matrix\"\nabi = \"ConvertArgs\"\nthreads = 256\nvariants = [\"f32.f32\"]",
            "template = \"transpose_matrix\"\nabi = \"ConvertArgs\"\nthreads = 256\nvariants = [\"f32.f32\", \"bf16.f32\"]",
            1,
        )
    });
    let e = errors(&sources);
    assert!(
        e.iter()
            .any(|e| e.contains("`bf16.f32`") && e.contains("copies a type to itself")),
        "{e:?}"
    );
}

#[test]
fn a_prepass_family_of_a_kind_without_tma_is_refused() {
    // The copy is made on the TMA kernels' repack path, whose routes always have an unaligned
    // kernel: a plain-load kind could be named as one and run on A as stored.
    let sources = support::shipped_with("families.toml", |t| {
        let at = t.find("[family.tcwide32tncopy]").unwrap();
        let end = at + t[at..].find("\n\n").unwrap();
        let family =
            t[at..end].replace("template = \"wgmma_tf32_gemm\"", "template = \"mma_gemm\"");
        format!("{}{family}{}", &t[..at], &t[end..])
    });
    let e = errors(&sources);
    assert!(
        e.iter().any(|e| e.contains("prepass `transpose-a`")
            && e.contains("needs a kind that reads A and B through TMA")),
        "{e:?}"
    );
}

#[test]
fn only_a_conversion_kind_may_say_it_transposes() {
    let mut files = support::template_files();
    let (_, text) = files
        .iter_mut()
        .find(|(p, _)| p.ends_with("mma/mma_gemm.toml"))
        .unwrap();
    *text = text.replacen("[kind]\n", "[kind]\ntransposes = true\n", 1);
    let e = match gemm_spec::KindLibrary::from_files(
        files.iter().map(|(p, t)| (p.as_str(), t.as_str())),
    ) {
        Ok(_) => panic!("a gemm kind that transposes was accepted"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
    };
    assert!(e.iter().any(|e| e.contains("says `transposes`")), "{e:?}");
}
