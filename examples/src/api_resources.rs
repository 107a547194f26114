//! The library half of the `api-resources` example: `kubectl api-resources` over kclient's
//! discovery. Options as kubectl parses them, the filtering and sorting kubectl applies to the
//! server's preferred resources, and its output formats (the table, `-o wide`, `-o name`,
//! `-o json`).
//!
//! Semantics follow kubectl's `pkg/cmd/apiresources`: resources come from
//! `ServerPreferredResources` (subresources left out, one version per group resource);
//! resources without verbs are dropped; `--api-group` and `--namespaced` filter only when
//! given; `--verbs` and `--categories` keep resources having all the listed values; rows are
//! sorted stably by group (or by `--sort-by` name or kind), ties by name.

use kclient::apimachinery::GroupVersion;
use kclient::discovery::{APIResource, APIResourceList};
use serde::Serialize;

use crate::tabwriter::TabWriter;

/// The output format (`-o`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// The default table: NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND.
    #[default]
    Table,
    /// `-o wide`: the table plus VERBS and CATEGORIES.
    Wide,
    /// `-o name`: `resource.group` per line.
    Name,
    /// `-o json`: one `APIResourceList` holding every row, as newer kubectl prints it.
    Json,
}

/// The sort key (`--sort-by`); ties are always broken by resource name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By API group (kubectl's default).
    #[default]
    Group,
    /// By resource name.
    Name,
    /// By kind.
    Kind,
}

/// The command line of `api-resources`, with kubectl's flags and defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiResourcesOptions {
    /// `-o`/`--output`.
    pub output: OutputFormat,
    /// `--api-group`: only this group (`""` is the core group); `None` when not given.
    pub api_group: Option<String>,
    /// `--namespaced[=true|false]`: only namespaced or only cluster-wide resources; `None`
    /// when not given.
    pub namespaced: Option<bool>,
    /// `--verbs`: only resources supporting all of them.
    pub verbs: Vec<String>,
    /// `--categories`: only resources in all of them.
    pub categories: Vec<String>,
    /// `--sort-by`.
    pub sort_by: SortBy,
    /// `--no-headers`: the table without its header line.
    pub no_headers: bool,
}

/// The usage text printed for `--help` and after a bad argument.
pub const API_RESOURCES_USAGE: &str = "\
usage: api-resources [flags]

