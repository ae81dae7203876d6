//! Deserializers of the stack file's either-or values, [`MaterialRef`] (a
//! name or an inline table) and [`CoolingSpec`] (a number, an array of
//! rectangles or a raster table). serde's `untagged` would try each form and,
//! when none fits, report only "data did not match any variant": here the
//! form written picks the type, so a fault inside it is that type's own
//! error, with its line (missing `heat_capacity`, unknown key `rho`).

use super::schema::{CoolingRasterSpec, CoolingRectSpec, CoolingSpec, MaterialRef, MaterialSpec};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use std::fmt;

struct MaterialRefVisitor;

impl<'de> Visitor<'de> for MaterialRefVisitor {
    type Value = MaterialRef;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a material name, \"none\", or an inline table \
             { k = .. (or kx, ky, kz), heat_capacity = .. }",
        )
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<MaterialRef, E> {
        Ok(MaterialRef::Name(v.to_string()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MaterialRef, A::Error> {
        let spec = MaterialSpec::deserialize(MapAccessDeserializer::new(map))?;
        Ok(MaterialRef::Inline(Box::new(spec)))
    }
}

impl<'de> Deserialize<'de> for MaterialRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MaterialRefVisitor)
    }
}

struct CoolingVisitor;

impl<'de> Visitor<'de> for CoolingVisitor {
    type Value = CoolingSpec;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a film coefficient in W/(m^2 K): a number, an array of rectangles \
             [{ x, y, width, length, h }], or a raster table { file = .. }",
        )
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<CoolingSpec, E> {
        Ok(CoolingSpec::Uniform(v))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<CoolingSpec, E> {
        Ok(CoolingSpec::Uniform(v as f64))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<CoolingSpec, E> {
        Ok(CoolingSpec::Uniform(v as f64))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<CoolingSpec, A::Error> {
        let rects = Vec::<CoolingRectSpec>::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(CoolingSpec::Rects(rects))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CoolingSpec, A::Error> {
        let r = CoolingRasterSpec::deserialize(MapAccessDeserializer::new(map))?;
        Ok(CoolingSpec::Raster {
            file: r.file,
            h_min: r.h_min,
            h_max: r.h_max,
        })
    }
}

impl<'de> Deserialize<'de> for CoolingSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CoolingVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct T {
        m: MaterialRef,
        h: CoolingSpec,
    }

    fn parse(s: &str) -> Result<T, String> {
        toml::from_str::<T>(s).map_err(|e| e.to_string())
    }

    #[test]
    fn each_form_parses() {
        let t = parse("m = \"si\"\nh = 3").unwrap();
        assert!(matches!(t.m, MaterialRef::Name(ref n) if n == "si"));
        assert!(matches!(t.h, CoolingSpec::Uniform(v) if v == 3.0));
        let t = parse(
            "m = { k = 1.0, heat_capacity = 2.0 }\n\
             h = [{ x = 0, y = 0, width = 1, length = 1, h = 5.0 }]",
        )
        .unwrap();
        assert!(matches!(t.m, MaterialRef::Inline(_)));
        assert!(matches!(t.h, CoolingSpec::Rects(ref r) if r.len() == 1 && r[0].h == 5.0));
        let t = parse("m = \"none\"\nh = { file = \"a.png\", h_max = 1e4 }").unwrap();
        assert!(matches!(t.h, CoolingSpec::Raster { h_max: Some(v), .. } if v == 1e4));
    }

    #[test]
    fn a_fault_inside_a_form_is_reported_as_such() {
        let cases = [
            (
                "m = { kx = 1.0, ky = 1.0, kz = 1.0 }\nh = 1",
                "missing field `heat_capacity`",
            ),
            (
                "m = { k = 1.0, heat_capacity = 2.0, rho = 3 }\nh = 1",
                "unknown field `rho`",
            ),
            ("m = 3\nh = 1", "a material name"),
            (
                "m = \"si\"\nh = [{ x = 0, y = 0, width = 1, length = 1 }]",
                "missing field `h`",
            ),
            (
                "m = \"si\"\nh = { file = \"a.csv\", hmax = 1 }",
                "unknown field `hmax`",
            ),
            ("m = \"si\"\nh = \"hot\"", "a film coefficient in W/(m^2 K)"),
        ];
        for (text, needle) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(!e.contains("untagged"), "{text}: {e}");
        }
    }
}
