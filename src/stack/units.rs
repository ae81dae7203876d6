//! Lengths in the stack file: a plain number is metres (SI), a string may carry
//! a unit (`"10um"`, `"0.4 mm"`, `"2e-3 m"`). Kept tiny on purpose: one number,
//! optional spaces, one unit from a fixed table.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// A length in metres, deserialized from a number or a number-with-unit
/// string; the flag is true when it was a bare number (metres implied),
/// which the plausibility warnings look at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Length(pub f64, pub bool);

/// A temperature in kelvin, from a number (kelvin) or a string with a unit:
/// `"45 C"`, `"45 °C"`, `"318.15 K"`, `"113 F"`, `"113 °F"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Temperature(pub f64);

/// Parses `"<number>[ ][°]<C|K|F>"` into kelvin.
pub fn parse_temperature(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let bad = || {
        format!("`{s}` is not a temperature: write kelvin as a number or a string such as \"45 C\", \"318.15 K\" or \"113 F\"")
    };
    let (num, unit) = t.split_at(t.len() - t.chars().last().map_or(0, char::len_utf8));
    let num = num.trim_end();
    let num = num.strip_suffix('°').unwrap_or(num).trim_end();
    let v: f64 = num.parse().map_err(|_| bad())?;
    match unit {
        "C" | "c" => Ok(v + 273.15),
        "K" | "k" => Ok(v),
        "F" | "f" => Ok((v - 32.0) * 5.0 / 9.0 + 273.15),
        _ => Err(bad()),
    }
}

impl<'de> Deserialize<'de> for Temperature {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Temperature;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a temperature in kelvin, or a string such as \"45 C\" or \"318.15 K\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Temperature, E> {
                Ok(Temperature(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Temperature, E> {
                Ok(Temperature(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Temperature, E> {
                Ok(Temperature(v as f64))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Temperature, E> {
                parse_temperature(s).map(Temperature).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Units and their decimal exponents.
const UNITS: &[(&str, i32)] = &[
    ("nm", -9),
    ("um", -6),
    ("µm", -6),
    ("μm", -6),
    ("mm", -3),
    ("cm", -2),
    ("m", 0),
];

/// A coordinate in metres for a message: rounded to the picometre, so that
/// `0.005 + 0.008` reads `0.013`, not `0.013000000000000001` (coordinates are
/// sums of lengths as written). Non-finite values are shown as they are.
pub fn show_m(v: f64) -> String {
    let r = (v * 1e12).round() / 1e12;
    if r.is_finite() {
        format!("{r}")
    } else {
        format!("{v}")
    }
}

/// `literal × 10^shift` without binary rounding of the scale factor: the
/// decimal exponent of the literal is shifted and the result parsed once,
/// so `1.30e-4` W/(µm·K) becomes exactly the double nearest 130 W/(m·K).
pub fn shift_decimal(literal: &str, shift: i32) -> Option<f64> {
    let lit = literal.trim();
    let (mantissa, exp) = match lit.find(['e', 'E']) {
        Some(i) => (&lit[..i], lit[i + 1..].parse::<i32>().ok()?),
        None => (lit, 0),
    };
    mantissa.parse::<f64>().ok()?;
    let v = format!("{mantissa}e{}", exp.checked_add(shift)?)
        .parse::<f64>()
        .ok()?;
    v.is_finite().then_some(v)
}

/// Parses `"<number>[ ]<unit>"` into metres. The unit shifts the decimal
/// exponent before the one rounding to binary, so `"23.62 mm"` is the very
/// double of `0.02362` (a multiplication by 1e-3 could be an ulp off, and
/// a hand-written stack would then differ from a generated one).
pub fn parse_length(s: &str) -> Result<f64, String> {
    let t = s.trim();
    for (suffix, exp) in UNITS {
        if let Some(num) = t.strip_suffix(suffix) {
            return shift_decimal(num.trim_end(), *exp)
                .ok_or_else(|| format!("`{s}` is not a number followed by a unit"));
        }
    }
    t.parse::<f64>().map_err(|_| {
        format!("`{s}` is not a length: write metres as a number or a string with a unit (nm, um, mm, cm, m)")
    })
}

impl<'de> Deserialize<'de> for Length {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Length;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a length in metres, or a string such as \"10um\" or \"0.4 mm\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Length, E> {
                Ok(Length(v, true))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Length, E> {
                Ok(Length(v as f64, true))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Length, E> {
                Ok(Length(v as f64, true))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Length, E> {
                parse_length(s).map(|v| Length(v, false)).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_decimal_is_exact_in_decimal() {
        assert_eq!(shift_decimal("1.30e-4", 6), Some(130.0));
        assert_eq!(shift_decimal("1.628e-12", 18), Some(1.628e6));
        assert_eq!(shift_decimal("100", -6), Some(1e-4));
        assert_eq!(shift_decimal("2.25e-6", 6), Some(2.25));
        assert_eq!(shift_decimal("-3.5", 1), Some(-35.0));
        assert_eq!(shift_decimal("abc", 1), None);
        assert_eq!(shift_decimal("1e400", 0), None);
        assert_eq!(shift_decimal("4.172e-12", 18), Some(4.172e6));
        // The naive product rounds twice (4172000.0000000005).
        assert_ne!(4.172e-12 * 1e18, 4.172e6);
    }

    #[test]
    fn units_scale_to_metres() {
        let close = |s: &str, want: f64| {
            let got = parse_length(s).unwrap();
            assert!((got - want).abs() <= 1e-15 * want, "{s}: {got} vs {want}");
        };
        close("10um", 10e-6);
        close("0.4 mm", 0.4e-3);
        close("2e-3 m", 2e-3);
        close("150 nm", 150e-9);
        close("3 µm", 3e-6);
        close("1.5cm", 1.5e-2);
        close("0.001", 0.001);
        // Exactly the doubles of the decimal values, as in metres.
        for (s, m) in [
            ("23.62 mm", 0.02362),
            ("0.19375 mm", 0.00019375),
            ("1.5e2 um", 1.5e-4),
        ] {
            assert_eq!(parse_length(s).unwrap(), m, "{s}");
        }
        assert!(parse_length("inf mm").is_err());
        assert!(parse_length("10 furlongs").is_err());
        assert!(parse_length("mm").is_err());
    }

    #[test]
    fn temperatures_scale_to_kelvin() {
        let close = |s: &str, want: f64| {
            let got = parse_temperature(s).unwrap();
            assert!((got - want).abs() <= 1e-9, "{s}: {got} vs {want}");
        };
        close("45 C", 318.15);
        close("45°C", 318.15);
        close("45 °C", 318.15);
        close("318.15 K", 318.15);
        close("113 F", 318.15);
        close("-40 °F", 233.15);
        assert!(parse_temperature("45").is_err());
        assert!(parse_temperature("45 R").is_err());
        assert!(parse_temperature("C").is_err());
        assert!(parse_temperature("").is_err());
    }

    #[test]
    fn coordinates_in_messages_carry_no_float_noise() {
        assert_eq!(show_m(0.005 + 0.008), "0.013");
        assert_eq!(show_m(0.1 + 0.2), "0.3");
        assert_eq!(show_m(-0.001), "-0.001");
        assert_eq!(show_m(12.4e-3), "0.0124");
        assert_eq!(show_m(f64::NAN), "NaN");
    }
}
