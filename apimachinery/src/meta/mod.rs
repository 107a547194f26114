//! Kubernetes `meta/v1` types and the value types they are built from, generated from the
//! pinned Kubernetes version's OpenAPI documents by `api/gen`.
