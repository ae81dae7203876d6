//! The book agrees with the code: the stack-file chapter documents exactly
//! the keys the stack parser accepts, and the command-line reference is the
//! binary's own `--help`.

use crate::util::cli::cuth;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir`, test files (`*_tests.rs`) left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && !p.to_string_lossy().ends_with("_tests.rs")
        {
            out.push(p);
        }
    }
}

/// The text of every `name = "value"` in a `#[serde(...)]` attribute.
fn serde_values(attr: &str, name: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut rest = attr;
    while let Some(i) = rest.find(name) {
        let after = rest[i + name.len()..].trim_start();
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
        if before_ok && after.starts_with('=') {
            let q = after[1..].trim_start();
            if let Some(q) = q.strip_prefix('"') {
                v.push(q[..q.find('"').unwrap()].to_string());
            }
        }
        rest = &rest[i + name.len()..];
    }
    v
}

/// The keys each deserialized type of `src/stack/` accepts, by type name,
/// read from the source: the fields of every `#[derive(Deserialize)]`
/// struct (with their `rename` and `alias`), and for an internally tagged
/// enum (`tag = "type"`) the tag and every variant's fields. Enums of
/// plain values and untagged enums hold no keys of their own.
fn schema_keys() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src/stack"), &mut files);
    let mut types = BTreeMap::new();
    for f in files {
        let text = read(&f);
        // Test modules are not the schema.
        let text = text.split("#[cfg(test)]").next().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].trim();
            i += 1;
            if !(l.starts_with("#[derive(") && l.contains("Deserialize")) {
                continue;
            }
            // The container's attributes, up to the item.
            let mut attrs = String::new();
            while i < lines.len() && !lines[i].contains("struct ") && !lines[i].contains("enum ") {
                attrs.push_str(lines[i]);
                i += 1;
            }
            let item = lines[i].trim();
            let is_enum = item.contains("enum ");
            let name = item
                .split_whitespace()
                .skip_while(|w| *w != "struct" && *w != "enum")
                .nth(1)
                .unwrap()
                .trim_end_matches('{')
                .to_string();
            if is_enum && serde_values(&attrs, "tag").is_empty() {
                continue;
            }
            let mut keys: BTreeSet<String> = serde_values(&attrs, "tag").into_iter().collect();
            // The body: fields at one level of braces in a struct, inside
            // a variant's braces in an enum.
            let mut field_attrs = String::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with('}') {
                let l = lines[i].trim();
                i += 1;
                if l.starts_with("///") || l.starts_with("//") {
                    continue;
                }
                if l.starts_with("#[") {
                    field_attrs.push_str(l);
                    continue;
                }
                let body = match (is_enum, l.find('{')) {
                    (true, Some(b)) => &l[b + 1..],
                    (true, None) if l.ends_with(',') && !l.contains('(') => l,
                    (true, None) => continue,
                    (false, _) => l,
                };
                for field in body.split(',') {
                    let field = field.trim().trim_start_matches("pub ");
                    let Some((ident, _)) = field.split_once(':') else {
                        continue;
                    };
                    let ident = ident.trim();
                    if ident.is_empty()
                        || !ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        continue;
                    }
                    if field_attrs.contains("skip") || field_attrs.contains("flatten") {
                        panic!("{name}.{ident}: skip/flatten fields are not read by this test");
                    }
                    let renamed = serde_values(&field_attrs, "rename");
                    keys.insert(
                        renamed
                            .first()
                            .cloned()
                            .unwrap_or_else(|| ident.to_string()),
                    );
                    keys.extend(serde_values(&field_attrs, "alias"));
                }
                field_attrs.clear();
            }
            assert!(!keys.is_empty(), "{name} in {}: no keys read", f.display());
            types.insert(name, keys);
        }
    }
    types
}

/// The keys each table of the stack-format chapter documents, by the type
/// its `<!-- keys: Type -->` marker names: the backquoted names in the
/// table's first column, `[materials.NAME]` read as `materials` and
/// `[[layers.regions]]` as `regions`.
fn documented_keys(chapter: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut docs = BTreeMap::new();
    let lines: Vec<&str> = chapter.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = l.trim().strip_prefix("<!-- keys:") else {
            continue;
        };
        let name = name.trim_end_matches("-->").trim().to_string();
        let mut keys = BTreeSet::new();
        let rows = lines[i + 1..].iter().skip_while(|l| l.trim().is_empty());
        for row in rows.take_while(|l| l.starts_with('|')).skip(2) {
            let first = row.split('|').nth(1).unwrap();
            for (j, part) in first.split('`').enumerate() {
                if j % 2 == 0 {
                    continue;
                }
                let path = part.trim_matches(|c| c == '[' || c == ']');
                let key = path.split('.').rev().find(|s| *s != "NAME").unwrap();
                keys.insert(key.to_string());
            }
        }
        assert!(
            !keys.is_empty(),
            "<!-- keys: {name} --> is not followed by a table"
        );
        assert!(docs.insert(name.clone(), keys).is_none(), "{name} twice");
    }
    docs
}

