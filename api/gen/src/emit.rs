//! Rust source emission: one file per group/version, the module tree, the crate root of
//! `kclient-api` and its Cargo features.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::model::{Crate, Field, Model, Module, Struct, Ty};
use crate::names::doc_lines;

/// The per-file state of name resolution: which names are defined locally and which are
/// imported from where.
pub(crate) struct FileCtx<'a> {
    module: &'a Module,
    local: BTreeSet<String>,
    imports: BTreeMap<String, String>,
    /// Names already brought in by the file's fixed preamble.
    preimported: BTreeSet<String>,
}

impl FileCtx<'_> {
    /// The path prefix of `kclient_apimachinery` seen from this file.
    pub(crate) fn apimachinery(&self) -> &'static str {
        match self.module.krate {
            Crate::Apimachinery => "crate",
            Crate::Api => "kclient_apimachinery",
        }
    }

    /// A name for `path::name`, importing it when that is unambiguous.
    fn use_item(&mut self, path: &str, name: &str) -> String {
        if self.preimported.contains(name) {
            return name.to_string();
        }
        if self.local.contains(name) {
            return format!("{path}::{name}");
        }
        match self.imports.get(name) {
            Some(p) if p == path => name.to_string(),
            Some(_) => format!("{path}::{name}"),
            None => {
                self.imports.insert(name.to_string(), path.to_string());
                name.to_string()
            }
        }
    }

    fn value_type(&mut self, name: &str) -> String {
        let path = format!("{}::meta", self.apimachinery());
        self.use_item(&path, name)
    }

    /// The path of a generated type in `module` from this file.
    fn type_path(&mut self, module: &Module, name: &str) -> String {
        if module == self.module {
            return name.to_string();
        }
        let path = match module.krate {
            Crate::Apimachinery => format!(
                "{}::{}::{}",
                self.apimachinery(),
                module.group,
                module.version
            ),
            Crate::Api => format!("crate::{}::{}", module.group, module.version),
        };
        // meta/v1 types are used everywhere: import them by name.
        if module.krate == Crate::Apimachinery {
            return self.use_item(&path, name);
        }
        format!("{path}::{name}")
    }

    pub(crate) fn ty(&mut self, ty: &Ty, model: &Model) -> String {
        match ty {
            Ty::Str { interned: false } => self.use_item("compact_str", "CompactString"),
            Ty::Str { interned: true } => self.value_type("IStr"),
            Ty::Bool => "bool".into(),
            Ty::I32 => "i32".into(),
            Ty::I64 => "i64".into(),
            Ty::F64 => "f64".into(),
            Ty::Bytes => self.value_type("ByteString"),
            Ty::Quantity => self.value_type("Quantity"),
            Ty::IntOrString => self.value_type("IntOrString"),
            Ty::Time => self.value_type("Time"),
            Ty::MicroTime => self.value_type("MicroTime"),
            Ty::RawJson => self.value_type("RawJson"),
            Ty::FieldsV1 => self.value_type("FieldsV1"),
            Ty::Named(schema) => {
                let s = &model.structs[schema];
                self.type_path(&s.module, &s.name)
            }
            Ty::ApimachineryRoot(name) => {
                let root = self.apimachinery().to_string();
                self.use_item(&root, name)
            }
            Ty::HandWritten(module, name) => self.type_path(module, name),
            Ty::List(inner) => {
                let inner = self.ty(inner, model);
                format!("{}<{inner}>", self.value_type("List"))
            }
            Ty::Map { interned, value } => {
                if *interned && **value == (Ty::Str { interned: true }) {
                    return self.value_type("StrMap");
                }
                // Keys repeat across objects even where values do not (`cpu` and `memory` in
                // every container's resources, a chart's ConfigMap data keys): always `IStr`.
                let key = self.value_type("IStr");
                let value = self.ty(value, model);
                format!("{}<{key}, {value}>", self.value_type("Map"))
            }
        }
    }
}

