//! Naming: JSON property names to Rust field names, and OpenAPI descriptions to rustdoc text
//! that renders and passes rustdoc's lints (no accidental links, HTML tags or doctests).

/// Rust keywords that cannot be field names; they get a trailing underscore.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
    "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static",
    "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// `podIP` -> `pod_ip`, `hostIPs` -> `host_ips`, `$ref` -> `ref_`, `x-kubernetes-list-type`
/// -> `x_kubernetes_list_type`, `type` -> `type_`.
pub(crate) fn field_name(json: &str) -> String {
    let cleaned: String = json
        .chars()
        .map(|c| if c == '-' { '_' } else { c })
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let chars: Vec<char> = cleaned.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_uppercase() {
            // An uppercase run: an acronym (`IP`, `URL`), possibly plural (`IPs`), possibly
            // followed by a capitalised word (`CPUUtilization` -> `cpu`, `utilization`).
            let start = i;
            let mut end = i;
            while end < chars.len() && chars[end].is_ascii_uppercase() {
                end += 1;
            }
            let mut word_end = end;
            if end - start > 1 && end < chars.len() && chars[end].is_ascii_lowercase() {
                let plural_s = chars[end] == 's'
                    && (end + 1 == chars.len() || !chars[end + 1].is_ascii_lowercase());
                if plural_s {
                    word_end = end + 1;
                } else {
                    word_end = end - 1; // the last capital starts the next word
                }
            } else if end - start == 1 {
                word_end = end;
                while word_end < chars.len()
                    && (chars[word_end].is_ascii_lowercase() || chars[word_end].is_ascii_digit())
                {
                    word_end += 1;
                }
            }
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(
                chars[start..word_end]
                    .iter()
                    .map(|c| c.to_ascii_lowercase()),
            );
            i = word_end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) || json.starts_with('$') {
        out.push('_');
    }
    out
}

/// Turns an OpenAPI description into doc comment lines (`/// ...`), indented by `indent`.
pub(crate) fn doc_lines(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for line in sanitize(text).lines() {
        if line.is_empty() {
            out.push_str(indent);
            out.push_str("///\n");
        } else {
            out.push_str(indent);
            out.push_str("/// ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Escapes Markdown that rustdoc would misread: link brackets, HTML-looking tags, bare URLs,
/// indented lines (which would become Rust doctests) and untagged code fences.
fn sanitize(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_fence = false;
    for raw in text.trim().lines() {
        let line = raw.trim_end();
        if line.trim_start().starts_with("```") {
            if in_fence {
                out.push("```".to_string());
            } else {
                out.push("```text".to_string());
                // Text after the fence on the same line (the upstream docs do this).
                let rest = line.trim_start()[3..].trim();
                if !rest.is_empty() {
                    out.push(rest.to_string());
                }
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            // A fence closed on the same line as text: `... ```.
            if let Some(body) = line.strip_suffix("```") {
                out.push(body.to_string());
                out.push("```".to_string());
                in_fence = false;
            } else {
                out.push(line.to_string());
            }
            continue;
        }
        // Inline fences mid-sentence close on their own line.
        if line.contains("```") {
            let mut acc = String::new();
            for (i, part) in line.split("```").enumerate() {
                if i % 2 == 0 {
                    acc.push_str(&escape(part.trim()));
                } else {
                    acc.push('`');
                    acc.push_str(&part.replace('`', "'"));
                    acc.push('`');
                }
            }
            out.push(acc);
            continue;
        }
        out.push(escape(line.trim_start()));
    }
    if in_fence {
        out.push("```".to_string());
    }
    out.join("\n")
}

/// Escapes one line of prose.
fn escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(url_len) = url_at(rest) {
            let (url, tail) = rest.split_at(url_len);
            out.push('<');
            out.push_str(url);
            out.push('>');
            rest = tail;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        match c {
            '[' | ']' | '<' | '>' | '*' | '\\' | '#' | '|' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The length of the URL starting at the beginning of `s`, if one does.
fn url_at(s: &str) -> Option<usize> {
    if !(s.starts_with("http://") || s.starts_with("https://")) {
        return None;
    }
    let mut len = s
        .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '<' || c == '>')
        .unwrap_or(s.len());
    while len > 0 && s[..len].ends_with(['.', ',', ')', ';', ':']) {
        len -= 1;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names() {
        for (json, rust) in [
            ("podIP", "pod_ip"),
            ("podIPs", "pod_ips"),
            ("hostIPs", "host_ips"),
            ("apiVersion", "api_version"),
            (
                "targetCPUUtilizationPercentage",
                "target_cpu_utilization_percentage",
            ),
            ("URL", "url"),
            ("type", "type_"),
            ("$ref", "ref_"),
            ("$schema", "schema_"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
            ("nodeSelectorTerms", "node_selector_terms"),
            ("externalIPs", "external_ips"),
            ("clusterIPs", "cluster_ips"),
            (
                "serverAddressByClientCIDRs",
                "server_address_by_client_cidrs",
            ),
            ("v1", "v1"),
            ("caBundle", "ca_bundle"),
            ("IPFamilies", "ip_families"),
            ("fsGroup", "fs_group"),
            ("readOnly", "read_only"),
            ("x509", "x509"),
        ] {
            assert_eq!(field_name(json), rust, "{json}");
        }
    }

    #[test]
    fn docs_escape_markdown() {
        let d = doc_lines(
            "See [x] <quantity> at https://k8s.io/docs.\n\n\tindented\n```\n<a>\n```",
            "",
        );
        assert_eq!(
            d,
            "/// See \\[x\\] \\<quantity\\> at <https://k8s.io/docs>.\n///\n/// indented\n/// ```text\n/// <a>\n/// ```\n"
        );
    }
}
