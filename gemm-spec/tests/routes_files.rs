//! Routes files: a tier's `routes_files` (and a build's added files) merge before the tier's
//! own routes, are located `file:line` like every spec error, and pass every route-table rule
//! on the merged table.

mod support;

use gemm_spec::{DtypeTriple, Op, Policy, SpecSource, TierRoutesFile, Validated};
use std::path::{Path, PathBuf};

const SHARED: &str = r#"
[instruction.fma]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [5, 0]

[contract.fma-k256]
doc = "K in chunks of 256, one f32 fma chain each, the chunks added in order"
chunk = 256

[contract.fma-pair]
doc = "two interleaved chains, added at the end"

[abi.GemmArgs]
fields = [
  { name = "a", type = "const_ptr" },
  { name = "c", type = "mut_ptr" },
  { name = "m", type = "i32" },
  { name = "beta", type = "f32" },
]

[family.fma]
template = "fma_gemm"
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
variants.nn = ["f32.f32.f32"]

[family.fmb]
template = "fma_pair_gemm"
contract = "fma-pair"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
variants.nn = ["f32.f32.f32"]
"#;

/// A tier with two fma-k256 tiles split at m = 64, and an fma-pair tile routed nowhere.
fn tier(routes_files: Option<&str>) -> String {
    let list = routes_files.map_or(String::new(), |l| format!("routes_files = {l}\n"));
    format!(
        r#"[tier]
name = "sm90a"
gencode = "arch=compute_90a,code=sm_90a"
compute_capability = [9, 0]
max_shared_bytes = 232448
families = ["fma", "fmb"]
{list}
[[tile]]
family = "fma"
name = "thin"
m = 8
n = 64
k = 32
thread_m = 1
thread_n = 2

[[tile]]
family = "fma"
name = "tiled"
m = 128
n = 128
k = 8
stages = 2
thread_m = 8
thread_n = 8

[[tile]]
family = "fmb"
name = "wide"
m = 64
n = 64
k = 16
thread_m = 4
thread_n = 4

[[route]]
policy = "exact"
op = "nn"
dtype = "any"
m = {{ max = 64 }}
kernel = "fma.thin"

[[route]]
policy = "exact"
op = "nn"
dtype = "any"
kernel = "fma.tiled"
"#
    )
}

/// A routes file sending m <= 64 at (n, k) = (4096, 4096) to `kernel`.
fn tuned(kernel: &str) -> String {
    format!(
        r#"# Tuned routes of tier sm90a (test).

[[route]]
policy = "exact"
op = "nn"
dtype = "any"
m = {{ max = 64 }}
n = {{ min = 4096, max = 4096 }}
k = {{ min = 4096, max = 4096 }}
kernel = "{kernel}"
"#
    )
}

fn src(file: &str, text: &str) -> SpecSource {
    SpecSource {
        file: file.into(),
        text: text.into(),
    }
}

fn load(files: &[(&str, &str)]) -> Result<Validated, Vec<String>> {
    let sources: Vec<SpecSource> = files.iter().map(|(f, t)| src(f, t)).collect();
    support::load_sources(&sources).map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

const F32: DtypeTriple = DtypeTriple::new(
    gemm_spec::Dtype::F32,
    gemm_spec::Dtype::F32,
    gemm_spec::Dtype::F32,
);

/// The kernel (`family.tile`) and the route's location at (m, n, k), exact nn f32.
fn routed(v: &Validated, m: u64, n: u64, k: u64) -> (String, String) {
    let t = v.specs.tier("sm90a").unwrap();
    let r = t.select(Policy::Exact, Op::Nn, F32, m, n, k).unwrap();
    (r.kernel_ref(), r.location.to_string())
}

#[test]
fn a_listed_routes_file_comes_before_the_tiers_own_routes() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = tuned("fma.tiled");
    let v = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        ("sm90a.tuned.toml", &tuned),
    ])
    .unwrap();
    let t = v.specs.tier("sm90a").unwrap();
    assert_eq!(t.routes_files, ["sm90a.tuned.toml"]);
    assert_eq!(t.routes.len(), 3);
    assert_eq!(t.routes[0].rule, 1);
    assert_eq!(t.routes[0].location.to_string(), "sm90a.tuned.toml:3");
    // The tier's own routes follow, numbered after it.
    assert_eq!(t.routes[1].rule, 2);
    assert_eq!(t.routes[1].location.file, "sm90a.toml");
    assert_eq!(
        routed(&v, 8, 4096, 4096),
        ("fma.tiled".into(), "sm90a.tuned.toml:3".into())
    );
    // Elsewhere the hand-written routes still decide.
    assert_eq!(routed(&v, 8, 4096, 1024).0, "fma.thin");
    assert_eq!(routed(&v, 8, 4095, 4096).0, "fma.thin");
    assert_eq!(routed(&v, 65, 4096, 4096).0, "fma.tiled");
}