/// What a required field that Go writes as `null` when nil needs (see `meta::go_null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NilWhenEmpty {
    /// A list, map or bytes: written `null` when empty (`null` already decodes as empty).
    Encode,
    /// A struct or string Go holds in a pointer: `null` read as the default.
    Decode,
    /// Not such a field, or a type that handles `null` itself (`Time`, raw JSON).
    No,
}

fn nil_when_empty(f: &Field) -> NilWhenEmpty {
    if !f.required || !f.nil_when_empty {
        return NilWhenEmpty::No;
    }
    match f.ty {
        Ty::List(_) | Ty::Map { .. } | Ty::Bytes => NilWhenEmpty::Encode,
        Ty::Named(_) | Ty::Str { .. } => NilWhenEmpty::Decode,
        _ => NilWhenEmpty::No,
    }
}

/// Whether a field's type is a generated struct (so an optional one is boxed).
fn is_struct(ty: &Ty) -> bool {
    matches!(ty, Ty::Named(_))
}

/// The generated struct a field holds directly, as list elements or as map values.
fn nested_struct<'m>(ty: &Ty, model: &'m Model) -> Option<&'m Struct> {
    match ty {
        Ty::Named(n) => model.structs.get(n),
        Ty::List(inner) | Ty::Map { value: inner, .. } => nested_struct(inner, model),
        _ => None,
    }
}

/// The source of one module file.
pub(crate) fn module_file(model: &Model, module: &Module) -> String {
    let structs: Vec<&Struct> = model
        .structs
        .values()
        .filter(|s| &s.module == module)
        .collect();
    let mut ctx = FileCtx {
        module,
        local: structs.iter().map(|s| s.name.clone()).collect(),
        imports: BTreeMap::new(),
        preimported: BTreeSet::new(),
    };
    let mut preamble = String::new();
    if module.krate == Crate::Apimachinery && module.version == "v1" {
        preamble.push_str("pub use crate::meta::{MicroTime, PartialObjectMetadata, PartialObjectMetadataList, Time};\n");
        ctx.preimported
            .extend(["MicroTime", "Time"].map(String::from));
    }
    if module.krate == Crate::Api && module.group == "apiextensions" && module.version == "v1" {
        preamble.push_str(
            "mod json_schema_props_or;\npub use json_schema_props_or::{JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray};\n",
        );
        ctx.local.extend(
            [
                "JSONSchemaPropsOrArray",
                "JSONSchemaPropsOrBool",
                "JSONSchemaPropsOrStringArray",
            ]
            .map(String::from),
        );
    }
    let mut body = String::new();
    for s in &structs {
        emit_struct(&mut body, &mut ctx, model, s);
    }
    let mut out = String::new();
    let title = match module.krate {
        Crate::Apimachinery if module.version == "version" => {
            "The `k8s.io/apimachinery/pkg/version` types: the server's version information.".to_string()
        }
        Crate::Apimachinery => "The `meta/v1` types: object metadata, label selectors, discovery documents, conditions and options.".to_string(),
        Crate::Api => {
            let gv = structs
                .iter()
                .find_map(|s| s.gvk.as_ref())
                .map(|(g, v, _)| if g.is_empty() { v.clone() } else { format!("{g}/{v}") })
                .unwrap_or_else(|| format!("{}/{}", module.group, module.version));
            match module.stability() {
                None => format!("The types of API version `{gv}`."),
                Some(level) => format!(
                    "The types of API version `{gv}`: **unstable ({level})**. A server serves \
                     it only when its `--runtime-config` enables it, and its types may change or \
                     go away in a later Kubernetes release. Cargo feature `{}`.",
                    module.feature()
                ),
            }
        }
    };
    let _ = writeln!(out, "//! {title}");
    out.push_str("//!\n//! Generated by `api/gen` from the OpenAPI documents in `api/openapi/`; do not edit.\n");
    out.push_str("//! Regenerate with `cargo run -p kclient-api-gen`.\n\n");
    out.push_str("#![allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items, clippy::large_enum_variant, clippy::too_long_first_doc_paragraph)]\n\n");
    let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, path) in &ctx.imports {
        grouped.entry(path).or_default().push(name);
    }
    for (path, names) in grouped {
        if names.len() == 1 {
            let _ = writeln!(out, "use {path}::{};", names[0]);
        } else {
            let _ = writeln!(out, "use {path}::{{{}}};", names.join(", "));
        }
    }
    if structs.iter().any(|s| s.has_proto) {
        let _ = writeln!(
            out,
            "#[cfg(feature = \"protobuf\")]\nuse {}::protobuf as pb;",
            ctx.apimachinery()
        );
    }
    out.push('\n');
    out.push_str(&preamble);
    out.push('\n');
    out.push_str(&body);
    out
}

