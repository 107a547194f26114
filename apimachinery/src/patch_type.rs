//! The kinds of PATCH the API server accepts, each with its own content type.

use std::fmt;

/// The type of a PATCH request body (client-go's `types.PatchType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatchType {
    /// A JSON Patch (RFC 6902): a list of operations.
    Json,
    /// A JSON merge patch (RFC 7386): a partial object; `null` deletes.
    Merge,
    /// A strategic merge patch: a merge patch that merges lists by key where the schema says
    /// so. Built-in types only.
    StrategicMerge,
    /// A server-side apply configuration: the fields this manager owns.
    Apply,
}

impl PatchType {
    /// The `Content-Type` of the request.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

impl fmt::Display for PatchType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.content_type())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::Json.content_type(),
            "application/json-patch+json"
        );
        assert_eq!(
            PatchType::Merge.content_type(),
            "application/merge-patch+json"
        );
        assert_eq!(
            PatchType::StrategicMerge.to_string(),
            "application/strategic-merge-patch+json"
        );
        assert_eq!(
            PatchType::Apply.content_type(),
            "application/apply-patch+yaml"
        );
    }
}