Prints the API resources the server supports, as `kubectl api-resources` does.

  -o, --output=''        one of: wide, name, json (default: the table)
      --api-group=''     only resources of this API group (\"\" is the core group)
      --namespaced[=true|false]
                         only namespaced (true) or cluster-wide (false) resources
      --verbs=[]         only resources supporting all these verbs (comma-separated)
      --categories=[]    only resources in all these categories (comma-separated)
      --sort-by=''       name or kind (default: by API group, then name)
      --no-headers       omit the table's header line
";

impl ApiResourcesOptions {
    /// Parses the arguments (without the program name) the way kubectl's flag library does:
    /// `--flag=value` or `--flag value`, `-o value` or `-ovalue`; `--namespaced` alone
    /// means true; `--verbs` and `--categories` take comma-separated lists and may repeat.
    pub fn parse<I, S>(args: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut opts = ApiResourcesOptions::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if arg.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ if arg.starts_with("-o") && arg.len() > 2 && !arg.starts_with("--") => {
                    let value = arg[2..].strip_prefix('=').unwrap_or(&arg[2..]);
                    ("-o".to_owned(), Some(value.to_owned()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<String, String> {
                match &inline {
                    Some(v) => Ok(v.clone()),
                    None => args
                        .next()
                        .ok_or_else(|| format!("flag needs an argument: {name}")),
                }
            };
            match flag.as_str() {
                "-o" | "--output" => {
                    opts.output = match value(&flag)?.as_str() {
                        "" => OutputFormat::Table,
                        "wide" => OutputFormat::Wide,
                        "name" => OutputFormat::Name,
                        "json" => OutputFormat::Json,
                        other => {
                            return Err(format!(
                                "--output {other} is not available (one of: wide, name, json)"
                            ));
                        }
                    }
                }
                "--api-group" => opts.api_group = Some(value(&flag)?),
                "--namespaced" => opts.namespaced = Some(bool_flag(&flag, inline.as_deref())?),
                "--verbs" => opts.verbs.extend(comma_list(&value(&flag)?)),
                "--categories" => opts.categories.extend(comma_list(&value(&flag)?)),
                "--sort-by" => {
                    opts.sort_by = match value(&flag)?.as_str() {
                        "" => SortBy::Group,
                        "name" => SortBy::Name,
                        "kind" => SortBy::Kind,
                        _ => return Err("--sort-by accepts only name or kind".to_owned()),
                    }
                }
                "--no-headers" => opts.no_headers = bool_flag(&flag, inline.as_deref())?,
                _ if flag.starts_with('-') => return Err(format!("unknown flag: {flag}")),
                _ => return Err(format!("unexpected arguments: [{arg}]")),
            }
        }
        Ok(opts)
    }
}

/// A boolean flag's value as pflag reads it: the flag alone is true, `--flag=VALUE` takes
/// what Go's `strconv.ParseBool` accepts and refuses anything else.
fn bool_flag(flag: &str, inline: Option<&str>) -> Result<bool, String> {
    match inline {
        None | Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
        Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
        Some(other) => Err(format!(
            "invalid argument \"{other}\" for \"{flag}\" flag: use true or false"
        )),
    }
}

fn comma_list(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(',')
        .filter(|v| !value.is_empty() || !v.is_empty())
        .map(str::to_owned)
}

/// The rows kubectl would print: every resource of `lists` (the server's preferred
/// resources) that passes the filters, with `group` and `version` set from its list, sorted.
pub fn select_resources(lists: &[APIResourceList], opts: &ApiResourcesOptions) -> Vec<APIResource> {
    let mut rows = Vec::new();
    for list in lists.iter().filter(|l| !l.api_resources.is_empty()) {
        let Ok(gv) = GroupVersion::parse(&list.group_version) else {
            continue;
        };
        for resource in &list.api_resources {
            if resource.verbs.is_empty()
                || opts.api_group.as_ref().is_some_and(|g| *g != gv.group)
                || opts.namespaced.is_some_and(|n| n != resource.namespaced)
                || !opts.verbs.iter().all(|v| resource.verbs.contains(v))
                || !opts
                    .categories
                    .iter()
                    .all(|c| resource.categories.contains(c))
            {
                continue;
            }
            rows.push(APIResource {
                group: gv.group.clone(),
                version: gv.version.clone(),
                ..resource.clone()
            });
        }
    }
    // Stable, as kubectl's sort.Stable: equal keys keep the server's group order.
    rows.sort_by(|a, b| {
        let key = match opts.sort_by {
            SortBy::Group => a.group.cmp(&b.group),
            SortBy::Name => a.name.cmp(&b.name),
            SortBy::Kind => a.kind.cmp(&b.kind),
        };
        key.then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// The rows in the chosen output format, exactly as kubectl prints them.
pub fn render_resources(rows: &[APIResource], opts: &ApiResourcesOptions) -> String {
    match opts.output {
        OutputFormat::Name => rows
            .iter()
            .map(|r| {
                if r.group.is_empty() {
                    format!("{}\n", r.name)
                } else {
                    format!("{}.{}\n", r.name, r.group)
                }
            })
            .collect(),
        OutputFormat::Json => render_json(rows),
        OutputFormat::Table | OutputFormat::Wide => {
            let wide = opts.output == OutputFormat::Wide;
            let mut w = TabWriter::kubectl();
            if !opts.no_headers {
                let mut header = vec!["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"];
                if wide {
                    header.extend(["VERBS", "CATEGORIES"]);
                }
                w.line(header);
            }
            for r in rows {
                let mut cells = vec![
                    r.name.clone(),
                    r.short_names.join(","),
                    GroupVersion::new(&r.group, &r.version).to_string(),
                    r.namespaced.to_string(),
                    r.kind.clone(),
                ];
                if wide {
                    cells.push(r.verbs.join(","));
                    cells.push(r.categories.join(","));
                }
                w.line(cells);
            }
            w.finish()
        }
    }
}

/// One `APIResourceList` with every row, indented by four spaces and ended by a newline, as
/// kubectl's JSON printer writes it (no rows is `"resources": null`, as Go writes a nil
/// slice).
fn render_json(rows: &[APIResource]) -> String {
    /// `meta/v1` `APIResourceList` in Go's field order, with Go's `null` for no rows.
    #[derive(Serialize)]
    struct FlatList<'a> {
        kind: &'a str,
        #[serde(rename = "apiVersion")]
        api_version: &'a str,
        #[serde(rename = "groupVersion")]
        group_version: &'a str,
        resources: Option<&'a [APIResource]>,
    }
    let list = FlatList {
        kind: "APIResourceList",
        api_version: "v1",
        group_version: "",
        resources: (!rows.is_empty()).then_some(rows),
    };
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    // Serializing plain strings, booleans and lists into memory cannot fail.
    let _ = list.serialize(&mut serializer);
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(name: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> APIResource {
        APIResource {
            name: name.into(),
            kind: kind.into(),
            namespaced,
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..APIResource::default()
        }
    }

    fn lists() -> Vec<APIResourceList> {
        vec![
            APIResourceList::new(
                "v1",
                vec![
                    res("pods", "Pod", true, &["get", "list"]),
                    res("events", "Event", true, &["get"]),
                    res("bindings", "Binding", true, &[]),
                    res("nodes", "Node", false, &["get"]),
                ],
            ),
            APIResourceList::new(
                "events.k8s.io/v1",
                vec![res("events", "Event", true, &["get", "list"])],
            ),
            APIResourceList::new(
                "apps/v1",
                vec![res("deployments", "Deployment", true, &["get"])],
            ),
        ]
    }

    fn names(rows: &[APIResource]) -> Vec<String> {
        rows.iter()
            .map(|r| format!("{}.{}", r.name, r.group))
            .collect()
    }

    #[test]
    fn parses_kubectl_flag_forms() {
        let opts = ApiResourcesOptions::parse([
            "-owide",
            "--api-group=",
            "--namespaced=false",
            "--verbs",
            "get,list",
            "--verbs=watch",
            "--sort-by=kind",
            "--no-headers",
        ])
        .unwrap();
        assert_eq!(opts.output, OutputFormat::Wide);
        assert_eq!(opts.api_group.as_deref(), Some(""));
        assert_eq!(opts.namespaced, Some(false));
        assert_eq!(opts.verbs, ["get", "list", "watch"]);
        assert_eq!(opts.sort_by, SortBy::Kind);
        assert!(opts.no_headers);
        let opts = ApiResourcesOptions::parse(["--namespaced", "-o", "json"]).unwrap();
        assert_eq!(
            (opts.namespaced, opts.output),
            (Some(true), OutputFormat::Json)
        );
        assert!(ApiResourcesOptions::parse(["-o", "yaml"]).is_err());
        assert!(ApiResourcesOptions::parse(["pods"]).is_err());
        assert!(ApiResourcesOptions::parse(["--output"]).is_err());
    }

    #[test]
    fn boolean_flags_take_what_go_parse_bool_takes() {
        for (arg, headers) in [
            ("--no-headers", false),
            ("--no-headers=true", false),
            ("--no-headers=1", false),
            ("--no-headers=false", true),
            ("--no-headers=0", true),
            ("--no-headers=f", true),
            ("--no-headers=FALSE", true),
            ("--no-headers=False", true),
        ] {
            let opts = ApiResourcesOptions::parse([arg]).unwrap();
            assert_eq!(opts.no_headers, !headers, "{arg}");
        }
        for arg in ["--no-headers=yes", "--no-headers=", "--namespaced=no"] {
            let err = ApiResourcesOptions::parse([arg]).unwrap_err();
            assert!(err.contains("invalid argument"), "{arg}: {err}");
        }
        let opts = ApiResourcesOptions::parse(["--namespaced=F"]).unwrap();
        assert_eq!(opts.namespaced, Some(false));
    }

    #[test]
    fn filters_and_sorts_as_kubectl() {
        let all = select_resources(&lists(), &ApiResourcesOptions::default());
        assert_eq!(
            names(&all),
            [
                "events.",
                "nodes.",
                "pods.",
                "deployments.apps",
                "events.events.k8s.io"
            ]
        );
        let by_name = ApiResourcesOptions {
            sort_by: SortBy::Name,
            ..Default::default()
        };
        // Equal names keep the server's order: the core group's events first.
        assert_eq!(
            names(&select_resources(&lists(), &by_name)),
            [
                "deployments.apps",
                "events.",
                "events.events.k8s.io",
                "nodes.",
                "pods."
            ]
        );
        let filtered = ApiResourcesOptions {
            api_group: Some(String::new()),
            namespaced: Some(true),
            verbs: vec!["list".into()],
            ..Default::default()
        };
        assert_eq!(names(&select_resources(&lists(), &filtered)), ["pods."]);
    }

    #[test]
    fn renders_name_table_and_json() {
        let opts = ApiResourcesOptions {
            api_group: Some("events.k8s.io".into()),
            ..Default::default()
        };
        let rows = select_resources(&lists(), &opts);
        assert_eq!(
            render_resources(&rows, &opts),
            "NAME     SHORTNAMES   APIVERSION         NAMESPACED   KIND\n\
             events                events.k8s.io/v1   true         Event\n"
        );
        let name = ApiResourcesOptions {
            output: OutputFormat::Name,
            ..opts.clone()
        };
        assert_eq!(render_resources(&rows, &name), "events.events.k8s.io\n");
        let json = ApiResourcesOptions {
            output: OutputFormat::Json,
            ..opts
        };
        let text = render_resources(&rows, &json);
        assert!(
            text.starts_with("{\n    \"kind\": \"APIResourceList\",\n"),
            "{text}"
        );
        let back: APIResourceList = serde_json::from_str(&text).unwrap();
        assert_eq!(back.api_resources, rows);
        assert!(render_resources(&[], &json).contains("\"resources\": null"));
    }
}
