//! HotSpot 7's microchannel geometry file (the `.csv` an `.lcf` layer names
//! under `-use_microchannels 1`): a cell map on HotSpot's grid, one line per
//! grid row from the top (the largest y) down, one value per column from
//! x = 0. HotSpot's cell types (`microchannel.h`): 0 solid wall, 1 fluid,
//! 2 inlet, 3 outlet (-1, a TSV, is refused). This module reads the map and
//! recognises the one layout cuth's 4RM cavity represents: straight channels
//! from one edge of the layer to the other, all flowing the same way, of one
//! width and separated by walls of one width, with a wall along both edges.

use super::ImportError;
use std::path::Path;

const WALL: i32 = 0;
const FLUID: i32 = 1;
const INLET: i32 = 2;
const OUTLET: i32 = 3;

/// A straight-channel layout, counted in HotSpot's grid cells.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Layout {
    /// Channels run along x (the map's rows), else along y (its columns).
    pub along_x: bool,
    /// The coolant moves towards increasing x or y.
    pub positive: bool,
    /// Cells along a channel, inlet and outlet cells included.
    pub length_cells: usize,
    /// Cells across: the first wall (at 0), a channel, a wall between two
    /// channels, the last wall.
    pub first_wall: usize,
    pub channel: usize,
    pub wall: usize,
    pub last_wall: usize,
    pub channels: usize,
}