/// Every key the stack parser accepts is in the stack-format chapter, in
/// the table of its type, and every key there is accepted.
#[test]
fn book_stack_format_lists_every_schema_key() {
    let schema = schema_keys();
    let chapter = read(&root().join("docs/src/stack-format.md"));
    let docs = documented_keys(&chapter);
    // A sanity check on the reading of the source itself.
    for (t, k) in [
        ("StackFile", "chip"),
        ("StackFile", "package"),
        ("PowerSpec", "type"),
    ] {
        assert!(schema[t].contains(k), "{t}: {k} not read from the source");
    }
    let mut faults = Vec::new();
    for (t, keys) in &schema {
        match docs.get(t) {
            None => faults.push(format!("{t}: no <!-- keys: {t} --> table; keys {keys:?}")),
            Some(d) => {
                for k in keys.difference(d) {
                    faults.push(format!("{t}: `{k}` accepted, not documented"));
                }
                for k in d.difference(keys) {
                    faults.push(format!("{t}: `{k}` documented, not accepted"));
                }
            }
        }
    }
    for t in docs.keys().filter(|t| !schema.contains_key(*t)) {
        faults.push(format!("<!-- keys: {t} -->: no such type in src/stack/"));
    }
    assert!(
        faults.is_empty(),
        "docs/src/stack-format.md and src/stack/ differ:\n{}",
        faults.join("\n")
    );
}

/// The subcommands whose `--help` the reference shows, in its order.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["solve"],
    &["transient"],
    &["sweep"],
    &["serve"],
    &["import"],
    &["import", "hotspot"],
    &["import", "3dice"],
    &["topopt"],
    &["bench"],
    &["info"],
];

/// The command-line reference chapter as the binary's help writes it.
fn cli_reference() -> String {
    let mut s = String::from(
        "# Command-line reference\n\n\
         The output of `cuth ... --help` for every subcommand, as this version\n\
         prints it (generated: `CUTH_UPDATE_DOCS=1 cargo test --release --test cli\n\
         book_cli_reference` rewrites this page; the test fails when it is out of\n\
         date). Defaults are in brackets; units are in the descriptions. The\n\
         [command line](cli.md) chapter explains the options in prose.\n",
    );
    for args in COMMANDS {
        let mut a: Vec<&str> = args.to_vec();
        a.push("--help");
        let o = cuth(&a);
        assert!(o.status.success(), "cuth {}", a.join(" "));
        let help = String::from_utf8(o.stdout).unwrap();
        let title = if args.is_empty() {
            "cuth".to_string()
        } else {
            format!("cuth {}", args.join(" "))
        };
        s.push_str(&format!("\n## `{title}`\n\n```text\n"));
        for line in help.lines() {
            s.push_str(line.trim_end());
            s.push('\n');
        }
        s.push_str("```\n");
    }
    s
}

/// docs/src/cli-reference.md is every subcommand's `--help`, so every flag
/// the binary has is in the book and every flag the book shows exists.
#[test]
fn book_cli_reference_matches_help() {
    let path = root().join("docs/src/cli-reference.md");
    let want = cli_reference();
    if std::env::var_os("CUTH_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = read(&path);
    assert!(
        have == want,
        "{} differs from the binary's --help: regenerate it with \
         CUTH_UPDATE_DOCS=1 cargo test --release --test cli book_cli_reference",
        path.display()
    );
}

/// Every subcommand is in the reference (a new one must be added to
/// `COMMANDS`).
#[test]
fn book_cli_reference_covers_every_subcommand() {
    let help = String::from_utf8(cuth(&["--help"]).stdout).unwrap();
    let listed: BTreeSet<&str> = COMMANDS.iter().filter_map(|c| c.first().copied()).collect();
    let commands = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help");
    for c in commands {
        assert!(
            listed.contains(c),
            "cuth {c} is not in the command-line reference"
        );
    }
}

/// Every option that takes a value says its default in `--help`, or says
/// that it has none (`[required]`, `[default: none]` or a condition in the
/// brackets), so that the reference shows every default.
#[test]
fn every_option_with_a_value_shows_its_default() {
    let mut faults = Vec::new();
    for args in COMMANDS
        .iter()
        .filter(|c| !c.is_empty() && **c != ["import"])
    {
        let mut a: Vec<&str> = args.to_vec();
        a.push("--help");
        let help = String::from_utf8(cuth(&a).stdout).unwrap();
        // One option per entry: its line and the description under it.
        let mut entries: Vec<String> = Vec::new();
        for line in help
            .lines()
            .skip_while(|l| !l.starts_with("Options:"))
            .skip(1)
        {
            let t = line.trim_start();
            if t.starts_with("--") || t.starts_with('-') && line.starts_with("  -") {
                entries.push(t.to_string());
            } else if let Some(e) = entries.last_mut() {
                e.push(' ');
                e.push_str(t);
            }
        }
        for e in entries {
            let head = e.split("  ").next().unwrap();
            let takes_value = head.contains('<');
            if takes_value && !e.contains("[default") && !e.contains("[required") {
                faults.push(format!("cuth {}: {head}", args.join(" ")));
            }
        }
    }
    assert!(
        faults.is_empty(),
        "options without a default in their help:\n{}",
        faults.join("\n")
    );
}