/// Fields whose values are credentials (Secret data, service-account and review tokens): their
/// types get a `Debug` that prints `<redacted>` instead of the value, so secrets never reach logs
/// or `{:?}` output. Keyed by type name; each name is unique among the served group/versions.
pub(crate) fn secret_fields(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "Secret" => &["data", "stringData"],
        "TokenRequestStatus" | "TokenReviewSpec" => &["token"],
        _ => &[],
    }
}

/// Whether `type_name` is object metadata, whose `Debug` shows the value of the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation as `<redacted>`: on a Secret
/// that annotation holds the data (see `kclient_apimachinery::meta::LAST_APPLIED_CONFIGURATION_ANNOTATION`).
pub(crate) fn hides_last_applied(type_name: &str) -> bool {
    type_name == "ObjectMeta"
}

/// How the `Debug` written by `emit_redacted_debug` shows `field` of the struct `type_name`:
/// the expression to pass to `debug_struct().field()`. `required`: the field is not an
/// `Option`; `apimachinery`: the path of the apimachinery crate.
pub(crate) fn debug_field(
    type_name: &str,
    field: &Field,
    required: bool,
    apimachinery: &str,
) -> String {
    let value = format!("self.{}", field.rust);
    if secret_fields(type_name).contains(&field.json.as_str()) {
        if required {
            "&\"<redacted>\"".to_string()
        } else {
            format!("&{value}.as_ref().map(|_| \"<redacted>\")")
        }
    } else if hides_last_applied(type_name) && field.json == "annotations" {
        let some = if required {
            format!("Some(&{value})")
        } else {
            format!("{value}.as_ref()")
        };
        format!("&{apimachinery}::meta::debug_annotations({some})")
    } else {
        format!("&{value}")
    }
}

fn emit_redacted_debug(out: &mut String, s: &Struct, apimachinery: &str) {
    let _ = writeln!(out, "impl std::fmt::Debug for {} {{", s.name);
    out.push_str("    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {\n");
    let _ = writeln!(out, "        f.debug_struct({:?})", s.name);
    for field in &s.fields {
        let shown = debug_field(&s.name, field, field.required, apimachinery);
        let _ = writeln!(out, "            .field({:?}, {shown})", field.rust);
    }
    out.push_str("            .finish()\n    }\n}\n\n");
}

