//! `Rng`: the runner's deterministic pseudo-random numbers (xoshiro256**, seeded through
//! SplitMix64), so that one printed seed replays the same inputs on any machine.

/// A small, fast, deterministic generator; not for cryptography.
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole sequence follows from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `1/n`.
    pub(crate) fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A random element of `items` (which must not be empty).
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A copy of a random element of `items` (which must not be empty).
    pub(crate) fn choose<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A length skewed towards small values but sometimes up to `max`: a quarter of the draws
    /// are uniform over `0..=max`, the rest over `0..=16`.
    pub(crate) fn len_upto(&mut self, max: usize) -> usize {
        if self.one_in(4) {
            self.below(max + 1)
        } else {
            self.below(max.min(16) + 1)
        }
    }
}

/// FNV-1a over `bytes`: names findings by content and identifies outcomes.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, {
            let mut r = Rng::new(8);
            (0..5).map(|_| r.next_u64()).collect::<Vec<_>>()
        });
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
