//! Property-based fuzzing of the input parsers (proptest): the stack, the
//! floorplan, the CSV and .ptrace power traces, the CSV and PNG rasters and
//! the topopt problem file, each fed valid seeds mutated at random (bytes
//! inserted, deleted, replaced; numbers swapped for extreme values) and
//! plain random text. The property: a parser returns `Ok` or a typed error,
//! never panics, and what it accepts is finite and in range. The number of
//! cases per parser is `CUTH_FUZZ_CASES` (default 512, a few seconds each in
//! `cargo test`); a long run: `CUTH_FUZZ_CASES=200000 cargo test --release
//! --test solver fuzz_parsers::`.

use cuth::power::csv_raster::{parse_csv_raster, parse_png_raster};
use cuth::power::flp::parse_flp;
use cuth::power::ptrace::parse_ptrace;
use cuth::power::trace::parse_csv_trace;
use cuth::stack::Stack;
use cuth::topopt::custom::from_toml;
use cuth::topopt::presets::MeshRequest;
use proptest::prelude::*;
use std::path::Path;

fn cases() -> u32 {
    std::env::var("CUTH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const STACK: &str = include_str!("../../configs/mol_f2f.toml");
const FLP: &str = include_str!("../../configs/hotspot/ev6_3D_core_layer.flp");
const CSV_TRACE: &str = include_str!("../../configs/hotspot/ev6_burst.csv");
const PTRACE: &str = "IntExec FPMul Icache\n1.0 0.5 0.25\n2.0 0.25 0.5\n";
const RASTER: &str = "0,1,2\n# comment\n3,4,5\n";
const PROBLEM: &str = include_str!("../../configs/topopt/bracket.toml");

/// Tokens that have broken parsers before: extreme and non-finite numbers,
/// units, separators, TOML syntax.
const TOKENS: [&str; 20] = [
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "-0",
    "0",
    "18446744073709551615",
    "\"1e30 m\"",
    "\"-10 um\"",
    ",",
    "\n",
    "#",
    "[",
    "]",
    "=",
    "\"",
    "[[layers]]",
    "x",
    "65536",
];

#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, String),
    Delete(usize, usize),
    Token(usize, usize),
    Number(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), "[ -~\\n]{0,8}").prop_map(|(i, s)| Edit::Insert(i, s)),
        (any::<usize>(), 0usize..40).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), 0usize..TOKENS.len()).prop_map(|(i, t)| Edit::Token(i, t)),
        (any::<usize>(), 0usize..TOKENS.len()).prop_map(|(i, t)| Edit::Number(i, t)),
    ]
}

fn boundary(s: &str, i: usize) -> usize {
    let mut i = i % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `seed` with `edits` applied; `Number` replaces the next number.
fn mutate(seed: &str, edits: &[Edit]) -> String {
    let mut s = seed.to_string();
    for e in edits {
        match e {
            Edit::Insert(i, t) => {
                let i = boundary(&s, *i);
                s.insert_str(i, t);
            }
            Edit::Delete(i, n) => {
                let a = boundary(&s, *i);
                let b = boundary(&s, a + n);
                s.replace_range(a..b.max(a), "");
            }
            Edit::Token(i, t) => {
                let i = boundary(&s, *i);
                s.insert_str(i, TOKENS[*t]);
            }
            Edit::Number(i, t) => {
                let i = boundary(&s, *i);
                if let Some(off) = s[i..].find(|c: char| c.is_ascii_digit()) {
                    let a = i + off;
                    let len = s[a..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                        .unwrap_or(s.len() - a);
                    s.replace_range(a..a + len, TOKENS[*t]);
                }
            }
        }
    }
    s
}

fn text(seed: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(edit(), 1..6).prop_map(move |e| mutate(seed, &e)),
        1 => "[ -~\\n]{0,200}",
    ]
}

fn file() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/fuzz.toml"))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn stack_parser(t in text(STACK)) {
        if let Ok(stack) = Stack::from_toml(&t, file()) {
            prop_assert!(stack.width_m.is_finite() && stack.width_m > 0.0);
            prop_assert!(stack.layers.iter().all(|l| l.thickness_m.is_finite() && l.thickness_m > 0.0));
            let _ = stack.cells();
        }
    }

    #[test]
    fn floorplan_parser(t in text(FLP)) {
        if let Ok(units) = parse_flp(&t, Path::new("f.flp")) {
            for u in units {
                prop_assert!(u.rect.x1 > u.rect.x0 && u.rect.y1 > u.rect.y0);
                prop_assert!(u.rect.x1.is_finite() && u.rect.y1.is_finite());
            }
        }
    }

    #[test]
    fn csv_trace_parser(t in text(CSV_TRACE)) {
        if let Ok(trace) = parse_csv_trace(&t, Path::new("t.csv")) {
            prop_assert!(!trace.rows.is_empty());
            for r in &trace.rows {
                prop_assert_eq!(r.len(), trace.names.len());
                prop_assert!(r.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
            let _ = trace.row_at(1e9);
        }
    }

    #[test]
    fn ptrace_parser(t in text(PTRACE)) {
        if let Ok(p) = parse_ptrace(&t, Path::new("p.ptrace")) {
            prop_assert!(p.mean().iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn csv_raster_parser(t in text(RASTER)) {
        if let Ok(r) = parse_csv_raster(t.as_bytes(), Path::new("r.csv")) {
            prop_assert_eq!(r.values.len(), r.rows * r.cols);
            prop_assert!(r.values.iter().all(|v| v.is_finite() && *v >= 0.0));
        }
    }

    #[test]
    fn png_raster_parser(
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = png_seed();
        for (i, b) in edits {
            let i = i % bytes.len();
            bytes[i] = b;
        }
        bytes.truncate(1 + cut % bytes.len());
        if let Ok(r) = parse_png_raster(&bytes, Path::new("r.png")) {
            prop_assert_eq!(r.values.len(), r.rows * r.cols);
        }
    }

    #[test]
    fn topopt_problem_parser(t in text(PROBLEM)) {
        let req = MeshRequest { nelx: Some(8), nely: None, nelz: None };
        if let Ok(p) = from_toml(&t, "fuzz.toml", "fuzz", &req) {
            prop_assert!(p.volfrac > 0.0 && p.volfrac < 1.0);
            prop_assert!(p.h.is_finite() && p.h > 0.0);
        }
    }
}

/// A small valid gray PNG.
fn png_seed() -> Vec<u8> {
    let img = image::GrayImage::from_fn(5, 3, |x, y| image::Luma([(x * 40 + y * 7) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}
