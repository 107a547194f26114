//! `Warning` response headers (RFC 7234 `299 - "text"`), client-go's `WarningHandler`.
//!
//! The API server sends warnings for deprecated APIs and for requests it accepted with
//! doubts. The warnings of the response a request ends with are parsed, passed to the
//! configured handler (by default logged with `tracing` at warn level) and returned to callers
//! that ask for them; those of a response the request retries (a 429 or 5xx with
//! `Retry-After`) are not, as client-go hands over only the final response's.

use http::HeaderMap;

/// Receives the warnings of each request's final response.
pub trait WarningHandler: Send + Sync {
    /// Called once per warning; `text` is the unquoted warning text.
    fn handle_warning(&self, code: u16, agent: &str, text: &str);
}

/// The default handler: logs each warning with code 299 and a text with `tracing::warn!`, and
/// no other (client-go's `WarningLogger`: 299 is the code the API server uses; other codes
/// come from caches and proxies on the way, RFC 7234's 1xx and 2xx).
#[derive(Debug, Default, Clone, Copy)]
pub struct LogWarningHandler;

impl WarningHandler for LogWarningHandler {
    fn handle_warning(&self, code: u16, _agent: &str, text: &str) {
        if code == 299 && !text.is_empty() {
            tracing::warn!("{text}");
        }
    }
}

/// One parsed `Warning` header value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Warning {
    /// The warn-code (299 for Kubernetes).
    pub code: u16,
    /// The agent (`-` for the API server).
    pub agent: String,
    /// The warning text, unquoted.
    pub text: String,
}

/// Parses every `Warning` header of a response; malformed ones are skipped.
pub(crate) fn parse_warnings(headers: &HeaderMap) -> Vec<Warning> {
    let mut out = Vec::new();
    for value in headers.get_all(http::header::WARNING) {
        let Ok(value) = value.to_str() else { continue };
        let mut rest = value.trim();
        // A header may hold several comma-separated warnings.
        while !rest.is_empty() {
            match parse_one(rest) {
                Some((w, tail)) => {
                    out.push(w);
                    rest = tail.trim_start().trim_start_matches(',').trim_start();
                }
                None => break,
            }
        }
    }
    out
}

fn parse_one(s: &str) -> Option<(Warning, &str)> {
    let (code, rest) = s.split_once(' ')?;
    let code: u16 = code.parse().ok()?;
    let (agent, rest) = rest.trim_start().split_once(' ')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let mut text = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, next) = chars.next()?;
                text.push(next);
            }
            '"' => {
                let mut tail = &rest[i + 1..];
                // Skip an optional warn-date.
                if let Some(after) = tail.trim_start().strip_prefix('"')
                    && let Some(end) = after.find('"')
                {
                    tail = &after[end + 1..];
                }
                return Some((
                    Warning {
                        code,
                        agent: agent.to_string(),
                        text,
                    },
                    tail,
                ));
            }
            c => text.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubernetes_warnings() {
        let mut h = HeaderMap::new();
        h.append(
            http::header::WARNING,
            r#"299 - "v1 ComponentStatus is deprecated in v1.19+""#
                .parse()
                .unwrap(),
        );
        h.append(
            http::header::WARNING,
            r#"299 - "a \"quoted\" word", 299 - "second""#.parse().unwrap(),
        );
        h.append(http::header::WARNING, "garbage".parse().unwrap());
        let w = parse_warnings(&h);
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "v1 ComponentStatus is deprecated in v1.19+",
                "a \"quoted\" word",
                "second"
            ]
        );
        assert_eq!(w[0].code, 299);
        assert_eq!(w[0].agent, "-");
    }

    /// The default handler logs what client-go's `WarningLogger` logs: code 299 with a text.
    #[test]
    fn the_log_handler_logs_only_the_api_server_s_warnings() {
        let logs = kclient_testenv::LogCapture::start(tracing::Level::DEBUG);
        let handler = LogWarningHandler;
        handler.handle_warning(214, "proxy", "Transformation Applied");
        handler.handle_warning(110, "cache", "Response is Stale");
        handler.handle_warning(299, "-", "");
        handler.handle_warning(299, "-", "v1 ComponentStatus is deprecated");
        let text = logs.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(
            lines[0].contains("WARN") && lines[0].contains("v1 ComponentStatus is deprecated"),
            "{text}"
        );
    }
}
