//! Values that bypassed the stack file's checks (a sweep case's power, a
//! material law written in two forms): each must exit 2 naming the file and
//! the field, and write nothing.

use crate::util::cli::*;

const BLOCK: &str = "{ type = \"blocks\", blocks = [{ name = \"b\", x = \"0 mm\", y = \"0 mm\", \
                     width = \"1 mm\", height = \"1 mm\", power = 1e300 }] }";

#[test]
fn sweep_manifest_power_is_range_checked_like_the_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = write(tmp.path(), "s.toml", &die(""));
    let manifest = write(
        tmp.path(),
        "m.toml",
        &format!("[[case]]\nname = \"hot\"\npower.die = {BLOCK}\n"),
    );
    let out = tmp.path().join("o");
    let args = [
        "sweep",
        s(&stack),
        s(&manifest),
        "--device",
        "cpu",
        "--out",
        s(&out),
    ];
    input_error(&args, &out, &["m.toml", "case[0] (hot).power.die", "1e300"]);
}

#[test]
fn sweep_csv_manifest_power_is_range_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = write(tmp.path(), "s.toml", &die(""));
    let manifest = write(tmp.path(), "m.csv", "case,layer,power\nhot,die,1e300\n");
    let out = tmp.path().join("o");
    let args = [
        "sweep",
        s(&stack),
        s(&manifest),
        "--device",
        "cpu",
        "--out",
        s(&out),
    ];
    input_error(&args, &out, &["m.csv:2", "case `hot`", "1e300"]);
}

#[test]
fn a_law_in_two_forms_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let text = die("").replace("k = 130", "k = { k300 = 130, exponent = 1, poly = [1] }");
    let stack = write(tmp.path(), "s.toml", &text);
    let out = tmp.path().join("o");
    let mut args = vec!["solve", s(&stack), "--out", s(&out)];
    args.extend(SMALL);
    input_error(&args, &out, &["s.toml", "{ k300, exponent }", "{ poly }"]);
}

#[test]
fn a_power_law_missing_its_exponent_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = die("").replace("k = 130", "k = { k300 = 130 }");
    let stack = write(tmp.path(), "s.toml", &text);
    let out = tmp.path().join("o");
    let mut args = vec!["solve", s(&stack), "--out", s(&out)];
    args.extend(SMALL);
    input_error(&args, &out, &["s.toml", "needs `exponent`"]);
}

#[test]
fn an_init_state_far_outside_the_temperature_range_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = write(tmp.path(), "s.toml", &die(""));
    let (header, mut t) = solve_state(&stack, tmp.path(), "real");
    t[3] = 1e300;
    let mut bytes = format!("{header}\n").into_bytes();
    for v in &t {
        bytes.extend(v.to_le_bytes());
    }
    let bad = tmp.path().join("flipped.state");
    std::fs::write(&bad, bytes).unwrap();
    let out = tmp.path().join("o");
    let args = [
        "transient",
        s(&stack),
        "--dt",
        "1e-3",
        "--steps",
        "1",
        "--init",
        s(&bad),
        "--out",
        s(&out),
        "--device",
        "cpu",
    ];
    input_error(&args, &out, &["flipped.state", "cell 3", "1e300"]);
}

#[test]
fn a_cooling_map_of_negligible_h_is_refused_like_an_all_zero_map() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "h.csv", "0,0\n0,1e-300\n");
    let text = die("").replace("h_top = 1e4", "h_top = { file = \"h.csv\" }");
    let stack = write(tmp.path(), "s.toml", &text);
    let out = tmp.path().join("o");
    let mut args = vec!["solve", s(&stack), "--out", s(&out)];
    args.extend(SMALL);
    input_error(&args, &out, &["s.toml", "h_top.file", "every pixel is 0"]);
}

#[test]
fn cooling_rectangles_of_negligible_h_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = die("").replace(
        "h_top = 1e4",
        "h_top = [{ x = \"0 mm\", y = \"0 mm\", width = \"2 mm\", length = \"2 mm\", h = 1e-300 }]",
    );
    let stack = write(tmp.path(), "s.toml", &text);
    let out = tmp.path().join("o");
    let mut args = vec!["solve", s(&stack), "--out", s(&out)];
    args.extend(SMALL);
    input_error(&args, &out, &["s.toml", "h_top", "no rectangle has h > 0"]);
}

#[test]
fn control_characters_in_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let block =
        "power = { type = \"blocks\", blocks = [{ name = \"core\\u001b[31m\", x = \"0 mm\", \
                 y = \"0 mm\", width = \"1 mm\", height = \"1 mm\", power = 1 }] }\n";
    let cases = [
        (
            die("").replace("name=\"die\"", "name=\"d\\u0000ie\""),
            vec!["layers[0].name", "d\\0ie", "control character"],
        ),
        (
            die(block),
            vec!["layers[0] (die).power.blocks[0].name", "core\\u{1b}[31m"],
        ),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let stack = write(tmp.path(), &format!("s{i}.toml"), text);
        let out = tmp.path().join(format!("o{i}"));
        let mut args = vec!["solve", s(&stack), "--out", s(&out)];
        args.extend(SMALL);
        let mut needles = needles.clone();
        let name = format!("s{i}.toml");
        needles.push(&name);
        input_error(&args, &out, &needles);
        assert!(!err(&cuth(&args)).contains('\u{1b}'));
    }
}
