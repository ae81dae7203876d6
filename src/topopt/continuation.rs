//! Continuation of the penalty p, projection sharpness β, filter radius and
//! OC move limit. The paper's exact schedule is not published with it, so
//! this is a standard one (after top99neo / Ferrari & Sigmund 2020 and the
//! usual β-doubling practice), chosen to reach a crisp design in about
//! 100–200 iterations:
//!
//! | stage | p                  | β  | rmin        | move |
//! |-------|--------------------|----|-------------|------|
//! | 0     | 1                  | 1  | 1.5 · rmin  | 0.2  |
//! | 1     | 2                  | 1  | 1.25 · rmin | 0.2  |
//! | 2     | 3 (= --penal)      | 1  | rmin        | 0.2  |
//! | 3     | 3                  | 2  | rmin        | 0.2  |
//! | 4     | 3                  | 4  | rmin        | 0.1  |
//! | 5     | 3                  | 8  | rmin        | 0.1  |
//! | 6     | 3                  | 16 | rmin        | 0.05 | (final)
//!
//! p rises from 1 (convex problem, a good global start) to the final
//! penalty in steps of 1 (fewer steps if --penal < 3); the larger radius
//! early on keeps the first layouts coarse. A stage ends after
//! [`STAGE_ITERS`] iterations, or earlier when it stalls (after at least
//! [`MIN_STAGE_ITERS`]): the maximum design change max|Δx| drops below
//! [`STALL_TOL`], or the compliance of the last [`WINDOW`] iterations varies
//! by less than [`STAGE_CTOL`] (relative). The final stage has converged on
//! the same tests with the tighter [`FINAL_CTOL`]; the compliance test is
//! needed because at β = 16 a few elements near the threshold keep flipping
//! by the full move limit, so max|Δx| alone never drops below tolerance.
//! `--iterations` caps the total.

use std::collections::VecDeque;

pub const STAGE_ITERS: usize = 25;
pub const MIN_STAGE_ITERS: usize = 5;
pub const STALL_TOL: f64 = 0.01;
pub const WINDOW: usize = 5;
pub const STAGE_CTOL: f64 = 1e-3;
pub const FINAL_CTOL: f64 = 1e-4;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Stage {
    pub penal: f64,
    pub beta: f64,
    /// Filter radius in elements.
    pub rmin: f64,
    pub move_limit: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Schedule {
    pub stages: Vec<Stage>,
    pub stage_iters: usize,
    pub min_stage_iters: usize,
    pub tol: f64,
    pub stage_ctol: f64,
    pub final_ctol: f64,
}

impl Schedule {
    /// The schedule of the module doc for final penalty `penal` and radius
    /// `rmin`.
    pub fn standard(penal: f64, rmin: f64) -> Schedule {
        let mut stages = Vec::new();
        let mut p = 1.0f64;
        let steps = (penal - 1.0).ceil().max(0.0) as usize;
        for s in 0..=steps {
            let frac = if steps == 0 {
                1.0
            } else {
                s as f64 / steps as f64
            };
            stages.push(Stage {
                penal: p.min(penal),
                beta: 1.0,
                rmin: rmin * (1.5 - 0.5 * frac),
                move_limit: 0.2,
            });
            p += 1.0;
        }
        for (beta, move_limit) in [(2.0, 0.2), (4.0, 0.1), (8.0, 0.1), (16.0, 0.05)] {
            stages.push(Stage {
                penal,
                beta,
                rmin,
                move_limit,
            });
        }
        Schedule {
            stages,
            stage_iters: STAGE_ITERS,
            min_stage_iters: MIN_STAGE_ITERS,
            tol: STALL_TOL,
            stage_ctol: STAGE_CTOL,
            final_ctol: FINAL_CTOL,
        }
    }

    /// One stage held until convergence (no continuation), for tests and
    /// comparisons with the classic fixed-p SIMP.
    pub fn fixed(stage: Stage) -> Schedule {
        Schedule {
            stages: vec![stage],
            stage_iters: usize::MAX,
            min_stage_iters: MIN_STAGE_ITERS,
            tol: STALL_TOL,
            stage_ctol: STAGE_CTOL,
            final_ctol: FINAL_CTOL,
        }
    }
}

/// What to do after an iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    /// The next iteration uses the next stage.
    NextStage,
    /// Final stage, change below tolerance.
    Converged,
}

/// Where the optimization is in a [`Schedule`].
#[derive(Clone, Debug)]
pub struct Continuation {
    pub schedule: Schedule,
    pub stage: usize,
    pub iters_in_stage: usize,
    /// Compliances of the latest iterations of this stage.
    recent: VecDeque<f64>,
}

impl Continuation {
    pub fn new(schedule: Schedule) -> Continuation {
        Continuation {
            schedule,
            stage: 0,
            iters_in_stage: 0,
            recent: VecDeque::new(),
        }
    }

    pub fn current(&self) -> Stage {
        self.schedule.stages[self.stage]
    }

    pub fn is_final(&self) -> bool {
        self.stage + 1 == self.schedule.stages.len()
    }

    /// Records one finished iteration with its compliance and the maximum
    /// design change of the update that followed, and moves on when the
    /// stage is done.
    pub fn advance(&mut self, compliance: f64, change: f64) -> Step {
        let s = &self.schedule;
        self.iters_in_stage += 1;
        self.recent.push_back(compliance);
        if self.recent.len() > WINDOW {
            self.recent.pop_front();
        }
        let (lo, hi) = self
            .recent
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &c| {
                (a.min(c), b.max(c))
            });
        let ctol = if self.is_final() {
            s.final_ctol
        } else {
            s.stage_ctol
        };
        let flat = self.recent.len() == WINDOW && hi - lo <= ctol * compliance.abs();
        let stalled = self.iters_in_stage >= s.min_stage_iters && (change < s.tol || flat);
        if self.is_final() {
            return if stalled {
                Step::Converged
            } else {
                Step::Continue
            };
        }
        if stalled || self.iters_in_stage >= s.stage_iters {
            self.stage += 1;
            self.iters_in_stage = 0;
            self.recent.clear();
            Step::NextStage
        } else {
            Step::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_schedule_ends_at_the_requested_values() {
        let s = Schedule::standard(3.0, 1.5);
        let last = *s.stages.last().unwrap();
        assert_eq!((last.penal, last.beta, last.rmin), (3.0, 16.0, 1.5));
        assert_eq!(s.stages[0].penal, 1.0);
        assert_eq!(s.stages.len(), 7);
        let mut c = Continuation::new(s);
        // Stalls move on after MIN_STAGE_ITERS; the final stage converges.
        let mut steps = 0;
        while c.advance(1.0, 0.5) != Step::Converged {
            steps += 1;
        }
        assert_eq!(steps + 1, 7 * MIN_STAGE_ITERS);
    }
}