fn emit_struct(out: &mut String, ctx: &mut FileCtx<'_>, model: &Model, s: &Struct) {
    let doc = if s.doc.trim().is_empty() {
        format!("The `{}` type of the Kubernetes API.", s.name)
    } else {
        s.doc.clone()
    };
    out.push_str(&doc_lines(&doc, ""));
    let own_debug = !secret_fields(&s.name).is_empty() || hides_last_applied(&s.name);
    let debug = if own_debug { "" } else { "Debug, " };
    let eq = if s.eq { "Eq, " } else { "" };
    // A kind serializes through its own impl (apiVersion and kind first).
    let serialize = if s.gvk.is_some() {
        ""
    } else {
        ", serde::Serialize"
    };
    let _ = writeln!(
        out,
        "#[derive(Clone, {debug}Default, PartialEq, {eq}serde::Deserialize{serialize})]"
    );
    let _ = writeln!(out, "pub struct {} {{", s.name);
    for f in &s.fields {
        let ty = field_type(ctx, model, f);
        let fdoc = if f.doc.trim().is_empty() {
            format!("The `{}` field.", f.json)
        } else {
            f.doc.clone()
        };
        out.push_str(&doc_lines(&fdoc, "    "));
        let mut attrs = Vec::new();
        if f.rust != f.json {
            attrs.push(format!("rename = {:?}", f.json));
        }
        if f.required {
            attrs.push("default".to_string());
            // Go's nil: an empty list or map is `null`, a `null` struct or string the default.
            match nil_when_empty(f) {
                NilWhenEmpty::Encode => attrs.push(format!(
                    "serialize_with = \"{}::meta::go_null::serialize_nil_when_empty\"",
                    ctx.apimachinery()
                )),
                NilWhenEmpty::Decode => attrs.push(format!(
                    "deserialize_with = \"{}::meta::go_null::deserialize_null_as_default\"",
                    ctx.apimachinery()
                )),
                NilWhenEmpty::No => {}
            }
        } else if !f.null_when_unset {
            attrs.push("skip_serializing_if = \"Option::is_none\"".to_string());
        } else {
            // `null` as Go writes it, except in an apply body, where it would claim the field.
            attrs.push(format!(
                "skip_serializing_if = \"{}::meta::go_null::unset_in_apply\"",
                ctx.apimachinery()
            ));
        }
        if !f.required && matches!(f.ty, Ty::Time | Ty::MicroTime) {
            // The zero time reads as absent, as from protobuf (`zero_is_unset`): it would
            // encode as `null` and come back as `None`.
            let helper = if f.ty == Ty::Time {
                "deserialize_option_time"
            } else {
                "deserialize_option_micro_time"
            };
            attrs.push("default".to_string());
            attrs.push(format!(
                "deserialize_with = \"{}::meta::time::{helper}\"",
                ctx.apimachinery()
            ));
        }
        if f.ty == Ty::F64 {
            // Whole numbers are written as Go writes them (`0`, not `0.0`).
            let helper = if f.required {
                "serialize_f64"
            } else {
                "serialize_option_f64"
            };
            attrs.push(format!(
                "serialize_with = \"{}::meta::go_float::{helper}\"",
                ctx.apimachinery()
            ));
        }
        let _ = writeln!(out, "    #[serde({})]", attrs.join(", "));
        let _ = writeln!(out, "    pub {}: {ty},", f.rust);
    }
    out.push_str("}\n\n");
    if own_debug {
        emit_redacted_debug(out, s, ctx.apimachinery());
    }

    if let Some((group, version, kind)) = &s.gvk {
        let api_version = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        let _ = writeln!(out, "impl serde::Serialize for {} {{", s.name);
        out.push_str("    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {\n");
        out.push_str("        use serde::ser::SerializeStruct as _;\n");
        let _ = writeln!(
            out,
            "        let mut state = serializer.serialize_struct({:?}, {})?;",
            s.name,
            s.fields.len() + 2
        );
        let _ = writeln!(
            out,
            "        state.serialize_field(\"apiVersion\", {api_version:?})?;"
        );
        let _ = writeln!(out, "        state.serialize_field(\"kind\", {kind:?})?;");
        for f in &s.fields {
            if f.required && nil_when_empty(f) == NilWhenEmpty::Encode {
                let _ = writeln!(
                    out,
                    "        state.serialize_field({:?}, &{}::meta::go_null::NilWhenEmpty(&self.{}))?;",
                    f.json,
                    ctx.apimachinery(),
                    f.rust
                );
            } else if f.required {
                let _ = writeln!(
                    out,
                    "        state.serialize_field({:?}, &self.{})?;",
                    f.json, f.rust
                );
            } else if f.null_when_unset {
                // `null` as Go writes it, except in an apply body (see `meta::go_null`).
                let _ = writeln!(
                    out,
                    "        if !{}::meta::go_null::unset_in_apply(&self.{}) {{ state.serialize_field({:?}, &self.{})?; }}",
                    ctx.apimachinery(),
                    f.rust,
                    f.json,
                    f.rust
                );
            } else {
                let _ = writeln!(
                    out,
                    "        if let Some(value) = &self.{} {{ state.serialize_field({:?}, value)?; }}",
                    f.rust, f.json
                );
            }
        }
        out.push_str("        state.end()\n    }\n}\n\n");
        if s.has_object_meta {
            let _ = writeln!(out, "{}::impl_object!({});\n", ctx.apimachinery(), s.name);
        }
        if let (Some(r), true) = (&s.resource, s.has_object_meta) {
            let root = ctx.apimachinery();
            let _ = writeln!(out, "impl {root}::Resource for {} {{", s.name);
            let _ = writeln!(out, "    const GROUP: &'static str = {group:?};");
            let _ = writeln!(out, "    const VERSION: &'static str = {version:?};");
            let _ = writeln!(
                out,
                "    const API_VERSION: &'static str = {api_version:?};"
            );
            let _ = writeln!(out, "    const KIND: &'static str = {kind:?};");
            let _ = writeln!(out, "    const PLURAL: &'static str = {:?};", r.plural);
            let scope = if r.namespaced {
                "NamespaceResourceScope"
            } else {
                "ClusterResourceScope"
            };
            let _ = writeln!(out, "    type Scope = {root}::{scope};");
            let _ = writeln!(out, "    #[cfg(feature = \"protobuf\")]");
            let _ = writeln!(
                out,
                "    fn protobuf() -> Option<{root}::protobuf::ProtobufCodec<Self>> {{"
            );
            let _ = writeln!(
                out,
                "        Some({root}::protobuf::ProtobufCodec::of())\n    }}"
            );
            out.push_str("}\n\n");
        }
    }

    // Strategic-merge-patch metadata.
    let patch_meta = ctx.value_type("PatchMeta");
    let field_meta = ctx.value_type("FieldMeta");
    let _ = writeln!(out, "impl {patch_meta} for {} {{", s.name);
    if let Some(mt) = &s.map_type {
        let _ = writeln!(
            out,
            "    const MAP_TYPE: Option<&'static str> = Some({mt:?});"
        );
    }
    let _ = writeln!(out, "    fn patch_fields() -> &'static [{field_meta}] {{");
    let _ = writeln!(out, "        static FIELDS: &[{field_meta}] = &[");
    for f in &s.fields {
        let nested = nested_struct(&f.ty, model);
        let has_meta = f.patch_strategy.is_some()
            || f.patch_merge_key.is_some()
            || f.list_type.is_some()
            || f.map_type.is_some();
        if nested.is_none() && !has_meta {
            continue;
        }
        let opt = |v: &Option<String>| match v {
            Some(v) => format!("Some({v:?})"),
            None => "None".to_string(),
        };
        let fields = match nested {
            Some(n) => {
                let path = ctx.type_path(&n.module, &n.name);
                format!("Some(<{path} as {patch_meta}>::patch_fields)")
            }
            None => "None".to_string(),
        };
        let keys: Vec<String> = f.list_map_keys.iter().map(|k| format!("{k:?}")).collect();
        // A field that is a struct has that struct's map type unless it names its own (an
        // atomic `LabelSelector` makes every selector field atomic): server-side apply's
        // extraction reads it from here.
        let map_type = f.map_type.clone().or_else(|| match &f.ty {
            Ty::Named(n) => model.structs.get(n).and_then(|s| s.map_type.clone()),
            _ => None,
        });
        let _ = writeln!(
            out,
            "            {field_meta} {{ name: {:?}, patch_strategy: {}, patch_merge_key: {}, list_type: {}, list_map_keys: &[{}], map_type: {}, fields: {fields} }},",
            f.json,
            opt(&f.patch_strategy),
            opt(&f.patch_merge_key),
            opt(&f.list_type),
            keys.join(", "),
            opt(&map_type),
        );
    }
    out.push_str("        ];\n        FIELDS\n    }\n}\n\n");
    crate::json_schema::emit(out, ctx, model, s);
    crate::protobuf::emit_message(out, "pb", s);
}

