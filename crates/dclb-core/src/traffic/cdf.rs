//! Flow-size distributions given as piecewise-linear CDFs.
//!
//! A CDF is a list of (size, cumulative probability) points, non-decreasing in both. Between two points the
//! size is linearly interpolated; a repeated size with rising probability is a point mass; a repeated
//! probability is a flat segment (no mass). If the first point has probability p0 > 0, that mass sits at the
//! first size. Sampling inverts the CDF at a uniform draw and never returns less than 1 byte. The mean used
//! to calibrate load is the mean of exactly this interpolated distribution.

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// `points` must already satisfy [`crate::check::cdf_problem`] (have no problem).
    pub fn new(points: Vec<(f64, f64)>) -> Cdf {
        Cdf { points }
    }

    /// Mean of the piecewise-linear distribution (bytes).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].0 * p[0].1;
        for w in p.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }

    /// The largest size it draws.
    pub fn largest(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// `(E[S; S < cut], E[S], E[S²])` of the piecewise-linear distribution: each segment is uniform over its
    /// sizes, a point mass sits at its size.
    pub fn moments(&self, cut: f64) -> (f64, f64, f64) {
        let p = &self.points;
        let (x0, p0) = p[0];
        let (mut below, mut mean, mut second) = (if x0 < cut { x0 * p0 } else { 0.0 }, x0 * p0, x0 * x0 * p0);
        for w in p.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            let mass = pb - pa;
            if mass <= 0.0 {
                continue;
            }
            mean += mass * (a + b) / 2.0;
            second += mass * (a * a + a * b + b * b) / 3.0;
            if b <= a {
                // A point mass at `a`.
                if a < cut {
                    below += mass * a;
                }
            } else if b <= cut {
                below += mass * (a + b) / 2.0;
            } else if a < cut {
                below += mass * (cut - a) / (b - a) * (a + cut) / 2.0;
            }
        }
        (below, mean, second)
    }

    /// Size at cumulative probability `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        if u < p[0].1 {
            return p[0].0;
        }
        // First point whose probability exceeds u: the segment (i-1, i) contains u.
        let i = p.partition_point(|q| q.1 <= u);
        if i >= p.len() {
            return p[p.len() - 1].0;
        }
        let (x0, p0) = p[i - 1];
        let (x1, p1) = p[i];
        x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        (self.quantile(rng.unit()).round() as u64).max(1)
    }
}

/// A mixture of CDFs weighted by flow count.
#[derive(Clone, Debug)]
pub struct Mixture {
    parts: Vec<(f64, Cdf)>,
    total: f64,
}

impl Mixture {
    pub fn new(parts: Vec<(f64, Cdf)>) -> Mixture {
        let total = parts.iter().map(|p| p.0).sum();
        Mixture { parts, total }
    }
    pub fn mean(&self) -> f64 {
        self.parts.iter().map(|(w, c)| w * c.mean()).sum::<f64>() / self.total
    }
    /// The largest size any part draws.
    pub fn largest(&self) -> f64 {
        self.parts.iter().map(|(_, c)| c.largest()).fold(0.0, f64::max)
    }
    /// [`Cdf::moments`] of the mixture.
    pub fn moments(&self, cut: f64) -> (f64, f64, f64) {
        let mut m = (0.0, 0.0, 0.0);
        for (w, c) in &self.parts {
            let (a, b, d) = c.moments(cut);
            let share = w / self.total;
            m = (m.0 + share * a, m.1 + share * b, m.2 + share * d);
        }
        m
    }
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        if self.parts.len() == 1 {
            return self.parts[0].1.sample(rng);
        }
        let mut x = rng.unit() * self.total;
        for (w, c) in &self.parts {
            if x < *w {
                return c.sample(rng);
            }
            x -= w;
        }
        self.parts[self.parts.len() - 1].1.sample(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_uniform_segment() {
        let c = Cdf::new(vec![(0.0, 0.0), (100.0, 1.0)]);
        assert!((c.mean() - 50.0).abs() < 1e-9);
    }

    #[test]
    fn point_masses_and_flat_segments() {
        // 20% at exactly 300 (repeated size), nothing between 300 and 600 (flat), then linear to 1000.
        let c = Cdf::new(vec![(150.0, 0.0), (300.0, 0.12), (300.0, 0.32), (600.0, 0.32), (1000.0, 1.0)]);
        assert_eq!(c.quantile(0.2), 300.0);
        assert_eq!(c.quantile(0.32), 600.0);
        assert!((c.quantile(0.66) - 800.0).abs() < 1e-9);
        let mean = 0.12 * 225.0 + 0.2 * 300.0 + 0.68 * 800.0;
        assert!((c.mean() - mean).abs() < 1e-9);
    }

    #[test]
    fn sample_mean_matches_interpolated_mean() {
        let c = Cdf::new(vec![(0.0, 0.0), (10000.0, 0.15), (20000.0, 0.2), (1_000_000.0, 0.7), (30_000_000.0, 1.0)]);
        let mut r = Rng::new(3);
        let n = 400_000;
        let s: f64 = (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((s / c.mean() - 1.0).abs() < 0.02, "{s} vs {}", c.mean());
    }

    #[test]
    fn partial_moments_match_a_large_sample() {
        let c = Cdf::new(vec![(100.0, 0.0), (10_000.0, 0.8), (152_522.0, 0.8346), (390_541.0, 0.9), (3_223_542.0, 0.953846), (1e8, 0.99), (1e9, 1.0)]);
        let cut = 125_000.0;
        let (below, mean, second) = c.moments(cut);
        assert!((mean - c.mean()).abs() < 1e-6 * mean);
        let mut r = Rng::new(7);
        let n = 2_000_000;
        let xs: Vec<f64> = (0..n).map(|_| c.quantile(r.unit())).collect();
        let b: f64 = xs.iter().filter(|&&x| x < cut).sum::<f64>() / n as f64;
        let s2: f64 = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
        assert!((b / below - 1.0).abs() < 0.01, "{b} vs {below}");
        // The second moment of a heavy tail converges slowly: 5% at two million draws.
        assert!((s2 / second - 1.0).abs() < 0.05, "{s2} vs {second}");
        // Data mining: E[S^2] / (2 E[S]) is about 255 MB (docs/assumptions.md).
        assert!((second / (2.0 * mean) / 255e6 - 1.0).abs() < 0.02, "{}", second / (2.0 * mean));
    }

    #[test]
    fn never_below_one_byte() {
        let c = Cdf::new(vec![(0.0, 0.0), (1.0, 1.0)]);
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| c.sample(&mut r) >= 1));
    }
}
