//! [`IStr`], the string type of values that repeat across objects (namespaces, label and
//! annotation keys and values, images, node names, owner kinds and API versions), and the
//! bounded interner behind it.
//!
//! An `IStr` is 16 bytes. Strings of up to 14 bytes are stored inline and need no allocation
//! at all. Longer strings are looked up in a process-wide interner while they are decoded, so
//! a thousand Pods running `registry.example.com/team/app:v1.2.3` share one allocation of that
//! image name. A shared string is an [`ArcStr`](arcstr::ArcStr): one pointer to one allocation
//! holding the reference count, the length and the text, so the slot stays at 16 bytes (8 less
//! than a `String` or `CompactString`, which matters because objects have many mostly empty
//! string fields) and reading a shared string touches one cache line, not two.
//!
//! # The interner's bound
//!
//! The interner holds strong references in [`SHARDS`] shards of at most [`SHARD_CAPACITY`]
//! entries each, and only strings of at most [`MAX_INTERNED_LEN`] bytes. When a shard is full it
//! sweeps out the entries that nothing outside the interner uses any more; if it is still full,
//! the new string is allocated on its own and not remembered. So the interner never holds more
//! than `SHARDS * SHARD_CAPACITY` = 65,536 strings of at most 256 bytes (about 18 MiB in the
//! worst case, typically far less), whatever the cluster sends.
//!
//! A shard also sweeps before it is full, whenever it has doubled since its last sweep (and
//! holds at least [`SWEEP_FLOOR`] strings): strings that nothing uses any more (those of
//! objects decoded and dropped, as a watch that keeps no cache does) then number at most about
//! as many as the live ones, plus the floor, instead of filling the shard. The sweeps cost at
//! most two visits of an entry per new string; a decode of strings the shard already holds
//! inserts nothing and never sweeps.
//!
//! In front of the shards, each thread keeps a direct-mapped cache of 512 strings it met lately
//! (at most 512 x 256 bytes per decoding thread), so most lookups take no lock; a string enters
//! it on its second meeting, so that strings every object has its own of do not push out the
//! ones that repeat. A string is hashed once per lookup: the front cache, the shard's choice and
//! the shard's table all use that one hash.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};

use arcstr::ArcStr;
use compact_str::CompactString;
use hashbrown::HashTable;

use super::fx_hash::FxBuildHasher;

/// Strings up to this many bytes are stored inline.
const INLINE_LEN: usize = 14;
/// Longer strings than this are never interned (they are rarely shared, and would make the
/// interner's memory bound large).
pub const MAX_INTERNED_LEN: usize = 256;
/// The number of independently locked shards of the interner.
pub const SHARDS: usize = 16;
/// The most strings one shard remembers.
pub const SHARD_CAPACITY: usize = 4096;
/// A shard of fewer strings than this does not sweep before it is full.
const SWEEP_FLOOR: usize = 64;

/// An immutable string that is stored inline when short and shared through a bounded interner
/// when long; see the [`meta`](crate::meta) module documentation.
///
/// It dereferences to `&str`, compares and hashes as its text, and converts from `&str` and
/// `String`, so `namespace: Some("default".into())` works.
#[derive(Clone)]
pub struct IStr(Repr);

#[derive(Clone)]
enum Repr {
    /// Up to [`INLINE_LEN`] bytes of UTF-8 text.
    Inline {
        len: u8,
        buf: [u8; INLINE_LEN],
    },
    Shared(ArcStr),
}

impl IStr {
    /// An `IStr` holding `s`, interned if it is long.
    pub fn new(s: &str) -> Self {
        if s.len() <= INLINE_LEN {
            IStr(Repr::Inline {
                len: s.len() as u8,
                buf: inline_bytes(s.as_bytes()),
            })
        } else {
            IStr(Repr::Shared(intern(s)))
        }
    }

