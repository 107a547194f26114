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

    /// The hash of a text given as its bytes: the same as `str`'s `Hash` (the bytes, then
    /// `0xff`), so that a text met as bytes (from protobuf, before it is checked to be UTF-8)
    /// and as `&str` land in one place.
    #[inline]
    pub(super) fn hash_text(&self, bytes: &[u8]) -> u64 {
        let mut state = self.build_hasher();
        state.write(bytes);
        state.write_u8(0xff);
        state.finish()
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
        let tail = chunks.remainder();
        if !tail.is_empty() {
            // One step for the last 1-7 bytes, not one per byte: they fill the word's low
            // bytes and their count its top byte, so that texts differing only in trailing
            // zero bytes still make different words.
            let word = tail_word(tail) | (tail.len() as u64) << 56;
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_K);
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

/// `tail` (1 to 7 bytes) as the low bytes of a little-endian word, assembled from at most two
/// overlapping loads rather than byte by byte.
#[inline(always)]
fn tail_word(tail: &[u8]) -> u64 {
    let len = tail.len();
    debug_assert!((1..8).contains(&len));
    if len >= 4 {
        let mut head = [0u8; 4];
        let mut last = [0u8; 4];
        head.copy_from_slice(&tail[..4]);
        last.copy_from_slice(&tail[len - 4..]);
        // The overlapping bytes sit at the same place in both loads, so OR keeps them.
        u64::from(u32::from_le_bytes(head)) | u64::from(u32::from_le_bytes(last)) << ((len - 4) * 8)
    } else {
        u64::from(tail[0])
            | u64::from(tail[len / 2]) << (len / 2 * 8)
            | u64::from(tail[len - 1]) << ((len - 1) * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_becomes_its_bytes_in_order() {
        for len in 1..8 {
            let bytes: Vec<u8> = (1..=len as u8).collect();
            let mut expected = [0u8; 8];
            expected[..len].copy_from_slice(&bytes);
            assert_eq!(
                tail_word(&bytes),
                u64::from_le_bytes(expected),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn texts_differing_in_trailing_zeros_or_any_byte_hash_apart() {
        let hasher = FxBuildHasher(0x1234_5678_9abc_def0);
        let hash = |bytes: &[u8]| {
            let mut h = hasher.build_hasher();
            h.write(bytes);
            h.finish()
        };
        let mut seen = std::collections::HashSet::new();
        for len in 0..24 {
            let text: Vec<u8> = (0..len as u8).map(|i| b'a' + i).collect();
            assert!(seen.insert(hash(&text)), "{len} letters");
            let mut zeros = text.clone();
            zeros.push(0);
            assert!(seen.insert(hash(&zeros)), "{len} letters and a zero");
            for i in 0..len {
                let mut changed = text.clone();
                changed[i] ^= 0x20;
                assert_ne!(hash(&changed), hash(&text), "byte {i} of {len}");
            }
        }
    }
}