#[test]
fn a_bad_route_in_a_routes_file_is_located_at_its_line() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = tuned("fma.nope");
    let e = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        ("sm90a.tuned.toml", &tuned),
    ])
    .unwrap_err();
    assert_eq!(
        e,
        ["sm90a.tuned.toml:3: route 1: kernel `fma.nope` names tile nope, which tier sm90a does not define for fma (tiles: thin, tiled)"]
    );
}

#[test]
fn a_routes_file_holds_routes_alone() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = format!(
        "{}\n[[tile]]\nfamily = \"fma\"\nname = \"x\"\nm = 8\nn = 8\nk = 8\n",
        tuned("fma.tiled")
    );
    let e = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        ("sm90a.tuned.toml", &tuned),
    ])
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("sm90a.tuned.toml:12: unknown field `tile`"),
        "{e:?}"
    );
    assert!(
        e[0].ends_with("a routes file holds [[route]] tables alone (tiles and [tier] keys belong in the tier file)"),
        "{e:?}"
    );
    // A TOML mistake is located in the routes file too.
    let e = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        (
            "sm90a.tuned.toml",
            "\n[[route]]\npolicy = \"exact\"\npolicy = \"exact\"\n",
        ),
    ])
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("sm90a.tuned.toml:4: duplicate key"),
        "{e:?}"
    );
}

#[test]
fn a_missing_routes_file_is_an_error_at_the_tier_files_line() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let e = load(&[("families.toml", SHARED), ("sm90a.toml", &tier)]).unwrap_err();
    assert_eq!(
        e,
        ["sm90a.toml:7: tier sm90a: routes file `sm90a.tuned.toml` does not exist (`sm90a.tuned.toml` in the spec folder): write it (gemm-aot tune --out) or take it out of `routes_files`"]
    );
}

#[test]
fn bad_routes_files_entries_are_refused() {
    for (list, expected) in [
        (
            r#"["/elsewhere/x.toml"]"#,
            "sm90a.toml:7: tier sm90a: routes file `/elsewhere/x.toml` is an absolute path; name it relative to sm90a.toml, so the spec folder can move",
        ),
        (
            "[]",
            "sm90a.toml:1: tier sm90a: `routes_files = []` lists nothing; name the routes files the tier includes, or leave the key out",
        ),
    ] {
        let tier = tier(Some(list));
        let e = load(&[("families.toml", SHARED), ("sm90a.toml", &tier)]).unwrap_err();
        assert_eq!(e, [expected], "{list}");
    }
    let tier = tier(Some(r#"["a.toml", "./a.toml"]"#));
    let tuned = tuned("fma.tiled");
    let e = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        ("a.toml", &tuned),
    ])
    .unwrap_err();
    assert_eq!(
        e,
        ["sm90a.toml:7: tier sm90a: routes file `./a.toml` is listed twice in `routes_files`; the first is at sm90a.toml:7"]
    );
}

#[test]
fn a_tuned_route_to_another_contract_breaks_invariance() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = tuned("fmb.wide");
    let e = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &tier),
        ("sm90a.tuned.toml", &tuned),
    ])
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("batch invariance broken in tier sm90a for exact nn f32.f32.f32: at n = 4096, k = 4096, m = 0 takes route 1 (fmb.wide, contract fma-pair) but m = 65 takes route 3 (fma.tiled, contract fma-k256)"),
        "{e:?}"
    );
}

#[test]
fn a_builds_routes_file_comes_first_and_names_a_tier_of_the_specs() {
    let tier = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = tuned("fma.tiled");
    let sources = [
        src("families.toml", SHARED),
        src("sm90a.toml", &tier),
        src("sm90a.tuned.toml", &tuned),
    ];
    let added = |tier: &str| TierRoutesFile {
        tier: tier.into(),
        source: src(
            "model/extra.toml",
            &self::tuned("fma.thin").replace("max = 64", "max = 16"),
        ),
    };
    let v = gemm_spec::load_sources_with_routes(
        &sources,
        &support::kinds(),
        &support::defaults(),
        &[added("sm90a")],
    )
    .unwrap();
    let t = v.specs.tier("sm90a").unwrap();
    assert_eq!(t.routes_files, ["model/extra.toml", "sm90a.tuned.toml"]);
    assert_eq!(
        routed(&v, 8, 4096, 4096),
        ("fma.thin".into(), "model/extra.toml:3".into())
    );
    assert_eq!(routed(&v, 17, 4096, 4096).0, "fma.tiled");
    let e = gemm_spec::load_sources_with_routes(
        &sources,
        &support::kinds(),
        &support::defaults(),
        &[added("sm99")],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "model/extra.toml:0: tier sm99: routes file `model/extra.toml` is added to tier sm99, which the specs do not define (tiers: sm90a)"
    );
}