    /// An `IStr` holding the UTF-8 text `bytes`, or the error that says why they are not
    /// UTF-8. For decoders that hold a field's raw bytes: an inline string is checked a word
    /// at a time when it is ASCII, and a long string that the interner already holds is
    /// compared with it byte for byte and not validated again. Only new long strings and
    /// short non-ASCII ones go through a full UTF-8 check.
    ///
    /// ```
    /// use kclient_apimachinery::meta::IStr;
    ///
    /// assert_eq!(IStr::from_utf8(b"default").unwrap(), "default");
    /// assert!(IStr::from_utf8(b"\xff\xfe").is_err());
    /// ```
    pub fn from_utf8(bytes: &[u8]) -> Result<Self, std::str::Utf8Error> {
        if bytes.len() <= INLINE_LEN {
            let (inline, ascii) = Self::inline_unchecked(bytes);
            if !ascii {
                std::str::from_utf8(bytes)?;
            }
            Ok(inline)
        } else {
            intern_with(bytes, std::str::from_utf8).map(|s| IStr(Repr::Shared(s)))
        }
    }

    /// An inline `IStr` of `bytes` if they are ASCII and at most [`INLINE_LEN`] long: the
    /// common case of [`from_utf8`](Self::from_utf8), for decoders to try first. `None` says
    /// nothing about validity; the caller then takes the general path.
    #[cfg(feature = "protobuf")]
    #[inline(always)]
    pub(crate) fn inline_ascii(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > INLINE_LEN {
            return None;
        }
        let (inline, ascii) = Self::inline_unchecked(bytes);
        ascii.then_some(inline)
    }

    /// `bytes` (at most [`INLINE_LEN`] of them, not yet checked to be UTF-8) as an inline
    /// `IStr`, and whether they are ASCII (then they are UTF-8).
    #[inline(always)]
    fn inline_unchecked(bytes: &[u8]) -> (Self, bool) {
        let buf = inline_bytes(bytes);
        // The overlapping loads repeat bytes and pad with zeros, so no high bit is set in the
        // buffer unless one is in `bytes`.
        let ascii = u128::from_le_bytes(widen(buf)) & ASCII_HIGH_BITS == 0;
        let inline = IStr(Repr::Inline {
            len: bytes.len() as u8,
            buf,
        });
        (inline, ascii)
    }

    /// The empty string.
    pub const fn empty() -> Self {
        IStr(Repr::Inline {
            len: 0,
            buf: [0; INLINE_LEN],
        })
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // The buffer always holds the UTF-8 prefix copied in `new`; the check is a few
            // nanoseconds on at most 14 bytes and keeps the crate free of unsafe code.
            Repr::Inline { len, buf } => {
                std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or("")
            }
            Repr::Shared(s) => s.as_str(),
        }
    }

    /// The text's bytes. Unlike [`as_str`](Self::as_str) this does not check an inline
    /// string's UTF-8 again, so comparisons (`==`, `<`, sorting a map's keys) go through it.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..usize::from(*len)],
            Repr::Shared(s) => s.as_bytes(),
        }
    }

    /// Whether the text lives on the heap (shared through the interner or, when the interner
    /// was full or the text too long, on its own).
    pub fn is_heap(&self) -> bool {
        matches!(self.0, Repr::Shared(_))
    }
}

/// The high bit of every byte of a `u128`: none is set in ASCII text.
const ASCII_HIGH_BITS: u128 = u128::from_le_bytes([0x80; 16]);

/// An inline buffer as the low bytes of a 16-byte word.
#[inline(always)]
fn widen(buf: [u8; INLINE_LEN]) -> [u8; 16] {
    let mut word = [0u8; 16];
    word[..INLINE_LEN].copy_from_slice(&buf);
    word
}