fn field_type(ctx: &mut FileCtx<'_>, model: &Model, f: &Field) -> String {
    let inner = ctx.ty(&f.ty, model);
    if f.required {
        inner
    } else if is_struct(&f.ty) {
        format!("Option<Box<{inner}>>")
    } else {
        format!("Option<{inner}>")
    }
}

/// Every module of one crate.
pub(crate) fn modules(model: &Model, krate: Crate) -> BTreeSet<Module> {
    model
        .structs
        .values()
        .filter(|s| s.module.krate == krate)
        .map(|s| s.module.clone())
        .collect()
}

/// The `kclient-api` Cargo features and the features each one needs: a feature per group with
/// a GA version (compiling its GA versions), and one per unstable version (`resource-v1beta2`,
/// needing its group's feature when the group has a GA version).
pub(crate) fn feature_deps(model: &Model) -> BTreeMap<String, BTreeSet<String>> {
    let ga_groups: BTreeSet<&str> = model
        .structs
        .values()
        .filter(|s| s.module.krate == Crate::Api && s.module.stability().is_none())
        .map(|s| s.module.group.as_str())
        .collect();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in model
        .structs
        .values()
        .filter(|s| s.module.krate == Crate::Api)
    {
        let feature = s.module.feature();
        let entry = deps.entry(feature.clone()).or_default();
        if s.module.stability().is_some() && ga_groups.contains(s.module.group.as_str()) {
            entry.insert(s.module.group.clone());
        }
        for f in &s.fields {
            if let Some(n) = nested_struct(&f.ty, model)
                && n.module.krate == Crate::Api
                && n.module.feature() != feature
                && n.module.group != s.module.group
            {
                entry.insert(n.module.feature());
            }
        }
    }
    deps
}

