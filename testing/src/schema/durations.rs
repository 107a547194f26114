//! Go's durations: `time.ParseDuration`, and kube-openapi's `strfmt.ParseDuration`, which
//! tries it first and then reads looser text (`3 days`, `1w2d`). The `duration` string
//! format takes what the second takes, and a CEL rule sees such a field as the duration it
//! reads (feature `cel`).

/// Nanoseconds per unit of `time.ParseDuration`.
fn go_unit(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Go's `time.ParseDuration`, in nanoseconds; `None` where Go gives an error.
pub(crate) fn parse_go_duration(text: &str) -> Option<i64> {
    let (neg, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return None;
        }
        // The integer part; an overflow is an error.
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut v: u64 = 0;
        for b in s[..int_len].bytes() {
            if v > LIMIT / 10 {
                return None;
            }
            v = v * 10 + u64::from(b - b'0');
            if v > LIMIT {
                return None;
            }
        }
        s = &s[int_len..];
        // The fraction: digits past what fits are dropped.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in rest[..frac_len].bytes() {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let next = f * 10 + u64::from(b - b'0');
                if next > LIMIT {
                    overflow = true;
                    continue;
                }
                f = next;
                scale *= 10.0;
            }
            post = frac_len > 0;
            s = &rest[frac_len..];
        }
        if int_len == 0 && !post {
            return None;
        }
        let unit_len = s
            .bytes()
            .take_while(|b| !(*b == b'.' || b.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return None;
        }
        let unit = go_unit(&s[..unit_len])?;
        s = &s[unit_len..];
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return None;
            }
        }
        total += v;
        if total > LIMIT {
            return None;
        }
    }
    if neg {
        return Some((total as i64).wrapping_neg());
    }
    i64::try_from(total).ok()
}

/// Each unit of kube-openapi's loose reading: its spellings (the last also as a prefix,
/// `days` for `day`), and its nanoseconds.
const LOOSE_UNITS: [(&[&str], i64); 8] = [
    (&["ns", "nano"], 1),
    (&["us", "\u{b5}s", "micro"], 1_000),
    (&["ms", "milli"], 1_000_000),
    (&["s", "sec"], 1_000_000_000),
    (&["m", "min"], 60_000_000_000),
    (&["h", "hr", "hour"], 3_600_000_000_000),
    (&["d", "day"], 86_400_000_000_000),
    (&["w", "wk", "week"], 604_800_000_000_000),
];

/// kube-openapi's `strfmt.ParseDuration`, in nanoseconds: Go's `time.ParseDuration`, or
/// else the sum of every `<digits><spaces><letters>` in the text (ASCII digits and spaces) whose letters name a unit
/// (the rest of the text is ignored; Go's int64 arithmetic wraps). `None` when neither
/// reads it.
pub(crate) fn parse_duration(text: &str) -> Option<i64> {
    if let Some(nanos) = parse_go_duration(text) {
        return Some(nanos);
    }
    let (mut total, mut ok) = (0i64, false);
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_ascii_digit() {
            i += 1;
            continue;
        }
        let digits_start = chars[i].0;
        let mut j = i;
        while j < chars.len() && chars[j].1.is_ascii_digit() {
            j += 1;
        }
        let digits_end = chars.get(j).map_or(text.len(), |c| c.0);
        let mut k = j;
        while k < chars.len() && matches!(chars[k].1, '\t' | '\n' | '\x0c' | '\r' | ' ') {
            k += 1;
        }
        let letters_start = k;
        while k < chars.len() && (chars[k].1.is_ascii_alphabetic() || chars[k].1 == '\u{b5}') {
            k += 1;
        }
        if k == letters_start {
            // No unit after these digits: the next match starts after them.
            i = j;
            continue;
        }
        let unit_text: String = chars[letters_start..k].iter().map(|c| c.1).collect();
        // Go's `strconv.Atoi` of the digits; an overflow is an error of the whole parse.
        let factor: i64 = text[digits_start..digits_end].parse().ok()?;
        let unit = unit_text.to_lowercase();
        for (spellings, nanos) in LOOSE_UNITS {
            let last = spellings.len() - 1;
            for (n, spelling) in spellings.iter().enumerate() {
                if (n == last && unit.starts_with(spelling)) || spelling.eq_ignore_ascii_case(&unit)
                {
                    ok = true;
                    total = total.wrapping_add(factor.wrapping_mul(nanos));
                }
            }
        }
        i = k;
    }
    ok.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::{parse_duration, parse_go_duration};

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_go_duration("-300ms"), Some(-300_000_000));
        assert_eq!(parse_go_duration("0"), Some(0));
        assert_eq!(parse_go_duration("1\u{b5}s"), Some(1_000));
        assert_eq!(parse_go_duration(".5m"), Some(30_000_000_000));
        assert_eq!(parse_go_duration("1"), None);
        assert_eq!(parse_go_duration("1d"), None);
        assert_eq!(parse_go_duration(""), None);
        assert_eq!(parse_go_duration("9223372036854775807ns"), Some(i64::MAX));
        assert_eq!(parse_go_duration("9223372036854775808ns"), None);
    }

    #[test]
    fn loose_durations() {
        assert_eq!(parse_duration("3 days"), Some(3 * 86_400_000_000_000));
        assert_eq!(parse_duration("1w2d"), Some(9 * 86_400_000_000_000));
        assert_eq!(parse_duration("2 minutes"), Some(120_000_000_000));
        assert_eq!(parse_duration("5 parsecs"), None);
        assert_eq!(parse_duration("1"), None);
    }
}