/// `bytes` (at most [`INLINE_LEN`] of them) followed by zeros, assembled in a register from
/// two overlapping loads: a byte-wise copy into a buffer that is then read back as a whole
/// stalls on store forwarding, and that stall was the hottest instruction of decoding a Pod.
#[inline(always)]
fn inline_bytes(bytes: &[u8]) -> [u8; INLINE_LEN] {
    fn word<const N: usize>(bytes: &[u8]) -> [u8; N] {
        let mut word = [0u8; N];
        word.copy_from_slice(&bytes[..N]);
        word
    }
    let len = bytes.len();
    let value: u128 = if len >= 8 {
        let head = u64::from_le_bytes(word(bytes));
        let tail = u64::from_le_bytes(word(&bytes[len - 8..]));
        u128::from(head) | u128::from(tail) << ((len - 8) * 8)
    } else if len >= 4 {
        let head = u32::from_le_bytes(word(bytes));
        let tail = u32::from_le_bytes(word(&bytes[len - 4..]));
        u128::from(head) | u128::from(tail) << ((len - 4) * 8)
    } else if len > 0 {
        u128::from(bytes[0])
            | u128::from(bytes[len / 2]) << (len / 2 * 8)
            | u128::from(bytes[len - 1]) << ((len - 1) * 8)
    } else {
        0
    };
    word(&value.to_le_bytes())
}

impl Default for IStr {
    fn default() -> Self {
        IStr::empty()
    }
}

impl Deref for IStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for IStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for IStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

// Equality and order compare bytes, which for UTF-8 text is the same as comparing `str`s.
impl PartialEq for IStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for IStr {}

impl PartialEq<str> for IStr {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<&str> for IStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for IStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for IStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for IStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for IStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for IStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for IStr {
    fn from(s: &str) -> Self {
        IStr::new(s)
    }
}
impl From<String> for IStr {
    fn from(s: String) -> Self {
        IStr::new(&s)
    }
}
impl From<&String> for IStr {
    fn from(s: &String) -> Self {
        IStr::new(s)
    }
}
impl From<CompactString> for IStr {
    fn from(s: CompactString) -> Self {
        IStr::new(&s)
    }
}

impl serde::Serialize for IStr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for IStr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = IStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IStr, E> {
                Ok(IStr::new(v))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// The process-wide interner: shards of strong references, swept as they grow.
struct Interner {
    hasher: FxBuildHasher,
    shards: Vec<Mutex<Shard>>,
}

struct Shard {
    /// Interned strings, placed by the interner's hash of their text.
    table: HashTable<ArcStr>,
    /// The number of strings at which the next new one first sweeps: twice those that the last
    /// sweep left (at least [`SWEEP_FLOOR`], at most [`SHARD_CAPACITY`]).
    sweep_at: usize,
    /// Inserts into a full shard to let pass before sweeping again after a sweep that freed
    /// little.
    sweep_backoff: usize,
}

impl Interner {
    fn new() -> Self {
        Interner {
            hasher: FxBuildHasher::random(),
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        table: HashTable::new(),
                        sweep_at: SWEEP_FLOOR,
                        sweep_backoff: 0,
                    })
                })
                .collect(),
        }
    }

    /// How many strings the shards hold.
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).table.len())
            .sum()
    }
}

static INTERNER: LazyLock<Interner> = LazyLock::new(Interner::new);

/// A slot of the front cache: a string's hash and the string.
type FrontSlot = Option<(u64, ArcStr)>;

/// Slots of the per-thread front cache of [`intern`].
const FRONT_SLOTS: usize = 512;

thread_local! {
    /// A direct-mapped cache of recently interned strings, so most lookups during a decode
    /// take no lock. It holds at most [`FRONT_SLOTS`] strings per thread (which the sweep
    /// then sees as in use).
    /// Each slot keeps the string's hash beside it, so a lookup of another string that maps
    /// to the slot is told apart without reading the cached string's memory.
    static FRONT: std::cell::RefCell<[FrontSlot; FRONT_SLOTS]> =
        const { std::cell::RefCell::new([const { None }; FRONT_SLOTS]) };
}