/// A group's `mod.rs`.
pub(crate) fn group_mod(model: &Model, group: &str, versions: &[Module]) -> String {
    let api_group = model
        .structs
        .values()
        .filter(|s| s.module.krate == Crate::Api && s.module.group == group)
        .find_map(|s| s.gvk.as_ref().map(|g| g.0.clone()));
    let mut out = match api_group.as_deref() {
        Some("") => {
            "//! The core API group (`apiVersion: v1`): Pods, Services, ConfigMaps, Nodes, ...\n"
                .to_string()
        }
        Some(g) => format!("//! The `{g}` API group.\n"),
        None => format!("//! The `{group}` API group.\n"),
    };
    if versions.iter().any(|m| m.stability().is_some()) {
        out.push_str(
            "//!\n//! Its alpha and beta versions are opt-in: each has a Cargo feature of its own \
             (`<group>-<version>`), which `all` leaves out.\n",
        );
    }
    out.push_str("//!\n//! Generated by `api/gen`; do not edit.\n\n");
    for m in versions {
        if m.stability().is_some() {
            let _ = writeln!(out, "#[cfg(feature = {:?})]", m.feature());
        }
        let _ = writeln!(out, "pub mod {};", m.version);
    }
    out
}

/// The `#[cfg]` predicate of group `g`'s module: its group feature when it has a GA version,
/// else any of its unstable versions' features. The types and the apply configurations use it.
pub(crate) fn group_gate(g: &str, versions: &[Module]) -> String {
    if versions.iter().any(|m| m.stability().is_none()) {
        return format!("feature = {g:?}");
    }
    let features: Vec<String> = versions
        .iter()
        .map(|m| format!("feature = {:?}", m.feature()))
        .collect();
    match features.as_slice() {
        [one] => one.clone(),
        many => format!("any({})", many.join(", ")),
    }
}

/// The crate root of `kclient-api`: a group module is compiled with its group's feature, or for
/// a group with only unstable versions, with any of their features.
pub(crate) fn api_lib(groups: &BTreeMap<String, Vec<Module>>) -> String {
    let mut out = String::from(LIB_HEADER);
    out.push_str("mod resources;\n\n");
    for (g, versions) in groups {
        let _ = writeln!(out, "#[cfg({})]\npub mod {g};", group_gate(g, versions));
    }
    out.push_str("#[cfg(feature = \"apply\")]\npub mod applyconfigurations;\n");
    out
}

