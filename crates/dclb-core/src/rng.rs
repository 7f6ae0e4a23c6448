//! Seeded random numbers, one stream per purpose.
//!
//! Every consumer of randomness (the traffic generator, each switch's balancer, each host's edge balancer, each
//! flow's port numbers) gets its own [`Rng`] derived from the scenario seed and a purpose key. Changing the
//! scheme therefore never changes the traffic, and adding a switch never shifts another switch's draws.
//!
//! The generator is xoshiro256++ (public-domain algorithm by Blackman and Vigna), seeded through SplitMix64.

/// Purposes for [`Rng::derive`]; the values are part of the determinism contract, do not renumber.
#[derive(Copy, Clone, Debug)]
#[repr(u64)]
pub enum Stream {
    Traffic = 1,
    Switch = 2,
    Edge = 3,
    HashSalt = 4,
    FlowPorts = 5,
    LinkLoss = 6,
    /// The stationary start's fluid run (`traffic/stationary.rs`).
    Prefill = 7,
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A 64-bit mixing function (the SplitMix64 finaliser), used for flow hashing.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut st = seed;
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        Rng { s }
    }

    /// The stream for `purpose` number `index` (e.g. switch 3) under scenario seed `seed`.
    pub fn derive(seed: u64, purpose: Stream, index: u64) -> Rng {
        let mut st = seed ^ mix64((purpose as u64) << 32 ^ index.wrapping_mul(0x9E37_79B9));
        Rng::new(splitmix64(&mut st))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0].wrapping_add(self.s[3]).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n); `n` must be positive. Lemire's multiply-shift (bias below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Exponentially distributed with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        let u = 1.0 - self.unit(); // (0, 1]
        -mean * u.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(7, Stream::Switch, 1).next_u64()).collect();
        assert!(a.iter().all(|&x| x == a[0]));
        assert_ne!(Rng::derive(7, Stream::Switch, 1).next_u64(), Rng::derive(7, Stream::Switch, 2).next_u64());
        assert_ne!(Rng::derive(7, Stream::Switch, 1).next_u64(), Rng::derive(8, Stream::Switch, 1).next_u64());
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut r = Rng::new(1);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[r.below(4)] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
