//! The time-stepping scheme of a run and, when adaptive, where its steps
//! fall.
//!
//! TR-BDF2 (Bank et al. 1985, with γ = 2 − √2) is a trapezoidal stage to
//! tₙ + γΔt and a BDF2 stage through tₙ, tₙ + γΔt, tₙ₊₁. With this γ both
//! stages solve with the same matrix C/h + A, h = γΔt/2, so a run builds
//! one operator and one preconditioner per step size, as backward Euler
//! does per Δt. It is second order and L-stable: stiff modes (thin layers,
//! a large Δt) are damped instead of ringing as the trapezoidal rule's do.
//!
//! Adaptive steps ([`Dyadic`]) divide every interval between output times
//! (multiples of `--dt`) and trace-row boundaries into halvings: a step is
//! the interval's length L over 2^level and starts where such a step may
//! start (a multiple of it). So every output time and every row boundary is
//! landed on exactly, the power is constant within each step, and a run
//! whose row boundaries fall on multiples of `--dt` uses only the sizes
//! `--dt`/2^level, each with its one set-up of the step matrix.

/// How each step advances the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheme {
    /// Backward Euler: first order, one solve per step.
    #[default]
    #[value(name = "be")]
    BackwardEuler,
    /// TR-BDF2: second order, L-stable, two solves per step with one
    /// matrix, and an embedded error estimate for adaptive steps.
    #[value(name = "trbdf2")]
    TrBdf2,
}

/// γ = 2 − √2: the stages' matrices coincide (see the module doc).
pub const GAMMA: f64 = 2.0 - std::f64::consts::SQRT_2;
/// The BDF2 stage: C(θⁿ⁺¹ − a θ_γ + b θⁿ)/h = P − A θⁿ⁺¹, with
/// a = 1/(γ(2 − γ)) and b = (1 − γ)²/(γ(2 − γ)), a − b = 1.
pub const BDF2_A: f64 = 1.0 / (GAMMA * (2.0 - GAMMA));
pub const BDF2_B: f64 = (1.0 - GAMMA) * (1.0 - GAMMA) / (GAMMA * (2.0 - GAMMA));
/// The local truncation error's constant, LTE ≈ 2kΔt·(f₀/γ −
/// f_γ/(γ(1−γ)) + f₁/(1−γ)), k = (−3γ² + 4γ − 2)/(12(2 − γ)) (Hosea and
/// Shampine 1996).
pub const LTE_K: f64 = (-3.0 * GAMMA * GAMMA + 4.0 * GAMMA - 2.0) / (12.0 * (2.0 - GAMMA));

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::BackwardEuler => "be",
            Scheme::TrBdf2 => "trbdf2",
        }
    }

    /// The h of the step matrix C/h + A for a step Δt = `dt`.
    pub fn divisor(self, dt: f64) -> f64 {
        match self {
            Scheme::BackwardEuler => dt,
            Scheme::TrBdf2 => 0.5 * GAMMA * dt,
        }
    }
}

/// Finest halving of an interval (2^-30 of `--dt`): below it the
/// tolerance cannot be met in f64 time arithmetic anyway.
pub const MAX_LEVEL: u32 = 30;
/// Step-size factor's safety, on the estimate's cube-root law.
const SAFETY: f64 = 0.9;
/// Most halvings after one rejected step.
const MAX_SHRINK_LEVELS: u32 = 4;

/// The adaptive step's position within one interval (between consecutive
/// output times and row boundaries) and its level: the step is the
/// interval's length over 2^level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dyadic {
    pub level: u32,
    /// Steps taken in this interval, in units of 2^-MAX_LEVEL of it.
    pub pos: u64,
}

impl Dyadic {
    /// The first step of a run: the whole interval (`--dt`).
    pub fn start() -> Dyadic {
        Dyadic { level: 0, pos: 0 }
    }

    fn ticks(level: u32) -> u64 {
        1u64 << (MAX_LEVEL - level)
    }

    /// Whether the interval is done.
    pub fn done(&self) -> bool {
        self.pos >= Self::ticks(0)
    }

    /// Start and end of the next step, as fractions of the interval (the
    /// end exactly 1 at the interval's end).
    pub fn span(&self) -> (f64, f64) {
        let full = Self::ticks(0) as f64;
        let end = self.pos + Self::ticks(self.level);
        (self.pos as f64 / full, end as f64 / full)
    }

    /// The next interval keeps the level, from its start.
    pub fn next_interval(&mut self) {
        self.pos = 0;
    }

    /// After a step with error estimate `err` against `tol` (both K): the
    /// verdict, the position moved on where accepted (the level may then
    /// grow by one where the next step can start, or shrink), a finer
    /// level where rejected.
    pub fn control(&mut self, err: f64, tol: f64) -> Verdict {
        // Local error ∝ h³: the factor that would bring it to SAFETY·tol.
        let factor = match err > 0.0 {
            true => SAFETY * (tol / err).cbrt(),
            false => f64::INFINITY,
        };
        if err.is_nan() || err > tol {
            if self.level >= MAX_LEVEL {
                return Verdict::TooSmall;
            }
            let halvings = (-factor.log2()).ceil().clamp(1.0, MAX_SHRINK_LEVELS as f64) as u32;
            self.level = (self.level + halvings).min(MAX_LEVEL);
            return Verdict::Rejected;
        }
        self.pos += Self::ticks(self.level);
        if factor >= 2.0 && self.level > 0 && self.pos.is_multiple_of(Self::ticks(self.level - 1)) {
            self.level -= 1;
        } else if factor < 1.0 && self.level < MAX_LEVEL {
            self.level += 1;
        }
        Verdict::Accepted
    }
}

/// What [`Dyadic::control`] decided of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    /// Retry from the same start with a finer level.
    Rejected,
    /// Rejected at the finest level: the tolerance cannot be met.
    TooSmall,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_share_one_matrix_and_the_weights_add_up() {
        // (1 − γ)/(2 − γ), the BDF2 stage's weight on f, equals γ/2.
        assert!(((1.0 - GAMMA) / (2.0 - GAMMA) - GAMMA / 2.0).abs() < 1e-15);
        assert!((BDF2_A - BDF2_B - 1.0).abs() < 1e-15);
    }

    #[test]
    fn steps_tile_the_interval_and_grow_only_where_aligned() {
        let mut d = Dyadic::start();
        // Reject twice into level 3, then accept with a small error.
        assert_eq!(d.control(100.0, 1.0), Verdict::Rejected);
        assert!(d.level >= 1);
        d.level = 3;
        let mut end = 0.0;
        while !d.done() {
            let (a, b) = d.span();
            assert_eq!(a, end, "steps are contiguous");
            end = b;
            let before = d.level;
            assert_eq!(d.control(1e-6, 1.0), Verdict::Accepted);
            if d.level < before {
                // Grown: the next step starts on a multiple of its size.
                assert_eq!(d.pos % Dyadic::ticks(d.level), 0);
            }
        }
        assert_eq!(end, 1.0);
        d.level = MAX_LEVEL;
        assert_eq!(d.control(2.0, 1.0), Verdict::TooSmall);
    }
}
