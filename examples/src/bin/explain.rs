//! `kubectl explain` in miniature: a resource's or field's type, description and subfields,
//! read from the server's OpenAPI v3 documents through kclient's discovery.
//!
//! ```sh
//! cargo run -p kclient-examples --bin explain -- deployment.spec.replicas
//! cargo run -p kclient-examples --bin explain -- pods.spec.containers.ports
//! cargo run -p kclient-examples --bin explain -- cronjobs.spec --api-version=batch/v1
//! ```
//!
//! The argument is `RESOURCE[.FIELD...]`; the resource may be a plural, singular or short
//! name or a kind, resolved through discovery (its preferred version unless `--api-version`
//! names one). Uses the cluster of `KUBECONFIG` (or `~/.kube/config`, or the pod's service
//! account).

use std::process::ExitCode;

use kclient_apimachinery::{GroupVersion, GroupVersionResource};
use kclient_discovery::{
    DeferredDiscoveryRESTMapper, DiscoveryClient, ExplainedField, MemCacheClient, OpenAPIV3Client,
};
use kclient_examples::error_chain;
use kclient_rest::Config;

const USAGE: &str = "usage: explain RESOURCE[.FIELD...] [--api-version=GROUP/VERSION]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut target = None;
    let mut api_version = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if let Some(v) = arg.strip_prefix("--api-version=") {
            api_version = Some(v.to_owned());
        } else if arg == "--api-version" {
            api_version = args.next();
        } else if arg == "-h" || arg == "--help" {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        } else if target.is_none() && !arg.starts_with('-') {
            target = Some(arg);
        } else {
            eprintln!("explain: unexpected argument {arg:?}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let Some(target) = target else {
        eprintln!("explain: a resource is required\n{USAGE}");
        return ExitCode::from(2);
    };
    match run(&target, api_version.as_deref()).await {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("explain: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run(
    target: &str,
    api_version: Option<&str>,
) -> Result<String, Box<dyn std::error::Error>> {
    let (resource, fields) = target.split_once('.').unwrap_or((target, ""));
    let path: Vec<&str> = fields.split('.').filter(|f| !f.is_empty()).collect();

    let config = Config::infer()?;
    let discovery = DiscoveryClient::for_config(config)?;
    let openapi = OpenAPIV3Client::new(discovery.rest_client().clone());
    let mapper = DeferredDiscoveryRESTMapper::new(MemCacheClient::new(discovery));
    let gvk = match api_version {
        Some(api_version) => {
            let gv = GroupVersion::parse(api_version)?;
            let gvr = GroupVersionResource::new(&gv.group, &gv.version, resource);
            mapper.kind_for(&gvr).await?
        }
        None => mapper.mapping_for(resource).await?.group_version_kind,
    };
    let schema = openapi.resource_schema(&gvk).await?;
    let field = schema.explain(&path)?;

    let mut out = String::new();
    if !gvk.group.is_empty() {
        out.push_str(&format!("GROUP:      {}\n", gvk.group));
    }
    out.push_str(&format!(
        "KIND:       {}\nVERSION:    {}\n\n",
        gvk.kind, gvk.version
    ));
    out.push_str(&render(&field));
    Ok(out)
}

/// The field in kubectl explain's layout.
fn render(field: &ExplainedField) -> String {
    let mut out = String::new();
    if !field.name.is_empty() {
        out.push_str(&format!("FIELD: {} <{}>\n", field.name, field.type_name));
        if !field.enum_values.is_empty() {
            out.push_str("ENUM:");
            for value in &field.enum_values {
                match value.as_str() {
                    Some("") => out.push_str("\n    \"\""),
                    Some(s) => out.push_str(&format!("\n    {s}")),
                    None => out.push_str(&format!("\n    {value}")),
                }
            }
        }
        out.push_str("\n\n");
    }
    out.push_str("DESCRIPTION:\n");
    let description = if field.description.is_empty() {
        "<empty>"
    } else {
        &field.description
    };
    out.push_str(&indent(&wrap(description, 76), 4));
    out.push('\n');
    if !field.fields.is_empty() {
        out.push_str("FIELDS:\n");
        for f in &field.fields {
            out.push_str(&format!("  {}\t<{}>", f.name, f.type_name));
            if f.required {
                out.push_str(" -required-");
            }
            out.push('\n');
            out.push_str(&indent(&wrap(&f.description, 76), 4));
            out.push_str("\n\n");
        }
    }
    out
}

/// Greedy word wrap of each line of `text` to `width` characters.
fn wrap(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
