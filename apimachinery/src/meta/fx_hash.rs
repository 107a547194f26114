//! The hasher of the interners behind [`IStr`](super::IStr) and [`FieldsV1`](super::FieldsV1).

use std::hash::{BuildHasher, Hasher};

/// A fast multiplicative hasher (FxHash's mixing) with a per-process random seed: interned
/// strings are short and hashed on every decode, where SipHash showed up in the profile. The
/// sets are bounded, so a crafted collision can cost little.
#[derive(Clone, Copy)]
pub(super) struct FxBuildHasher(u64);

impl FxBuildHasher {
    /// A hasher seeded from the process's random hash keys.
    pub(super) fn random() -> Self {
        FxBuildHasher(std::hash::RandomState::new().hash_one(0x006b_636c_6965_6e74_u64))
    }
}

pub(super) struct FxHasher(u64);

const FX_K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(FX_K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(FX_K);
        }
    }
    /// The state rotated: a multiply leaves its low bits depending on the input's low bits
    /// alone, and hash tables pick buckets by the low bits.
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

impl BuildHasher for FxBuildHasher {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(self.0)
    }
}