const LIB_HEADER: &str = r#"//! kclient's own Kubernetes API types, generated from the OpenAPI documents of the pinned
//! Kubernetes version (v1.36.3), as client-go has `k8s.io/api`: one module per group/version,
//! `kclient_api::core::v1::Pod`, `kclient_api::apps::v1::Deployment`,
//! `kclient_api::apiextensions::v1::CustomResourceDefinition`.
//!
//! The `meta/v1` types (`ObjectMeta`, `LabelSelector`, ...) and the value types (`Quantity`,
//! `IntOrString`, `Time`) live in `kclient_apimachinery::meta`.
//!
//! Every top-level kind implements [`kclient_apimachinery::Object`] and, when it is served as
//! a resource, [`kclient_apimachinery::Resource`]; it serializes its `apiVersion` and `kind`.
//! Every struct implements [`kclient_apimachinery::meta::PatchMeta`] (strategic merge patch
//! metadata). Lists of a kind are `kclient_apimachinery::ObjectList<T>`.
//!
//! The layout is compact (see `api/README.md` for the measurements): optional structs are
//! boxed, strings are small-string-optimised and repeated strings interned, lists and maps are
//! boxed slices, and managed-field sets stay raw JSON, shared between objects.
//!
//! Each API group is a Cargo feature (`core`, `apps`, `batch`, ...; `all` is the default, with
//! every GA version). Alpha and beta versions, which a server serves only when its
//! `--runtime-config` enables them, are opt-in: a feature per version (`resource-v1beta2`,
//! `storagemigration-v1beta1`, ...), or `all-beta` and `all-alpha` for every one. Their types
//! may change or go away in a later Kubernetes release.
//!
//! Optional features: `protobuf` (every type decodes and encodes
//! `application/vnd.kubernetes.protobuf`), `apply` (server-side apply configurations,
//! `applyconfigurations`), and `schemars`: every type implements `schemars::JsonSchema` with
//! its OpenAPI definition in the shape controller-gen writes for the Go type, so that a custom
//! resource whose spec embeds a `PodTemplateSpec` or a `Toleration` derives its schema, and
//! kclient-clientset's `structural_schema` makes its CRD (`api/README.md` says what is kept).
//!
//! ```
//! # #[cfg(all(feature = "core", feature = "apps"))] {
//! use kclient_api::apps::v1::{Deployment, DeploymentSpec};
//! use kclient_api::core::v1::{Container, PodSpec, PodTemplateSpec};
//! use kclient_apimachinery::meta::v1::{LabelSelector, ObjectMeta};
//! use kclient_apimachinery::{Object, Resource};
//!
//! let labels = kclient_apimachinery::meta::StrMap::from([("app".into(), "web".into())]);
//! let deployment = Deployment {
//!     metadata: ObjectMeta { name: Some("web".into()), ..Default::default() },
//!     spec: Some(Box::new(DeploymentSpec {
//!         replicas: Some(2),
//!         selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
//!         template: PodTemplateSpec {
//!             metadata: Some(Box::new(ObjectMeta { labels: Some(labels), ..Default::default() })),
//!             spec: Some(Box::new(PodSpec {
//!                 containers: vec![Container {
//!                     name: "web".into(),
//!                     image: Some("nginx:1.27".into()),
//!                     ..Default::default()
//!                 }]
//!                 .into(),
//!                 ..Default::default()
//!             })),
//!         },
//!         ..Default::default()
//!     })),
//!     ..Default::default()
//! };
//! assert_eq!(deployment.name(), "web");
//! assert_eq!(Deployment::PLURAL, "deployments");
//! let json = serde_json::to_value(&deployment).unwrap();
//! assert_eq!(json["apiVersion"], "apps/v1");
//! assert_eq!(json["kind"], "Deployment");
//! assert_eq!(json["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");
//! # }
//! ```
//!
//! Generated by `api/gen` (`cargo run -p kclient-api-gen`); do not edit.

#![allow(clippy::doc_lazy_continuation)]

"#;

