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

/// Texts at least this long are hashed in four interleaved chains ([`FxHasher::write_long`]).
const LANES_FROM: usize = 128;

/// What each of the four chains of a long text mixes into the seed to start from: the first
/// starts from the seed itself, and all differ, so that equal words in different chains do
/// not cancel out.
const LANE_SEEDS: [u64; 4] = [
    0,
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
];

/// One step of FxHash: the state rotated, mixed with `word`, multiplied.
#[inline(always)]
fn step(state: u64, word: u64) -> u64 {
    (state.rotate_left(5) ^ word).wrapping_mul(FX_K)
}

/// Eight bytes as a little-endian word.
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

impl FxHasher {
    /// The blocks of 32 bytes of a long text, in four chains of one word per block each, joined
    /// into the state; returns the 0-31 bytes after the last block. One chain waits on its
    /// multiply for every word: a managed-fields set of 3 KB, which each decode of a Pod
    /// hashes to find its shared copy, spent about 2,000 cycles per Pod in that wait, and four
    /// independent chains run side by side. Out of line, so that the short texts that most
    /// lookups hash do not pay for it.
    #[inline(never)]
    fn write_long<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let mut blocks = bytes.chunks_exact(32);
        let mut lanes = LANE_SEEDS.map(|seed| self.0 ^ seed);
        for block in &mut blocks {
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = step(*lane, word(&block[i * 8..i * 8 + 8]));
            }
        }
        self.0 = lanes[1..]
            .iter()
            .fold(lanes[0], |state, &lane| step(state, lane));
        blocks.remainder()
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let bytes = if bytes.len() >= LANES_FROM {
            self.write_long(bytes)
        } else {
            bytes
        };
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.0 = step(self.0, word(chunk));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            // One step for the last 1-7 bytes, not one per byte: they fill the word's low
            // bytes and their count its top byte, so that texts differing only in trailing
            // zero bytes still make different words.
            self.0 = step(self.0, tail_word(tail) | (tail.len() as u64) << 56);
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
        // Short texts take one chain, long ones four (from `LANES_FROM`), then one chain for
        // the 0-31 bytes after the blocks of 32.
        for len in (0..24).chain(LANES_FROM - 1..LANES_FROM + 41) {
            let text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
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

    #[test]
    fn words_moved_between_chains_hash_apart() {
        let hasher = FxBuildHasher(0x0fed_cba9_8765_4321);
        let text = |words: &[(usize, &[u8; 8])]| {
            let mut text = vec![b'x'; LANES_FROM];
            for (at, word) in words {
                text[*at..*at + 8].copy_from_slice(*word);
            }
            hasher.hash_text(&text)
        };
        // Two words swapped between the first and the second chain.
        assert_ne!(
            text(&[(0, b"spec.con"), (8, b"tainers.")]),
            text(&[(0, b"tainers."), (8, b"spec.con")])
        );
        // One word in the first chain, then in the second.
        assert_ne!(text(&[(0, b"spec.con")]), text(&[(8, b"spec.con")]));
    }
}
