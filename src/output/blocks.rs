//! Per-block temperatures (computed by [`layer_block_stats`]) written as
//! `blocks.csv` (unit in the column names) and as a
//! HotSpot-like `blocks.steady` (one `<layer>.<block>\t<T max, K>` per line),
//! which HotSpot-based scripts can read without change. Which statistic
//! `blocks.steady` gives follows HotSpot's `-grid_map_mode`: [`BlockMap`].

use super::TempUnit;
use std::fmt::Write;
use std::io;

pub use crate::stack::BlockMap;
pub use crate::thermal::block_stats::{layer_block_stats, BlockStats, TempStats};

/// `blocks.csv`: `layer,block,power_w,t_min_<u>,t_avg_<u>,t_max_<u>` with
/// `<u>` = `c` or `k`. Names are quoted as CSV requires (they may hold
/// commas). A block outside the footprint has empty temperature fields.
pub fn blocks_csv(stats: &[BlockStats], unit: TempUnit) -> io::Result<String> {
    let u = unit.suffix();
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "layer".to_string(),
        "block".to_string(),
        "power_w".to_string(),
        format!("t_min_{u}"),
        format!("t_avg_{u}"),
        format!("t_max_{u}"),
    ])?;
    for s in stats {
        let t = |f: fn(&TempStats) -> f64| {
            s.temp
                .as_ref()
                .map(|t| format!("{:.6}", unit.convert_k(f(t))))
                .unwrap_or_default()
        };
        w.write_record([
            s.layer.clone(),
            s.block.clone(),
            format!("{}", s.power_w),
            t(|t| t.min_k),
            t(|t| t.avg_k),
            t(|t| t.max_k),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// `blocks.steady`: one line per block, `<layer>.<block>\t<T in K>` with T
/// the `mode` statistic, as HotSpot's `.steady` gives one kelvin value per unit. Whitespace in names
/// becomes `_` because HotSpot tools split lines on whitespace. Blocks outside
/// the footprint have no temperature and are left out.
pub fn blocks_steady(stats: &[BlockStats], mode: BlockMap) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect()
    };
    let mut out = String::new();
    for s in stats {
        if let Some(t) = &s.temp {
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "{}.{}\t{:.6}",
                clean(&s.layer),
                clean(&s.block),
                mode.pick(t)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;
    use crate::grid::Grid;
    use crate::power::Block;

    /// 4 × 2 grid of 1 mm cells; no stack needed for geometry alone.
    fn grid() -> Grid {
        Grid::uniform(4, 2, 4e-3, 2e-3, vec![1e-4], vec![0])
    }

    #[test]
    fn block_outside_footprint_has_no_temperature() {
        let far = Rect {
            x0: 1.0,
            y0: 1.0,
            x1: 2.0,
            y1: 2.0,
        };
        let block = Block::new("far", far, 0.0);
        let s = layer_block_stats("l", &[300.0; 8], &[block], &grid());
        assert_eq!(s[0].temp, None);
        assert_eq!(blocks_steady(&s, BlockMap::Max), "");
        let csv = blocks_csv(&s, TempUnit::Kelvin).unwrap();
        assert_eq!(csv.lines().nth(1), Some("l,far,0,,,"));
    }

    #[test]
    fn csv_and_steady_formats() {
        let s = vec![BlockStats {
            layer: "die 1".into(),
            block: "a,b".into(),
            power_w: 1.5,
            temp: Some(TempStats {
                center_k: 305.0,
                min_k: 300.0,
                avg_k: 310.0,
                max_k: 320.0,
            }),
        }];
        let csv = blocks_csv(&s, TempUnit::Celsius).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("layer,block,power_w,t_min_c,t_avg_c,t_max_c")
        );
        assert_eq!(
            lines.next(),
            Some("die 1,\"a,b\",1.5,26.850000,36.850000,46.850000")
        );
        assert_eq!(blocks_steady(&s, BlockMap::Max), "die_1.a,b\t320.000000\n");
        assert_eq!(blocks_steady(&s, BlockMap::Avg), "die_1.a,b\t310.000000\n");
        assert_eq!(blocks_steady(&s, BlockMap::Min), "die_1.a,b\t300.000000\n");
        assert_eq!(
            blocks_steady(&s, BlockMap::Center),
            "die_1.a,b\t305.000000\n"
        );
    }
}