/// The generated `[features]` section of `api/Cargo.toml`.
pub(crate) fn features(deps: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut out = String::from(
        "[features]\ndefault = [\"all\"]\n# One feature per API group; \"all\" enables every group's GA versions.\n",
    );
    out.push_str(
        "# Protobuf decoding and encoding of every type (application/vnd.kubernetes.protobuf).\n\
         protobuf = [\"kclient-apimachinery/protobuf\"]\n",
    );
    out.push_str(
        "# `schemars::JsonSchema` of every type, from its OpenAPI definition as controller-gen writes it\n\
         # (for CRD schemas of custom resources that embed built-in types: kclient-clientset's `schema`).\n\
         schemars = [\"dep:schemars\", \"kclient-apimachinery/schemars\"]\n",
    );
    let list = |pick: &dyn Fn(&str) -> bool| -> String {
        let names: Vec<String> = deps
            .keys()
            .filter(|f| pick(f))
            .map(|f| format!("{f:?}"))
            .collect();
        names.join(", ")
    };
    out.push_str(
        "# Server-side apply configurations of the enabled groups (kclient_api::applyconfigurations).\n\
         apply = []\n",
    );
    let unstable = |f: &str, level: &str| f.contains('-') && f.contains(level);
    let _ = writeln!(out, "all = [{}]", list(&|f| !f.contains('-')));
    out.push_str(
        "# Unstable (alpha and beta) versions, opt-in: one feature each, or all of one level.\n",
    );
    let _ = writeln!(out, "all-beta = [{}]", list(&|f| unstable(f, "beta")));
    let _ = writeln!(out, "all-alpha = [{}]", list(&|f| unstable(f, "alpha")));
    for (g, d) in deps {
        let d: Vec<String> = d.iter().map(|x| format!("{x:?}")).collect();
        let _ = writeln!(out, "{g} = [{}]", d.join(", "));
    }
    out
}

/// `api/src/resources.rs`: the `watchable_resources!` macro, listing every top-level type of a GA
/// version that the API server can list and watch, each with the Cargo feature of its group, so that crates
/// above (the informer factory's registry) can name every built-in resource type without a
/// hand-kept list.
pub(crate) fn resources_macro(model: &Model) -> String {
    let mut entries: Vec<(&str, &str, &str)> = model
        .structs
        .values()
        .filter(|s| s.module.krate == Crate::Api && s.has_object_meta)
        .filter(|s| s.module.stability().is_none())
        .filter(|s| s.resource.as_ref().is_some_and(|r| r.watchable))
        .map(|s| {
            (
                s.module.group.as_str(),
                s.module.version.as_str(),
                s.name.as_str(),
            )
        })
        .collect();
    entries.sort_unstable();
    let mut out = String::from(
        r#"//! [`watchable_resources!`](crate::watchable_resources): every generated resource type
//! that the API server can list and watch, for crates that need the whole list (the informer
//! factory's registry behind `for_resource`).
//!
//! Generated by `api/gen`; do not edit.

/// Calls the macro `$callback` once with every generated type that the API server can list and
/// watch, one entry per type: `"<cargo feature>" <group module>::<version>::<Type>;`.
///
/// The feature string is the `kclient-api` feature of the type's group. A `#[cfg]` written
/// inside the callback is evaluated in the calling crate, so a caller that wants each entry
/// only when its group is enabled declares features of the same names forwarding to
/// `kclient-api`'s (as `kclient-informers` does) and writes `#[cfg(feature = $feature)]`.
///
/// ```
/// macro_rules! count {
///     ($($feature:literal $group:ident :: $version:ident :: $ty:ident;)*) => {
///         [$(stringify!($ty)),*].len()
///     };
/// }
/// assert!(kclient_api::watchable_resources!(count) > 50);
/// ```
#[macro_export]
macro_rules! watchable_resources {
    ($callback:ident) => {
        $callback! {
"#,
    );
    for (group, version, name) in entries {
        let _ = writeln!(out, "            {group:?} {group}::{version}::{name};");
    }
    out.push_str("        }\n    };\n}\n");
    out
}