/// The cell map of `file`: integers separated by commas or blanks, one
/// line per row; every row as long as the first.
pub(super) fn parse_map(text: &str, file: &Path) -> Result<Vec<Vec<i32>>, ImportError> {
    let mut rows: Vec<Vec<i32>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        if cells.is_empty() {
            continue;
        }
        let mut row = Vec::with_capacity(cells.len());
        for (j, c) in cells.iter().enumerate() {
            let at = |m: String| syntax(file, i + 1, format!("column {}: {m}", j + 1));
            let v: i32 = c
                .parse()
                .map_err(|_| at(format!("`{c}` is not a cell type (0, 1, 2 or 3)")))?;
            match v {
                WALL | FLUID | INLET | OUTLET => row.push(v),
                -1 => {
                    return Err(ImportError::Unsupported {
                        file: file.to_path_buf(),
                        line: i + 1,
                        what: format!("a TSV cell (-1) at column {}", j + 1),
                        why: "cuth's 4RM cavity has walls and channels only".into(),
                    })
                }
                _ => return Err(at(format!("cell type {v} is not 0, 1, 2 or 3"))),
            }
        }
        if let Some(first) = rows.first() {
            if row.len() != first.len() {
                return Err(syntax(
                    file,
                    i + 1,
                    format!("{} cells, the first row has {}", row.len(), first.len()),
                ));
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(syntax(file, 1, "no cells".into()));
    }
    Ok(rows)
}

fn syntax(file: &Path, line: usize, message: String) -> ImportError {
    ImportError::Syntax {
        file: file.to_path_buf(),
        line,
        message,
    }
}

/// A cell that breaks the straight-channel layout: the error names the
/// file, the map's row (its line) and column, both from 1.
fn not_straight(file: &Path, row: usize, col: usize, why: &str) -> ImportError {
    ImportError::Unsupported {
        file: file.to_path_buf(),
        line: row + 1,
        what: format!("the microchannel layout at row {}, column {}", row + 1, col + 1),
        why: format!(
            "{why}; cuth's 4RM cavity needs straight channels from edge to edge (each row all walls, 0, \
             or an inlet, 2, and an outlet, 3, at its two ends with fluid, 1, between; or the same by columns), \
             all flowing one way, of one width, with walls of one width between them and along both edges"
        ),
    }
}

/// The straight-channel layout of `map`, or an error naming the first cell
/// that breaks it. The channels' axis is that of the first inlet cell's
/// edge (row by row from the top).
pub(super) fn layout(map: &[Vec<i32>], file: &Path) -> Result<Layout, ImportError> {
    let (nr, nc) = (map.len(), map[0].len());
    let (r0, c0) = (0..nr)
        .flat_map(|r| (0..nc).map(move |c| (r, c)))
        .find(|&(r, c)| map[r][c] == INLET)
        .ok_or_else(|| ImportError::Invalid {
            file: file.to_path_buf(),
            message: "no inlet cell (2): the coolant has nowhere to enter".into(),
        })?;
    let along_x = if c0 == 0 || c0 == nc - 1 {
        true
    } else if r0 == 0 || r0 == nr - 1 {
        false
    } else {
        return Err(not_straight(
            file,
            r0,
            c0,
            "an inlet away from the layer's edges",
        ));
    };
    // Lines: the map's rows (channels along x) or its columns; `cell(l, a)`
    // is line l's a-th cell along it, and `at(l, a)` its (row, column).
    let (lines, len) = if along_x { (nr, nc) } else { (nc, nr) };
    let at = |l: usize, a: usize| if along_x { (l, a) } else { (a, l) };
    let cell = |l: usize, a: usize| {
        let (r, c) = at(l, a);
        map[r][c]
    };
    if len < 2 {
        return Err(not_straight(
            file,
            0,
            0,
            "channels need an inlet and an outlet cell",
        ));
    }
    let (fluid, inlet_first) = fluid_lines(file, lines, len, &at, &cell)?;
    // Across the flow from 0: the columns from x = 0, or the rows from the
    // bottom (the map's last row is at y = 0).
    let order: Vec<usize> = if along_x {
        (0..lines).rev().collect()
    } else {
        (0..lines).collect()
    };
    let runs = runs(&order, &fluid);
    let at_run = |k: usize| at(order[runs[..k].iter().map(|r| r.1).sum::<usize>()], 0);
    if runs[0].0 || runs[runs.len() - 1].0 {
        let k = if runs[0].0 { 0 } else { runs.len() - 1 };
        let (r, c) = at_run(k);
        return Err(not_straight(
            file,
            r,
            c,
            "a channel along the layer's edge (no wall beside it)",
        ));
    }
    let inner = &runs[1..runs.len() - 1];
    let channel = inner[0].1;
    let wall = inner.iter().find(|r| !r.0).map_or(runs[0].1, |r| r.1);
    for (k, run) in runs.iter().enumerate().skip(1).take(inner.len()) {
        let want = if run.0 { channel } else { wall };
        if run.1 != want {
            let (r, c) = at_run(k);
            let what = if run.0 { "channel" } else { "wall" };
            let why = format!("a {what} {} cells wide where the first is {want}", run.1);
            return Err(not_straight(file, r, c, &why));
        }
    }
    // Along the flow: x grows with the column; y falls as the row grows.
    let positive = if along_x { inlet_first } else { !inlet_first };
    Ok(Layout {
        along_x,
        positive,
        length_cells: len,
        first_wall: runs[0].1,
        channel,
        wall,
        last_wall: runs[runs.len() - 1].1,
        channels: inner.iter().filter(|r| r.0).count(),
    })
}

/// Which of the `lines` lines (each `len` cells; `cell(l, a)`, at map
/// position `at(l, a)`) are channels, and whether their inlets are at the
/// start; a line neither all walls nor a straight channel is an error.
fn fluid_lines(
    file: &Path,
    lines: usize,
    len: usize,
    at: &dyn Fn(usize, usize) -> (usize, usize),
    cell: &dyn Fn(usize, usize) -> i32,
) -> Result<(Vec<bool>, bool), ImportError> {
    let mut fluid = vec![false; lines];
    let mut inlet_first: Option<bool> = None;
    for (l, is_fluid) in fluid.iter_mut().enumerate() {
        if (0..len).all(|a| cell(l, a) == WALL) {
            continue;
        }
        if !matches!(cell(l, 0), INLET | OUTLET) {
            let a = (0..len)
                .find(|&a| cell(l, a) != WALL)
                .expect("not all walls");
            let (r, c) = at(l, a);
            let why = format!("cell type {} off a straight channel", cell(l, a));
            return Err(not_straight(file, r, c, &why));
        }
        let first = cell(l, 0) == INLET;
        let (start, end) = if first {
            (INLET, OUTLET)
        } else {
            (OUTLET, INLET)
        };
        for a in 0..len {
            let want = if a == 0 {
                start
            } else if a == len - 1 {
                end
            } else {
                FLUID
            };
            if cell(l, a) != want {
                let (r, c) = at(l, a);
                let why = format!(
                    "cell type {} where a straight channel has {want}",
                    cell(l, a)
                );
                return Err(not_straight(file, r, c, &why));
            }
        }
        if *inlet_first.get_or_insert(first) != first {
            let (r, c) = at(l, 0);
            return Err(not_straight(
                file,
                r,
                c,
                "a channel flowing against the others",
            ));
        }
        *is_fluid = true;
    }
    let inlet_first = inlet_first.expect("the first inlet's line is a channel");
    Ok((fluid, inlet_first))
}

/// Runs of equal kind along `order`: (fluid, length).
fn runs(order: &[usize], fluid: &[bool]) -> Vec<(bool, usize)> {
    let mut out: Vec<(bool, usize)> = Vec::new();
    for &l in order {
        match out.last_mut() {
            Some((f, n)) if *f == fluid[l] => *n += 1,
            _ => out.push((fluid[l], 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> Result<Layout, ImportError> {
        let f = Path::new("g.csv");
        layout(&parse_map(text, f)?, f)
    }

    #[test]
    fn straight_rows_and_columns() {
        // Rows from the top: wall, channel (outlet at x = 0), wall x 2,
        // channel, wall: flowing -x, the bottom wall two cells wide.
        let l = map("0,0,0,0\n3,1,1,2\n0,0,0,0\n3,1,1,2\n0,0,0,0\n0,0,0,0\n").unwrap();
        assert_eq!(
            (
                l.along_x,
                l.positive,
                l.length_cells,
                l.first_wall,
                l.channel,
                l.wall,
                l.last_wall,
                l.channels
            ),
            (true, false, 4, 2, 1, 1, 1, 2)
        );
        // Columns: the inlet on the top row, so the coolant moves to -y.
        let l = map("0 2 2 0\n0 1 1 0\n0 3 3 0\n").unwrap();
        assert_eq!(
            (l.along_x, l.positive, l.channel, l.channels),
            (false, false, 2, 1)
        );
    }

    #[test]
    fn refusals_name_row_and_column() {
        let bend = map("0,0,0,0\n3,1,1,2\n0,0,1,0\n0,0,0,0\n")
            .unwrap_err()
            .to_string();
        assert!(
            bend.contains("g.csv:3:") && bend.contains("row 3, column 3"),
            "{bend}"
        );
        let edge = map("3,1,1,2\n0,0,0,0\n").unwrap_err().to_string();
        assert!(
            edge.contains("row 1, column 1") && edge.contains("edge"),
            "{edge}"
        );
        let against = map("0,0,0\n3,1,2\n0,0,0\n2,1,3\n0,0,0\n")
            .unwrap_err()
            .to_string();
        assert!(
            against.contains("row 4, column 1") && against.contains("against"),
            "{against}"
        );
        let tsv = map("0,-1\n").unwrap_err().to_string();
        assert!(tsv.contains("TSV"), "{tsv}");
        let none = map("0,0\n0,0\n").unwrap_err().to_string();
        assert!(none.contains("no inlet"), "{none}");
    }
}