/// Whether long strings are interned; see [`set_enabled`].
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns interning on (the default) or off for the whole process, for strings and for
/// managed-field sets alike. Off, each long string and each field set is allocated per object
/// (see `api/README.md`'s benchmark for the cost); for programs that want no process-wide
/// tables at all.
pub fn set_enabled(enabled: bool) {
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// Whether interning is on.
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn intern(s: &str) -> ArcStr {
    let text = |_: &[u8]| Ok::<_, std::convert::Infallible>(s);
    match intern_with(s.as_bytes(), text) {
        Ok(shared) => shared,
        Err(never) => match never {},
    }
}

/// Interns the text `bytes`. `text` turns them into a `&str` (validating them, or not when
/// the caller knows they are UTF-8); it is called only for a string the interner does not
/// hold, since a held one equal byte for byte is valid UTF-8 already.
fn intern_with<'b, E>(
    bytes: &'b [u8],
    text: impl FnOnce(&'b [u8]) -> Result<&'b str, E>,
) -> Result<ArcStr, E> {
    if bytes.len() > MAX_INTERNED_LEN || !ENABLED.load(Ordering::Relaxed) {
        return text(bytes).map(ArcStr::from);
    }
    let interner = &*INTERNER;
    let hash = interner.hasher.hash_text(bytes);
    let slot = ((hash >> 32) as usize) % FRONT_SLOTS;
    // `try_with`: while a thread is being torn down its cache may be gone; the shards still
    // work.
    let hit = FRONT
        .try_with(|front| {
            front.borrow()[slot]
                .as_ref()
                .filter(|(h, a)| *h == hash && a.as_bytes() == bytes)
                .map(|(_, a)| a.clone())
        })
        .ok()
        .flatten();
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let (shared, admit) = intern_shared(interner, hash, bytes, text)?;
    if admit {
        let _ = FRONT.try_with(|front| front.borrow_mut()[slot] = Some((hash, shared.clone())));
    }
    Ok(shared)
}

/// Whether something besides the interner (and front caches) holds `s`.
fn in_use(s: &ArcStr) -> bool {
    ArcStr::strong_count(s).is_none_or(|count| count > 1)
}

/// The shard lookup behind [`intern_with`]; `hash` is the interner's hash of `bytes`. Says
/// whether the string should enter the front cache: when the shard held it already, or when
/// the shard is full and the front cache is all that can share it. A string that is new to the
/// shard stays out: a string that every object has its own of (a checksum annotation) would
/// otherwise evict the strings that do repeat, and each eviction costs a shard lookup later.
fn intern_shared<'b, E>(
    interner: &Interner,
    hash: u64,
    bytes: &'b [u8],
    text: impl FnOnce(&'b [u8]) -> Result<&'b str, E>,
) -> Result<(ArcStr, bool), E> {
    // Bits the front cache's slot and the table's buckets (low bits) and control bytes (top
    // seven bits) do not use, so the strings of one shard do not crowd one part of its table.
    let shard_index = ((hash >> 44) as usize) % SHARDS;
    // A poisoned shard only means another thread panicked while holding it; the table is
    // still a valid set of strings.
    let mut shard = interner.shards[shard_index]
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = shard.table.find(hash, |entry| entry.as_bytes() == bytes) {
        return Ok((found.clone(), true));
    }
    let s = text(bytes)?;
    if shard.table.len() >= shard.sweep_at {
        if shard.table.len() >= SHARD_CAPACITY && shard.sweep_backoff > 0 {
            shard.sweep_backoff -= 1;
            return Ok((ArcStr::from(s), true));
        }
        shard.table.retain(|entry| in_use(entry));
        let live = shard.table.len();
        shard.sweep_at = (live * 2).clamp(SWEEP_FLOOR, SHARD_CAPACITY);
        if live >= SHARD_CAPACITY * 3 / 4 {
            // Mostly live strings: sweeping a full shard again soon would free little and cost
            // much.
            shard.sweep_backoff = SHARD_CAPACITY / 4;
        }
        if live >= SHARD_CAPACITY {
            return Ok((ArcStr::from(s), true));
        }
    }
    let shared = ArcStr::from(s);
    let hasher = interner.hasher;
    shard.table.insert_unique(hash, shared.clone(), |entry| {
        hasher.hash_text(entry.as_bytes())
    });
    Ok((shared, false))
}

/// How many strings the interner currently holds (for tests and memory reports).
pub fn interned_count() -> usize {
    INTERNER.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_inline_and_long_ones_shared() {
        let short = IStr::new("default");
        assert!(!short.is_heap());
        assert_eq!(short, "default");
        let image = "registry.example.com/team/application:v1.2.3";
        let a = IStr::new(image);
        let b = IStr::from(image.to_string());
        assert!(a.is_heap());
        assert_eq!(a, b);
        match (&a.0, &b.0) {
            (Repr::Shared(x), Repr::Shared(y)) => assert!(ArcStr::ptr_eq(x, y)),
            _ => panic!("expected shared strings"),
        }
    }

    #[test]
    fn istr_is_two_words() {
        assert_eq!(std::mem::size_of::<IStr>(), 16);
        assert_eq!(std::mem::size_of::<Option<IStr>>(), 16);
    }

    #[test]
    fn inline_boundary_and_utf8() {
        for s in [
            "",
            "a",
            "exactly-14-byt",
            "fifteen-bytes-x",
            "héllo wörld ü",
            "日本語のテキスト",
        ] {
            let i = IStr::new(s);
            assert_eq!(i.as_str(), s);
            assert_eq!(i.is_heap(), s.len() > INLINE_LEN);
        }
    }

    #[test]
    fn very_long_strings_are_not_interned() {
        let long = "x".repeat(MAX_INTERNED_LEN + 1);
        let a = IStr::new(&long);
        let b = IStr::new(&long);
        match (&a.0, &b.0) {
            (Repr::Shared(x), Repr::Shared(y)) => assert!(!ArcStr::ptr_eq(x, y)),
            _ => panic!("expected heap strings"),
        }
    }

    #[test]
    fn interner_stays_bounded() {
        let mut keep = Vec::new();
        for i in 0..(SHARDS * SHARD_CAPACITY + 5000) {
            keep.push(IStr::new(&format!(
                "a-rather-long-unique-string-number-{i}"
            )));
        }
        assert!(interned_count() <= SHARDS * SHARD_CAPACITY);
        drop(keep);
        // Unused entries are swept out when a full shard sees new strings.
        for i in 0..(SHARDS * SHARD_CAPACITY) {
            let _ = IStr::new(&format!("another-rather-long-unique-string-{i}"));
        }
        assert!(interned_count() <= SHARDS * SHARD_CAPACITY);
    }

    /// Interns `text` in `interner` (not the process-wide one, so other tests do not count).
    fn intern_in(interner: &Interner, text: &str) -> ArcStr {
        let hash = interner.hasher.hash_text(text.as_bytes());
        let ok = |_: &[u8]| Ok::<_, std::convert::Infallible>(text);
        match intern_shared(interner, hash, text.as_bytes(), ok) {
            Ok((shared, _)) => shared,
            Err(never) => match never {},
        }
    }

    #[test]
    fn strings_nothing_uses_are_swept_long_before_the_shards_fill() {
        let interner = Interner::new();
        // A watch that keeps nothing: every string is dropped right after its decode.
        for i in 0..20_000 {
            drop(intern_in(
                &interner,
                &format!("note-of-a-dropped-object-{i}"),
            ));
        }
        assert!(
            interner.len() <= SHARDS * SWEEP_FLOOR,
            "{} unused strings held",
            interner.len()
        );

        // Live strings are never swept: each is found again, shared.
        let live: Vec<ArcStr> = (0..5_000)
            .map(|i| intern_in(&interner, &format!("label-value-of-a-cached-object-{i}")))
            .collect();
        for i in 0..20_000 {
            drop(intern_in(&interner, &format!("another-dropped-note-{i}")));
        }
        for (i, kept) in live.iter().enumerate() {
            let again = intern_in(&interner, &format!("label-value-of-a-cached-object-{i}"));
            assert!(ArcStr::ptr_eq(kept, &again), "live string {i} was swept");
        }
        // Unused strings stay at most about as many as the live ones (each shard sweeps when
        // it has doubled), plus the floor.
        assert!(
            interner.len() <= 2 * live.len() + SHARDS * SWEEP_FLOOR,
            "{} strings held for {} live ones",
            interner.len(),
            live.len()
        );
    }

    #[test]
    fn serde_round_trip() {
        let s: IStr = serde_json::from_str("\"kube-system-with-a-long-name\"").unwrap();
        assert_eq!(s.as_str(), "kube-system-with-a-long-name");
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            "\"kube-system-with-a-long-name\""
        );
    }
}
