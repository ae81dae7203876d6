//! Temperature-dependent material properties: a conductivity or
//! a volumetric heat capacity is a constant, a power law
//! `{ k300, exponent }` (value·(T/300 K)^exponent), a polynomial in T
//! `{ poly = [c0, c1, …] }` (c0 + c1·T + …, T in kelvin) or a table of
//! `(T, value)` points `{ table = [[300, 148], [400, 100]] }`, interpolated
//! linearly and held constant beyond its ends. A stack whose properties are
//! all constants never evaluates a law: it takes the linear solver's path.

use serde::Deserialize;

/// A property as written in the stack file. It is read through
/// `RawProperty` so that a table giving two laws at once (say `k300` and
/// `poly`) is refused by name instead of one of them being dropped.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "RawProperty")]
pub enum PropertySpec {
    Constant(f64),
    PowerLaw {
        /// Value at 300 K (W/(m·K) for k, J/(m³·K) for heat_capacity).
        k300: f64,
        exponent: f64,
    },
    Polynomial {
        poly: Vec<f64>,
    },
    Table {
        table: Vec<[f64; 2]>,
    },
}

/// The property as parsed: a number, or a table whose keys are all
/// optional, so that [`PropertySpec`]'s conversion sees every key written.
/// `expecting` replaces serde's "data did not match any variant of untagged
/// enum" with the forms allowed.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a number, or a temperature law: { k300 = .., exponent = .. }, \
                 { poly = [c0, c1, ..] } or { table = [[T, value], ..] }"
)]
enum RawProperty {
    Constant(f64),
    Law(RawLaw),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaw {
    #[serde(alias = "c300", alias = "v300")]
    k300: Option<f64>,
    exponent: Option<f64>,
    poly: Option<Vec<f64>>,
    table: Option<Vec<[f64; 2]>>,
}

impl TryFrom<RawProperty> for PropertySpec {
    type Error = String;

    fn try_from(raw: RawProperty) -> Result<Self, String> {
        let law = match raw {
            RawProperty::Constant(v) => return Ok(PropertySpec::Constant(v)),
            RawProperty::Law(law) => law,
        };
        let power_law = law.k300.is_some() || law.exponent.is_some();
        let forms: Vec<&str> = [
            (power_law, "{ k300, exponent }"),
            (law.poly.is_some(), "{ poly }"),
            (law.table.is_some(), "{ table }"),
        ]
        .into_iter()
        .filter_map(|(given, name)| given.then_some(name))
        .collect();
        if forms.len() > 1 {
            return Err(format!(
                "a temperature law is written in one form, this one gives {}",
                forms.join(" and ")
            ));
        }
        Ok(match (law.k300, law.exponent, law.poly, law.table) {
            (Some(k300), Some(exponent), None, None) => PropertySpec::PowerLaw { k300, exponent },
            (None, None, Some(poly), None) => PropertySpec::Polynomial { poly },
            (None, None, None, Some(table)) => PropertySpec::Table { table },
            (None, None, None, None) => {
                return Err("an empty table: give { k300 = .., exponent = .. }, \
                            { poly = [..] } or { table = [[T, value], ..] }"
                    .into())
            }
            (k300, _, _, _) => {
                let missing = if k300.is_some() { "exponent" } else { "k300" };
                return Err(format!(
                    "the power law {{ k300, exponent }} needs `{missing}` too"
                ));
            }
        })
    }
}

/// A checked property law; values in SI units, T in kelvin.
#[derive(Clone, Debug, PartialEq)]
pub enum Law {
    Constant(f64),
    PowerLaw {
        v300: f64,
        exponent: f64,
    },
    Polynomial(Vec<f64>),
    /// Points sorted by strictly increasing T.
    Table(Vec<[f64; 2]>),
}

impl Law {
    /// Checks a spec: finite numbers, positive constants and table values,
    /// table temperatures strictly increasing and positive.
    pub fn from_spec(spec: &PropertySpec) -> Result<Law, String> {
        let finite = |v: f64, what: &str| {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(format!("{what} must be finite, got {v}"))
            }
        };
        Ok(match spec {
            PropertySpec::Constant(v) => {
                if !(v.is_finite() && *v > 0.0) {
                    return Err(format!("must be positive and finite, got {v}"));
                }
                Law::Constant(*v)
            }
            PropertySpec::PowerLaw { k300, exponent } => {
                if !(k300.is_finite() && *k300 > 0.0) {
                    return Err(format!("k300 must be positive and finite, got {k300}"));
                }
                Law::PowerLaw {
                    v300: *k300,
                    exponent: finite(*exponent, "exponent")?,
                }
            }
            PropertySpec::Polynomial { poly } => {
                if poly.is_empty() || poly.len() > 16 {
                    return Err("poly needs 1 to 16 coefficients".into());
                }
                for c in poly {
                    finite(*c, "every poly coefficient")?;
                }
                if poly.len() == 1 {
                    return Law::from_spec(&PropertySpec::Constant(poly[0]));
                }
                Law::Polynomial(poly.clone())
            }
            PropertySpec::Table { table } => {
                if table.len() < 2 {
                    return Err("table needs at least two [T, value] points".into());
                }
                for (i, [t, v]) in table.iter().enumerate() {
                    if !(t.is_finite() && *t > 0.0 && v.is_finite() && *v > 0.0) {
                        return Err(format!(
                            "table point {i} [{t}, {v}]: T and value must be positive and finite"
                        ));
                    }
                    if i > 0 && *t <= table[i - 1][0] {
                        return Err(format!(
                            "table temperatures must increase strictly (point {i}: {t} K)"
                        ));
                    }
                }
                Law::Table(table.clone())
            }
        })
    }

