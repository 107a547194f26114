//! Go's durations: `time.ParseDuration`, and kube-openapi's `strfmt.ParseDuration`, which
//! tries it first and then reads looser text (`3 days`, `1w2d`). The `duration` string
//! format takes what the second takes, and a CEL rule sees such a field as the duration it
//! reads (feature `cel`).

use kclient_apimachinery::meta::Duration;

/// Go's `time.ParseDuration`, in nanoseconds (apimachinery's [`Duration::parse`]); `None`
/// where Go gives an error.
fn parse_go_duration(text: &str) -> Option<i64> {
    Duration::parse(text).ok().map(Duration::as_nanos)
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
    fn go_durations_come_first() {
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("-1.5s"), Some(-1_500_000_000));
        assert_eq!(parse_go_duration("1d"), None);
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