#[test]
fn a_derived_tier_takes_its_bases_routes_but_not_its_routes_files() {
    let base = tier(Some(r#"["sm90a.tuned.toml"]"#));
    let tuned = tuned("fma.tiled");
    let derived = "[tier]\nname = \"sm80\"\nbase = \"sm90a\"\ngencode = \"arch=compute_80,code=sm_80\"\ncompute_capability = [8, 0]\nmax_shared_bytes = 166912\n";
    let v = load(&[
        ("families.toml", SHARED),
        ("sm90a.toml", &base),
        ("sm90a.tuned.toml", &tuned),
        ("sm80.toml", derived),
    ])
    .unwrap();
    let t = v.specs.tier("sm80").unwrap();
    assert!(t.routes_files.is_empty());
    assert_eq!(t.routes.len(), 2);
    assert!(t.routes.iter().all(|r| r.location.file == "sm90a.toml"));
}

/// A fresh folder under the system's temp folder.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gemm-spec-routes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_folder_reads_routes_files_beside_and_below_the_tier_file() {
    let dir = temp_dir("folder");
    let tier = tier(Some(r#"["sm90a.tuned.toml", "tuned/llama.toml"]"#));
    std::fs::write(dir.join("families.toml"), SHARED).unwrap();
    std::fs::write(dir.join("sm90a.toml"), tier).unwrap();
    std::fs::write(dir.join("sm90a.tuned.toml"), tuned("fma.tiled")).unwrap();
    std::fs::create_dir_all(dir.join("tuned")).unwrap();
    std::fs::write(
        dir.join("tuned/llama.toml"),
        tuned("fma.tiled").replace("4096", "1024"),
    )
    .unwrap();
    let v = support::load_dir(&dir).unwrap();
    let t = v.specs.tier("sm90a").unwrap();
    assert_eq!(t.routes_files, ["sm90a.tuned.toml", "tuned/llama.toml"]);
    assert_eq!(
        routed(&v, 8, 1024, 1024),
        ("fma.tiled".into(), "tuned/llama.toml:3".into())
    );
    // Unlisted, the file of routes alone is a stray file.
    std::fs::write(dir.join("sm90a.toml"), self::tier(None)).unwrap();
    let e = support::load_dir(&dir).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sm90a.tuned.toml:3: routes in a file without a [tier] table: tiles and routes belong to the tier of their file; a file of routes alone is a routes file, which a tier lists in `routes_files`"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The shipped specs copied into a temp folder, with `routes` as sm90a's routes file.
fn shipped_with_routes(name: &str, routes: &str) -> PathBuf {
    let dir = temp_dir(name);
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    for e in std::fs::read_dir(&specs).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let mut text = std::fs::read_to_string(&p).unwrap();
            // The shipped tier may list its tuned file already; that file is replaced below.
            if p.file_name().is_some_and(|f| f == "sm90a.toml")
                && !text.contains("\nroutes_files = ")
            {
                let families = text.find("\nfamilies = ").unwrap();
                let end = families + 1 + text[families + 1..].find('\n').unwrap();
                text.insert_str(end + 1, "routes_files = [\"sm90a.tuned.toml\"]\n");
            }
            std::fs::write(dir.join(p.file_name().unwrap()), text).unwrap();
        }
    }
    std::fs::write(dir.join("sm90a.tuned.toml"), routes).unwrap();
    dir
}

#[test]
fn the_shipped_sm90a_tier_takes_a_tuned_routes_file() {
    let routes = r#"# Tuned routes of tier sm90a (test).
[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
m = { min = 17, max = 64 }
n = { min = 4096, max = 4096 }
k = { min = 4096, max = 4096 }
kernel = "tcwide.mid"
unaligned = "tcmma.any"
"#;
    let dir = shipped_with_routes("shipped", routes);
    let v = support::load_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let t = v.specs.tier("sm90a").unwrap();
    let bf16 = "bf16.bf16.f32".parse::<DtypeTriple>().unwrap();
    let at = |m, n| {
        t.select(Policy::TensorCore, Op::Nn, bf16, m, n, 4096)
            .unwrap()
            .kernel_ref()
    };
    assert_eq!(at(64, 4096), "tcwide.mid");
    assert_eq!(at(64, 4608), "tcwide.mid64");
    assert_eq!(at(16, 4096), "tcdec.dec32");
    std::fs::remove_dir_all(&dir).unwrap();
}