    /// Appends this law to the device's law table (`kernels/assemble.cu`,
    /// `asm_law`): three header ints (kind, offset, count) in `hdr`, its
    /// numbers in `c`; returns its id.
    pub fn encode(&self, hdr: &mut Vec<i32>, c: &mut Vec<f64>) -> i32 {
        let id = (hdr.len() / 3) as i32;
        let (kind, values): (i32, Vec<f64>) = match self {
            Law::Constant(v) => (0, vec![*v]),
            Law::PowerLaw { v300, exponent } => (1, vec![*v300, *exponent]),
            Law::Polynomial(p) => (2, p.clone()),
            Law::Table(p) => (3, p.iter().flatten().copied().collect()),
        };
        hdr.extend_from_slice(&[kind, c.len() as i32, values.len() as i32]);
        c.extend_from_slice(&values);
        id
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, Law::Constant(_))
    }

    /// The value at temperature `t_k`.
    pub fn eval(&self, t_k: f64) -> f64 {
        match self {
            Law::Constant(v) => *v,
            Law::PowerLaw { v300, exponent } => v300 * (t_k / 300.0).powf(*exponent),
            // Horner.
            Law::Polynomial(c) => c.iter().rev().fold(0.0, |acc, ci| acc * t_k + ci),
            Law::Table(p) => {
                let last = p.len() - 1;
                if t_k <= p[0][0] {
                    return p[0][1];
                }
                if t_k >= p[last][0] {
                    return p[last][1];
                }
                let i = p.partition_point(|q| q[0] <= t_k).clamp(1, last);
                let ([t0, v0], [t1, v1]) = (p[i - 1], p[i]);
                v0 + (v1 - v0) * (t_k - t0) / (t1 - t0)
            }
        }
    }
}

/// The laws of one material, set only when at least one is not a constant.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialLaw {
    /// k in x, y, z.
    pub k: [Law; 3],
    pub heat_capacity: Law,
}

impl MaterialLaw {
    /// Whether k depends on temperature (the steady solve needs Picard).
    pub fn k_varies(&self) -> bool {
        self.k.iter().any(|l| !l.is_constant())
    }

    pub fn c_varies(&self) -> bool {
        !self.heat_capacity.is_constant()
    }

    /// Properties at `t_k`; `None` when a law gives a value that is not
    /// positive and finite there (a polynomial outside its range).
    pub fn at(&self, t_k: f64) -> Option<super::Material> {
        let k = [
            self.k[0].eval(t_k),
            self.k[1].eval(t_k),
            self.k[2].eval(t_k),
        ];
        let c = self.heat_capacity.eval(t_k);
        let ok = |v: f64| v.is_finite() && v > 0.0;
        (k.iter().all(|v| ok(*v)) && ok(c)).then_some(super::Material {
            k,
            heat_capacity: c,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laws_evaluate_as_documented() {
        let p = Law::PowerLaw {
            v300: 148.0,
            exponent: -1.3,
        };
        assert_eq!(p.eval(300.0), 148.0);
        assert!((p.eval(400.0) - 148.0 * (0.75f64).powf(1.3)).abs() < 1e-12);
        let q = Law::Polynomial(vec![1.0, 2.0, 3.0]);
        assert_eq!(q.eval(2.0), 1.0 + 4.0 + 12.0);
        let t = Law::Table(vec![[300.0, 150.0], [400.0, 100.0], [500.0, 80.0]]);
        assert_eq!(t.eval(250.0), 150.0);
        assert_eq!(t.eval(350.0), 125.0);
        assert_eq!(t.eval(400.0), 100.0);
        assert_eq!(t.eval(450.0), 90.0);
        assert_eq!(t.eval(900.0), 80.0);
    }

    #[test]
    fn bad_specs_are_refused() {
        let bad = [
            PropertySpec::Constant(-1.0),
            PropertySpec::PowerLaw {
                k300: 0.0,
                exponent: 1.0,
            },
            PropertySpec::Polynomial { poly: vec![] },
            PropertySpec::Table {
                table: vec![[300.0, 1.0]],
            },
            PropertySpec::Table {
                table: vec![[300.0, 1.0], [300.0, 2.0]],
            },
        ];
        for s in &bad {
            assert!(Law::from_spec(s).is_err(), "{s:?}");
        }
    }
}
