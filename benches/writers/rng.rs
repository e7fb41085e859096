//! A small deterministic random source (SplitMix64): the same seed gives the same run on every
//! machine, with no dependency the crate's own tests would have to build.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `mean` give or take `jitter` of it, uniformly.
    pub fn around(&mut self, mean: f64, jitter: f64) -> f64 {
        mean * (1.0 + jitter * (2.0 * self.unit() - 1.0))
    }

    pub fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }
}
