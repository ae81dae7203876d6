//! An inline block's geometry: one rectangle (`x`, `y`, `width`, `height`)
//! or several (`rects`), never both; every rectangle of positive size at
//! non-negative coordinates, and the rectangles of one block apart (their
//! union's area is the sum of theirs, which the power's share by area and
//! the statistics over the union rely on).

use super::super::schema::BlockSpec;
use super::super::StackError;
use super::checks::{invalid, non_negative, positive};
use std::path::Path;

/// Checks block `b`, written at `f` of `file` (see the module doc).
pub(super) fn block_rects(file: &Path, f: &str, b: &BlockSpec) -> Result<(), StackError> {
    let one = [
        ("x", &b.x),
        ("y", &b.y),
        ("width", &b.width),
        ("height", &b.height),
    ];
    let Some(rects) = &b.rects else {
        for (k, v) in one {
            let Some(v) = v else {
                return Err(invalid(
                    file,
                    format!("{f}.{k}"),
                    "missing: give `x`, `y`, `width` and `height`, or `rects` (a list of \
                     rectangles)",
                ));
            };
            match k {
                "x" | "y" => non_negative(file, &format!("{f}.{k}"), v.0)?,
                _ => positive(file, &format!("{f}.{k}"), v.0)?,
            };
        }
        return Ok(());
    };
    if let Some((k, _)) = one.iter().find(|(_, v)| v.is_some()) {
        return Err(invalid(
            file,
            format!("{f}.{k}"),
            "give either `x`, `y`, `width`, `height` or `rects`, not both",
        ));
    }
    if rects.is_empty() {
        return Err(invalid(
            file,
            format!("{f}.rects"),
            "needs at least one rectangle",
        ));
    }
    for (j, r) in rects.iter().enumerate() {
        let at = format!("{f}.rects[{j}]");
        positive(file, &format!("{at}.width"), r.width.0)?;
        positive(file, &format!("{at}.height"), r.height.0)?;
        non_negative(file, &format!("{at}.x"), r.x.0)?;
        non_negative(file, &format!("{at}.y"), r.y.0)?;
    }
    let placed = b.rects();
    for (j, r) in placed.iter().enumerate() {
        for (i, q) in placed[..j].iter().enumerate() {
            let w = r.x1.min(q.x1) - r.x0.max(q.x0);
            let h = r.y1.min(q.y1) - r.y0.max(q.y0);
            if w > 0.0 && h > 0.0 && w * h > 1e-9 * r.area().min(q.area()) {
                return Err(invalid(
                    file,
                    format!("{f}.rects[{j}]"),
                    format!("overlaps rects[{i}]: the rectangles of one block must not overlap"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::stack::Stack;
    use std::path::Path;

    fn stack(blocks: &str) -> String {
        format!(
            "[chip]\nwidth = \"4 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 4\nny = 2\n\
             [boundary]\nambient = 300.0\nh_top = 1e4\n\
             [materials.si]\nk = 130.0\nheat_capacity = 1.6e6\n\
             [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"50 um\"\n\
             power = {{ type = \"blocks\", blocks = [{blocks}] }}\n"
        )
    }

    fn error(blocks: &str) -> String {
        Stack::from_toml(&stack(blocks), Path::new("s.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_block_of_rectangles_loads_with_its_rectangles() {
        let text = stack(
            "{ name = \"l\", power = 1.0, rects = [\
             { x = 0.0, y = 0.0, width = \"2 mm\", height = \"1 mm\" },\
             { x = 0.0, y = \"1 mm\", width = \"0.5 mm\", height = \"1 mm\" }] }",
        );
        let st = Stack::from_toml(&text, Path::new("s.toml")).unwrap();
        let Some(crate::stack::PowerSpec::Blocks { blocks }) = &st.layers[0].power else {
            panic!("blocks")
        };
        let r = blocks[0].rects();
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].y0, r[1].x1), (1e-3, 0.5e-3));
    }

    #[test]
    fn bad_rectangle_lists_name_the_field() {
        let both = error(
            "{ name = \"b\", power = 1.0, x = 0.0, \
             rects = [{ x = 0.0, y = 0.0, width = 1e-3, height = 1e-3 }] }",
        );
        assert!(
            both.contains("s.toml") && both.contains("blocks[0] (b).x"),
            "{both}"
        );
        assert!(both.contains("not both"), "{both}");
        let missing = error("{ name = \"b\", power = 1.0, x = 0.0, y = 0.0, width = 1e-3 }");
        assert!(
            missing.contains("blocks[0] (b).height: missing"),
            "{missing}"
        );
        let empty = error("{ name = \"b\", power = 1.0, rects = [] }");
        assert!(empty.contains("blocks[0] (b).rects"), "{empty}");
        let overlap = error(
            "{ name = \"b\", power = 1.0, rects = [\
             { x = 0.0, y = 0.0, width = 2e-3, height = 1e-3 },\
             { x = 1e-3, y = 0.0, width = 2e-3, height = 1e-3 }] }",
        );
        assert!(
            overlap.contains("blocks[0] (b).rects[1]") && overlap.contains("overlaps rects[0]"),
            "{overlap}"
        );
        let flat = error(
            "{ name = \"b\", power = 1.0, rects = [{ x = 0.0, y = 0.0, width = 0.0, height = 1e-3 }] }",
        );
        assert!(flat.contains("blocks[0] (b).rects[0].width"), "{flat}");
    }
}
