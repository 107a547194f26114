//! The scripted cases of the differential suite, grouped by verb: create, get, list and
//! selectors, update and conflicts, the status subresource, delete and finalizers, patches,
//! server-side apply, and watch event order.

use serde_json::{Value, json};

use crate::differential::{COMPACTED_RV, Case, Step, delete, get, patch, post, put, watch};

mod evictions;

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";
const WIDGETS: &str = "/apis/diff.kclient.dev/v1/namespaces/{ns}/widgets";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";
fn rules() -> Value {
    json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
}

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases";
/// A uid no object has.
const OTHER_UID: &str = "11111111-2222-3333-4444-555555555555";

fn cm_path(name: &str) -> String {
    format!("{CMS}/{name}")
}

fn w_path(name: &str) -> String {
    format!("{WIDGETS}/{name}")
}

fn cm(name: &str, labels: Value, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": data})
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec})
}

fn case(name: &'static str, steps: Vec<Step>) -> Case {
    Case { name, steps }
}

fn create_cm(name: &str) -> Step {
    post(CMS, cm(name, json!({}), json!({"k": "v"})))
}

fn create_labeled(name: &str, labels: Value) -> Step {
    post(CMS, cm(name, labels, json!({"k": "v"})))
}

/// Sprockets have no status subresource.
const SPROCKETS: &str = "/apis/diff.kclient.dev/v1/namespaces/{ns}/sprockets";

fn sprocket(name: &str) -> Value {
    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Sprocket",
        "metadata": {"name": name}, "spec": {"color": "red", "size": 1}})
}

fn create_widget(name: &str) -> Step {
    post(WIDGETS, widget(name, json!({"size": 1})))
}

/// Every case; at least 60.
pub(crate) fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    all.extend(create_cases());
    all.extend(get_and_list_cases());
    all.extend(update_cases());
    all.extend(delete_cases());
    all.extend(patch_cases());
    all.extend(watch_cases());
    all.extend(dry_run_cases());
    all.extend(metadata_cases());
    all.extend(pod_cases());
    all.extend(list_at_version_cases());
    all.extend(subresource_cases());
    all.extend(defaulting_cases());
    all.extend(schema_validation_cases());
    all.extend(cel_cases());
    all.extend(cel_library_cases());
    all.extend(number_cases());
    all.extend(legacy_watch_cases());
    all.extend(evictions::eviction_budget_cases());
    all
}

/// A custom resource's schema validation beyond types, `enum` and `required`: bounds,
/// lengths, patterns, sizes, formats and list types, one fault per request (the server
/// lists the faults of several fields in the order it walks a Go map, which varies).
fn schema_validation_cases() -> Vec<Case> {
    let gauges = "/apis/diff.kclient.dev/v1/namespaces/{ns}/gauges";
    let gauge = |spec: Value| {
        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gauge",
            "metadata": {"name": "g"}, "spec": spec})
    };
    let refused = |spec: Value| post(gauges, gauge(spec)).exact();
    vec![
        case(
            "custom resources: numbers are checked against the schema's bounds",
            {
                vec![
                    refused(json!({"min": 0})),
                    refused(json!({"max": 11})),
                    refused(json!({"above": 1})),
                    refused(json!({"below": 10})),
                    // Floats as Go prints them: 1.2345675e+06, and 1e6 (a float64 when it is
                    // validated) as 1e+06.
                    refused(json!({"below": 1_234_567.5})),
                    refused(json!({"below": 1e6})),
                    refused(json!({"triple": 4})),
                    refused(json!({"half": 0.3})),
                    // An integer against a multipleOf under 1: 0 to the server, not positive.
                    refused(json!({"half": 3})),
                    refused(json!({"small": 3_000_000_000_i64})),
                    // The type, the integer format and the bound, each a cause.
                    refused(json!({"min": 0.5})),
                    refused(json!({"max": 1e21})),
                    refused(json!({"level": 3})),
                    refused(json!({"level": "x"})),
                    // An allowed number is an int64 to the server, and a value is converted
                    // to it first: 1.5 is 1. A null is in no enum.
                    post(gauges, gauge(json!({"ratio": 1.5}))),
                    delete(&format!("{gauges}/g"), None),
                    refused(json!({"ratio": 3})),
                    refused(json!({"choice": null})),
                    post(
                        gauges,
                        gauge(
                            json!({"min": 1, "max": 10, "above": 2, "below": 9.5, "triple": 9,
                        "half": 2.5, "small": 2_147_483_647, "level": 2}),
                        ),
                    ),
                    patch(&format!("{gauges}/g"), MERGE, json!({"spec": {"min": 0}})).exact(),
                    patch(&format!("{gauges}/g"), APPLY, gauge(json!({"max": 12})))
                        .q("fieldManager", "applier")
                        .exact(),
                ]
            },
        ),
        case(
            "custom resources: strings are checked for length, pattern and format",
            vec![
                // Lengths count characters.
                refused(json!({"short": "é"})),
                refused(json!({"long": "abcd"})),
                refused(json!({"long": 7})),
                refused(json!({"tiny": "ab"})),
                // A whole float is a number where a string is asked for.
                refused(json!({"short": 3.0})),
                post(
                    gauges,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gauge",
                        "metadata": {"name": "a-name-longer-than-twenty"}, "spec": {}}),
                )
                .exact(),
                refused(json!({"word": "ab\n"})),
                // Go's \d is ASCII only.
                refused(json!({"word": "ab\u{663}"})),
                refused(json!({"uid": "x"})),
                refused(json!({"at": "2024-01-02"})),
                refused(json!({"day": "2023-02-29"})),
                refused(json!({"data": "abc"})),
                refused(json!({"ip": "::1"})),
                refused(json!({"net": "10.0.0.0/33"})),
                refused(json!({"mac": "01:23:45:67:89"})),
                refused(json!({"host": "-a"})),
                refused(json!({"label": "A"})),
                post(
                    gauges,
                    gauge(json!({"short": "ab", "long": "ééé", "word": "abc7",
                        "uid": "123e4567-e89b-12d3-a456-426614174000",
                        "at": "2024-01-02T03:04:05.5+01:00", "day": "2024-02-29",
                        "data": "YR==", "ip": "010.0.0.1", "net": "::/0",
                        "mac": "0123456789ab", "host": "a.example.com", "label": "a-1",
                        "secret": "!!"})),
                ),
            ],
        ),
        case(
            "custom resources: list and object sizes, and list types, are checked",
            vec![
                refused(json!({"few": ["x"]})),
                refused(json!({"many": ["a", "b", "c"]})),
                refused(json!({"one": [1, 2]})),
                // A list item's `null` is not pruned, and is not of the type.
                refused(json!({"many": [null, "x"]})),
                refused(json!({"wide": {"a": "b"}})),
                refused(json!({"narrow": {"a": "1", "b": "2"}})),
                refused(json!({"tags": ["a", "b", "a", "b", "a"]})),
                // A map's value is named by its key in brackets.
                refused(json!({"groups": {"a": ["x", "x"]}})),
                // The key with its default (protocol TCP) is the same as the first.
                refused(
                    json!({"ports": [{"port": 80}, {"port": 80, "protocol": "TCP"},
                    {"port": 80, "protocol": "UDP"}]}),
                ),
                refused(json!({"ports": [{"protocol": "TCP"}, {"protocol": "TCP"}]})),
                post(
                    gauges,
                    gauge(json!({"few": ["x", "x"], "many": ["a", "b"], "one": [1],
                        "wide": {"a": "1", "b": "2"}, "narrow": {},
                        "tags": ["a", "b"], "ports": [{"port": 80}, {"port": 81}]})),
                ),
                put(
                    &format!("{gauges}/g/status"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gauge",
                        "metadata": {"name": "g", "resourceVersion": "$rv:10"},
                        "status": {"count": -1}}),
                )
                .exact(),
                put(
                    &format!("{gauges}/g/status"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gauge",
                        "metadata": {"name": "g", "resourceVersion": "$rv:10"},
                        "status": {"count": 0, "names": ["a", "a"]}}),
                )
                .exact(),
                // Through `status`, a cause with no field names the subresource's root.
                patch(
                    &format!("{gauges}/g/status"),
                    MERGE,
                    json!({"status": {"count": 1.5}}),
                )
                .exact(),
                patch(
                    &format!("{gauges}/g/status"),
                    MERGE,
                    json!({"status": {"count": 2, "names": ["a", "b"]}}),
                ),
            ],
        ),
    ]
}

/// A custom resource's CEL rules (`x-kubernetes-validations`), evaluated by the fake with
/// the `cel` feature (which scripts/test turns on).
#[cfg(feature = "cel")]
fn cel_cases() -> Vec<Case> {
    let checks = "/apis/diff.kclient.dev/v1/namespaces/{ns}/checks";
    let check = |spec: Value| {
        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Check",
            "metadata": {"name": "c"}, "spec": spec})
    };
    let path = format!("{checks}/c");
    let refused = |spec: Value| post(checks, check(spec)).exact();
    let change = |spec: Value| patch(&path, MERGE, json!({"spec": spec}));
    vec![case(
        "custom resources: CEL rules are evaluated on every write",
        {
            vec![
                refused(json!({"a": 3, "b": 2})),
                refused(json!({"c": "bad"})),
                refused(json!({"d": 11})),
                refused(json!({"e": 12})),
                refused(json!({"pos": 0})),
                refused(json!({"tags": ["a", "abcd"]})),
                refused(json!({"f": 3})),
                refused(json!({"m": {"k": 0}})),
                // A field the rule reads is absent: the rule fails to evaluate.
                refused(json!({"x": {}})),
                // The same, for a rule with a message: the error names the message.
                refused(json!({"w": {}})),
                refused(json!({"mm": {"k": -1}})),
                refused(json!({"ports": [{"port": 0, "name": "a"}]})),
                // A wrong type: the rules are not evaluated, and the server says so.
                refused(json!({"c": 5})),
                // Transition rules are not evaluated on create.
                post(
                    checks,
                    check(
                        json!({"name": "n", "g": "x", "a": 1, "b": 2, "x": {"yy": 1},
                    "ports": [{"port": 80, "name": "http"}, {"port": 81, "name": "x"}]}),
                    ),
                ),
                change(json!({"name": "m"})).exact(),
                change(json!({"g": "y"})).exact(),
                change(json!({"g": null})),
                change(json!({"g": "z"})),
                // A map list's items hold their rules against the item of the same key.
                change(json!({"ports": [{"port": 81, "name": "y"}, {"port": 80, "name": "http"}]}))
                    .exact(),
                change(json!({"ports": [{"port": 81, "name": "x"}, {"port": 82, "name": "new"}]})),
                change(json!({"a": 5, "b": 1, "x": {"yy": 0}})).exact(),
                patch(
                    &format!("{path}/status"),
                    MERGE,
                    json!({"status": {"count": -1}}),
                )
                .exact(),
                patch(
                    &format!("{path}/status"),
                    MERGE,
                    json!({"status": {"count": 1}}),
                ),
            ]
        },
    )]
}

/// CEL rules that call Kubernetes' libraries: list functions, sets, regex, URLs (each part
/// compared with the one a field gives) and quantities. A case that refuses compares the
/// messages, among them Go's own errors (a URL's parse error, `ParseQuantity`'s).
#[cfg(feature = "cel")]
fn cel_library_cases() -> Vec<Case> {
    let libraries = "/apis/diff.kclient.dev/v1/namespaces/{ns}/libraries";
    let mut n = 0;
    let mut library = |spec: Value| {
        n += 1;
        post(
            libraries,
            json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Library",
                "metadata": {"name": format!("l{n}")}, "spec": spec}),
        )
        .exact()
    };
    let lists = [
        json!({"nums": [1, 2, 3]}),
        json!({"nums": [3, 1]}),
        json!({"nums": [5, 6]}),
        json!({"nums": []}),
        json!({"nums": [-1, 2]}),
        json!({"nums": [7, 8]}),
        json!({"nums": [1, 8]}),
        json!({"nums": [9]}),
        json!({"nums": [5, 6]}),
        json!({"nums": [1, 2, 2]}),
        json!({"nums": [1, 2, 3, 4]}),
        json!({"nums": [13]}),
        json!({"words": ["a", "b"]}),
        json!({"words": ["b", "a"]}),
        json!({"words": ["x", "zz"]}),
        json!({"code": "a1"}),
        json!({"code": "ab13"}),
        json!({"code": "abcd"}),
        json!({"code": "12"}),
        json!({"code": "1a2"}),
        json!({"code": "\u{661}\u{662}"}),
    ];
    let urls = [
        json!({"url": "https://User@Example.com:8443/a%20b?x=1&x=2#frag", "scheme": "https",
            "host": "Example.com:8443", "hostname": "Example.com", "port": "8443",
            "path": "/a%20b", "qx": ["1", "2"]}),
        json!({"url": "HTTP://[::1]:80/p", "scheme": "http", "host": "[::1]:80",
            "hostname": "::1", "port": "80", "path": "/p"}),
        json!({"url": "http://h/a b", "path": "/a%20b"}),
        json!({"url": "http://h/a!b*c;d", "path": "/a!b*c;d"}),
        json!({"url": "http://h/%e4", "path": "/%e4"}),
        json!({"url": "http://h/\u{e4}", "path": "/%C3%A4"}),
        json!({"url": "mailto:a@b", "scheme": "mailto", "host": "", "path": ""}),
        json!({"url": "/a/b?x=y", "scheme": "", "host": "", "path": "/a/b", "qx": ["y"]}),
        json!({"url": "http://h?x=a+b%20c&x&y=%zz;", "path": "", "qx": ["a b c", ""]}),
        json!({"url": "*", "path": "*", "host": ""}),
        json!({"url": "http://host:/p", "hostname": "host", "port": ""}),
        json!({"url": "http:/x", "host": "", "path": "/x"}),
        json!({"url": "http://u:p@host/p", "host": "host"}),
        json!({"url": "http://ex%C3%A9.com/", "host": "ex\u{e9}.com"}),
        json!({"url": "http://[fe80::1%25en0]:8/", "hostname": "fe80::1%en0"}),
        json!({"url": "http://[foo]/", "host": "[foo]"}),
        json!({"url": "http://[1.2.3.4]/", "host": "[1.2.3.4]"}),
        json!({"url": "http://[::ffff:1.2.3.4]/", "hostname": "::ffff:1.2.3.4"}),
        json!({"url": "ftp://a:1:2/", "hostname": "a:1", "port": "2"}),
        json!({"url": "http://a:1:2/", "host": "a:1:2"}),
        json!({"url": "http://::1/", "host": "::1"}),
        json!({"url": "http://a b", "scheme": "http"}),
        json!({"url": "a/b", "scheme": ""}),
        json!({"url": "1http://x", "scheme": ""}),
        json!({"url": ":x", "scheme": ""}),
        json!({"url": "", "scheme": ""}),
        json!({"url": "http://a:x/", "scheme": "http"}),
        json!({"url": "/%zz", "path": ""}),
        json!({"url": "http://[::1/", "host": ""}),
        json!({"url": "http://us er@host/", "host": "host"}),
        json!({"url": "http://ex%41mple.com/", "host": "x"}),
        json!({"url": "http://h/p\u{1}", "path": ""}),
    ];
    // Flags: isUnspecified, isLoopback, isLinkLocalMulticast, isLinkLocalUnicast,
    // isGlobalUnicast.
    let addresses = [
        json!({"addr": "10.0.0.1", "family": 4, "canonical": true, "text": "10.0.0.1",
            "flags": [false, false, false, false, true]}),
        json!({"addr": "2001:DB8::0:0:0:abcd", "family": 6, "canonical": false,
            "text": "2001:db8::abcd", "flags": [false, false, false, false, true]}),
        json!({"addr": "::", "flags": [true, false, false, false, false], "text": "::"}),
        json!({"addr": "127.0.0.5", "flags": [false, true, false, false, false]}),
        json!({"addr": "::1", "flags": [false, true, false, false, false], "canonical": true}),
        json!({"addr": "224.0.0.9", "flags": [false, false, true, false, false]}),
        json!({"addr": "ff02::1", "flags": [false, false, true, false, false]}),
        json!({"addr": "169.254.1.1", "flags": [false, false, false, true, false]}),
        json!({"addr": "fe80::1", "flags": [false, false, false, true, false]}),
        json!({"addr": "255.255.255.255", "flags": [false, false, false, false, false]}),
        json!({"addr": "1:2:3:4:5:6:7:8", "text": "1:2:3:4:5:6:7:8", "canonical": true}),
        json!({"addr": "1:0:0:4:0:0:0:8", "text": "1:0:0:4::8"}),
        json!({"addr": "::ffff:1.2.3.4", "family": 6}),
        json!({"addr": "fe80::1%eth0", "family": 6}),
        json!({"addr": "01.2.3.4", "family": 4}),
        json!({"addr": "1.2.3.256", "family": 4}),
        json!({"addr": "1.2.3", "family": 4}),
        json!({"addr": "::1::2", "family": 6}),
        json!({"addr": "12345::", "family": 6}),
        json!({"addr": "1:2:3:4:5:6:7:8:9", "family": 6}),
        json!({"addr": "1:2:3:4:5:6:1.2.3.4", "family": 6}),
        json!({"addr": "::1.2.3.4", "family": 6, "text": "::102:304"}),
        json!({"addr": "foo", "family": 4}),
        json!({"addr": "%x", "family": 4}),
        json!({"net": "10.0.0.0/8", "bits": 8, "member": "10.1.2.3", "within": true,
            "sub": "10.1.0.0/16", "subWithin": true, "text": "10.0.0.0/8", "addr": "10.0.0.0"}),
        json!({"net": "10.1.2.3/8", "text": "10.0.0.0/8", "addr": "10.1.2.3",
            "member": "11.0.0.1", "within": false, "sub": "10.0.0.0/4", "subWithin": false}),
        json!({"net": "192.168.0.0/16", "sub": "192.168.10.0/24", "subWithin": true}),
        json!({"net": "192.168.0.0/16", "sub": "192.168.10.5/24", "subWithin": true}),
        json!({"net": "2001:db8::/32", "member": "2001:db8::1", "within": true,
            "sub": "2001:db8:1::/48", "subWithin": true, "bits": 32}),
        json!({"net": "2001:db8::/32", "member": "10.0.0.1", "within": false}),
        json!({"net": "10.0.0.0/8", "member": "not-an-ip", "within": false}),
        json!({"net": "10.0.0.0/8", "sub": "10.0.0.0/33", "subWithin": false}),
        json!({"net": "10.0.0.0", "bits": 0}),
        json!({"net": "10.0.0.0/033", "bits": 0}),
        json!({"net": "::ffff:1.2.3.4/120", "bits": 0}),
        json!({"net": "fe80::1%eth0/64", "bits": 0}),
        json!({"net": "10.0.0.0/-1", "bits": 0}),
    ];
    let versions = [
        json!({"version": "1.2.3", "major": 1, "minor": 2, "patch": 3, "newer": "1.10.0", "order": -1}),
        json!({"version": "1.2.3-rc.1+build.5", "newer": "1.2.3", "order": -1}),
        json!({"version": "1.0.0-alpha", "newer": "1.0.0-alpha.1", "order": -1}),
        json!({"version": "1.0.0-beta.11", "newer": "1.0.0-beta.2", "order": 1}),
        json!({"version": "1.0.0-2", "newer": "1.0.0-alpha", "order": -1}),
        json!({"version": "1.0.0+a", "newer": "1.0.0+b", "order": 0}),
        json!({"version": "v1.2", "major": 1, "minor": 2, "patch": 0}),
        json!({"version": "01.02.03", "major": 1, "minor": 2, "patch": 3}),
        json!({"version": "1.2-rc", "major": 1}),
        json!({"version": "1.02.3", "major": 1}),
        json!({"version": "1.2.3-01", "major": 1}),
        json!({"version": "1.2.x", "major": 1}),
        json!({"version": "1.2.3+", "major": 1}),
        json!({"version": "1.2.3-a_b", "major": 1}),
        json!({"version": "99999999999999999999.0.0", "major": 1}),
        json!({"version": "", "major": 0}),
    ];
    let times = [
        json!({"timeout": "5s"}),
        json!({"timeout": "500ms"}),
        json!({"timeout": "1h"}),
        json!({"timeout": "x"}),
        json!({"timeout": "3 days"}),
        json!({"ttl": "2 days"}),
        json!({"ttl": "30s"}),
        json!({"ttl": "1h30m"}),
        json!({"ttl": "bogus"}),
        json!({"ttl": "2000h"}),
        json!({"start": "2024-01-01T00:00:00Z", "end": "2024-01-01T01:00:00+02:00"}),
        json!({"start": "2024-01-01T00:00:00.5Z", "end": "2024-01-01T00:00:01Z"}),
        json!({"start": "2024-01-01T00:00:00", "end": "2024-01-02T00:00:00Z"}),
        json!({"start": "2024-01-01T00:00:00Z", "end": "2024-01-05T00:00:00Z"}),
        json!({"start": "1999-06-01T12:00:00Z", "end": "1999-06-01T13:00:00Z"}),
        json!({"start": "2024-06-01T07:30:00Z", "end": "2024-06-01T08:00:00Z"}),
        json!({"start": "2024-13-01T00:00:00Z", "end": "2024-01-01T00:00:00Z"}),
        json!({"day": "2019-12-31"}),
        json!({"day": "2021-01-04"}),
        json!({"day": "2021-01-03"}),
        json!({"blob": "aGVsbG8="}),
        json!({"blob": "aGk="}),
        json!({"blob": "!!"}),
    ];
    let named = |label: &str, format: &str| json!({"label": label, "formatName": format});
    // The first problem a format names, and how many it names, as the fake words them
    // (`problems differ` when the server's are other).
    let problem = |label: &str, format: &str, first: &str, count: usize| json!({"label": label, "formatName": format, "problem": first, "problems": count});
    const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN: &str = r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let formats = [
        named("my-name", "dns1123Label"),
        problem("My_Name", "dns1123Label", LABEL, 1),
        problem("a.b", "dns1123Label", "must not contain dots", 1),
        problem(
            &"a".repeat(64),
            "dns1123Label",
            "must be no more than 63 characters",
            1,
        ),
        problem(
            &format!("{}.b", "a".repeat(63)),
            "dns1123Label",
            "must be no more than 63 characters",
            2,
        ),
        named("example.com", "dns1123Subdomain"),
        problem("-x.com", "dns1123Subdomain", SUBDOMAIN, 1),
        problem(
            "1abc",
            "dns1035Label",
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            1,
        ),
        named("example.com/MyName", "qualifiedName"),
        problem("/x", "qualifiedName", "prefix part must be non-empty", 1),
        problem(
            "a/b/c",
            "qualifiedName",
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            1,
        ),
        problem(
            "Ex.com/-x",
            "qualifiedName",
            &format!("prefix part {SUBDOMAIN}"),
            2,
        ),
        problem("x/", "qualifiedName", "name part must be non-empty", 2),
        named("my-prefix-", "dns1123LabelPrefix"),
        named("x-", "dns1035LabelPrefix"),
        named("sub.prefix.-", "dns1123SubdomainPrefix"),
        problem("-", "dns1123LabelPrefix", LABEL, 1),
        named("my_value", "labelValue"),
        problem(
            "a b",
            "labelValue",
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            1,
        ),
        named("http://example.com", "uri"),
        problem("a/b", "uri", r#"parse "a/b": invalid URI for request"#, 1),
        named("123e4567-e89b-12d3-a456-426614174000", "uuid"),
        problem("123", "uuid", "does not match the UUID format", 1),
        named("aGVsbG8=", "byte"),
        problem("!", "byte", "invalid base64", 1),
        problem("2021-02-30", "date", "invalid date", 1),
        named("2021-01-01T00:00:00Z", "datetime"),
        problem("yesterday", "datetime", "invalid datetime", 1),
        named("anything", "noSuchFormat"),
    ];
    let comprehensions = [
        json!({"names": ["a", "b"]}),
        json!({"names": ["a", "b", "c", "d", "e"]}),
        json!({"names": ["a", ""]}),
        json!({"names": ["a", "no"]}),
        json!({"names": ["one", "two", "three"]}),
        json!({"names": ["one", "one", "x"]}),
        json!({"names": ["x", "x"]}),
        json!({"counts": {"a": 1, "b": 0}}),
        json!({"counts": {"long key": 1}}),
        json!({"counts": {"a": -1}}),
        json!({"counts": {"a": 1, "b": 2, "c": 3, "d": 4}}),
    ];
    let quantities = [
        json!({"qty": "1Gi"}),
        json!({"qty": "20Gi"}),
        json!({"qty": "abc"}),
        json!({"qty": "-1"}),
        json!({"qa": "1500m", "qb": "500m", "qsum": 2}),
        json!({"qa": "1.5", "qb": "1", "qsum": 2}),
        json!({"qa": "1Ki", "qb": "0", "qsum": 1024}),
        json!({"qa": "1", "qb": "-1m"}),
        json!({"qa": "x", "qb": "1", "qsum": 1}),
        json!({"whole": "1000m"}),
        json!({"whole": "1.0"}),
        json!({"whole": "1e3"}),
        json!({"whole": "100m"}),
        json!({"whole": "8Ei"}),
        json!({"approx": "1.5"}),
        json!({"approx": "2500m"}),
    ];
    let steps = lists
        .into_iter()
        .chain(urls)
        .chain(addresses)
        .chain(versions)
        .chain(times)
        .chain(formats)
        .chain(comprehensions)
        .chain(quantities)
        .map(&mut library)
        .collect();
    let opt = format!("{libraries}/opt");
    let grow = |value: i64| patch(&opt, MERGE, json!({"spec": {"opt": value}})).exact();
    vec![
        case(
            "custom resources: CEL rules call Kubernetes' libraries",
            steps,
        ),
        case(
            "custom resources: a transition rule with optionalOldSelf runs on create too",
            vec![
                post(
                    libraries,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Library",
                    "metadata": {"name": "opt"}, "spec": {"opt": 150}}),
                )
                .exact(),
                post(
                    libraries,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Library",
                    "metadata": {"name": "opt"}, "spec": {"opt": 5}}),
                )
                .exact(),
                grow(3),
                grow(7),
                grow(150),
            ],
        ),
    ]
}

/// Without the `cel` feature the fake does not evaluate CEL rules: no cases.
#[cfg(not(feature = "cel"))]
fn cel_cases() -> Vec<Case> {
    Vec::new()
}

#[cfg(not(feature = "cel"))]
fn cel_library_cases() -> Vec<Case> {
    Vec::new()
}

fn defaulting_cases() -> Vec<Case> {
    let template = |containers: Value| {
        json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"schedulerName": "kclient-differential-none", "containers": containers}})
    };
    let settings = "/apis/diff.kclient.dev/v1/namespaces/{ns}/settings";
    let setting = |name: &str, spec: Value| {
        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
            "metadata": {"name": name}, "spec": spec})
    };
    let s_path = |name: &str| format!("{settings}/{name}");
    vec![
        case(
            "custom resources: pruned and defaulted by the CRD's schema on create",
            vec![
                post(
                    settings,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                        "metadata": {"name": "full", "foo": "bar"}, "extra": 1,
                        "status": {"phase": "Q"},
                        "spec": {"items": [{"name": "a"}, {"name": "b", "weight": 2, "zzz": 1}],
                            "labels": {"k": {}, "j": {"v": "w", "u": 1}},
                            "free": {"anything": {"deep": 1}}, "unknown": 2,
                            "nulldef": null, "nullok": null, "nullnodef": null,
                            "tags": ["a", null], "weights": {"x": null, "y": 1},
                            "anything": {"a": {"x": 1}, "b": 2},
                            "emb": {"apiVersion": "v1", "kind": "X",
                                "metadata": {"name": "e", "bogus": 1},
                                "spec": {"q": 1}, "other": 2}}}),
                ),
                post(settings, setting("bare", json!({}))),
                post(
                    settings,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                        "metadata": {"name": "nospec"}}),
                ),
                get(&s_path("full")),
            ],
        ),
        case(
            "custom resources: every write is pruned and defaulted again",
            vec![
                post(settings, setting("s", json!({"mode": "b"}))),
                // A null where a default is: the default again; under a map value: its
                // defaults.
                patch(
                    &s_path("s"),
                    MERGE,
                    json!({"spec": {"replicas": null, "labels": {"q": {}}}}),
                ),
                patch(
                    &s_path("s"),
                    JSON_PATCH,
                    json!([{"op": "add", "path": "/spec/zz", "value": 1},
                        {"op": "replace", "path": "/spec/nulldef", "value": null},
                        {"op": "remove", "path": "/spec/nested"}]),
                ),
                put(
                    &s_path("s"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                        "metadata": {"name": "s", "resourceVersion": "$rv:2"},
                        "spec": {"items": [{}], "nullok": null, "more": true}}),
                ),
                put(
                    &format!("{}/status", s_path("s")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                        "metadata": {"name": "s", "resourceVersion": "$rv:3"},
                        "status": {"count": 1, "x": 2}}),
                ),
                patch(
                    &s_path("s"),
                    APPLY,
                    setting("s", json!({"mode": "c", "labels": {"r": {}}})),
                )
                .q("fieldManager", "applier"),
                get(&s_path("s")),
            ],
        ),
        case(
            "custom resources: a list-map key's default keys an item that omits it",
            vec![
                patch(
                    &s_path("k"),
                    APPLY,
                    setting("k", json!({"ports": [{"port": 80, "name": "a"}]})),
                )
                .q("fieldManager", "one"),
                patch(
                    &s_path("k"),
                    APPLY,
                    setting("k", json!({"ports": [{"port": 80, "protocol": "TCP", "name": "b"}]})),
                )
                .q("fieldManager", "two"),
                patch(
                    &s_path("k"),
                    APPLY,
                    setting("k", json!({"ports": [{"port": 81}, {"port": 80, "name": "a"}]})),
                )
                .q("fieldManager", "two"),
                get(&s_path("k")).managers(),
            ],
        ),
        case(
            "custom resources: versions without a conversion webhook serve the same objects",
            {
                let v1 = "/apis/diff.kclient.dev/v1/namespaces/{ns}/paints";
                let beta = "/apis/diff.kclient.dev/v1beta1/namespaces/{ns}/paints";
                let paint = |version: &str, name: &str, spec: Value| {
                    json!({"apiVersion": format!("diff.kclient.dev/{version}"), "kind": "Paint",
                        "metadata": {"name": name}, "spec": spec})
                };
                vec![
                    post(v1, paint("v1", "a", json!({"size": 3}))),
                    // Read through v1beta1: its apiVersion, pruned by its schema (no size),
                    // not defaulted by it (no shade).
                    get(&format!("{beta}/a")),
                    get(beta),
                    // Written through v1beta1: stored as v1, so v1's defaults and not
                    // v1beta1's.
                    post(beta, paint("v1beta1", "b", json!({}))),
                    get(&format!("{v1}/b")),
                    watch(beta, json!({})).q("resourceVersion", "$rv:0"),
                    put(
                        &format!("{beta}/b"),
                        json!({"apiVersion": "diff.kclient.dev/v1beta1", "kind": "Paint",
                            "metadata": {"name": "b", "resourceVersion": "$rv:3"},
                            "spec": {"color": "green"}}),
                    ),
                    get(&format!("{v1}/b")),
                    get(v1),
                    delete(&format!("{beta}/b"), None),
                ]
            },
        ),
        case(
            "custom resources: apply takes what the schema leaves open, keeps nulls, drops what it empties",
            {
                let apply = |spec: Value| {
                    patch(&s_path("o"), APPLY, setting("o", spec)).q("fieldManager", "one")
                };
                vec![
                    // An embedded object's spec declares nothing (open), and a node below
                    // one that keeps unknown fields takes them too.
                    apply(json!({"emb": {"apiVersion": "v1", "kind": "X", "spec": {"q": 1}},
                        "free": {"sub": {"a": "x", "b": 1}, "other": {"deep": 1}},
                        "labels": {"k": {"v": "1"}}, "items": [{"name": "a"}],
                        "ports": [{"port": 1}], "nested": {"inner": "y"}, "mode": "m"})),
                    // Refused: a field in an atomic list's item, ObjectMeta's unknown field,
                    // and only the first of a map's undeclared fields.
                    apply(json!({"items": [{"name": "a", "zzz": 1}]})),
                    patch(
                        &s_path("o"),
                        APPLY,
                        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                            "metadata": {"name": "o", "foo": 1}}),
                    )
                    .q("fieldManager", "one"),
                    apply(json!({"bogus": 1, "bogus2": 2, "nested": {"bogus3": 1}})),
                    // A nullable field's null is kept. What the manager no longer applies
                    // goes, and the lists and maps it leaves empty with it (nested's inner,
                    // then nested, which its default brings back; labels, a map value it
                    // held whole; ports).
                    apply(json!({"nullok": null, "nested": null, "mode": "m"})),
                    get(&s_path("o")),
                ]
            },
        ),
        case("custom resources: every write is validated by the schema", {
            let spec = |spec: Value| post(settings, setting("v", spec)).exact();
            vec![
                spec(json!({"replicas": "x"})),
                spec(json!({"replicas": 1.5})),
                spec(json!({"level": "mid"})),
                spec(json!({"checks": [{"count": 1}]})),
                spec(json!({"checks": [{"name": "a", "count": "many"}]})),
                spec(json!({"nested": "flat"})),
                // A float with no fraction is an integer; a number field takes one.
                spec(json!({"replicas": 3.0, "level": "low", "checks": [{"name": "a"}]})),
                patch(&s_path("v"), MERGE, json!({"spec": {"mode": 7}})).exact(),
                put(
                    &format!("{}/status", s_path("v")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                        "metadata": {"name": "v", "resourceVersion": "$rv:6"},
                        "status": {"count": "x"}}),
                )
                .exact(),
                patch(
                    &s_path("v"),
                    APPLY,
                    setting("v", json!({"level": "none"})),
                )
                .q("fieldManager", "applier")
                .exact(),
            ]
        }),
        case(
            "custom resources: an applied field the schema does not declare is refused",
            vec![
                patch(
                    &s_path("a"),
                    APPLY,
                    setting("a", json!({"unknown": 1, "mode": "b"})),
                )
                .q("fieldManager", "applier"),
                patch(
                    &s_path("a"),
                    APPLY,
                    setting("a", json!({"free": {"anything": 1}, "labels": {"k": {"x": 1}}})),
                )
                .q("fieldManager", "applier"),
                patch(
                    &s_path("a"),
                    APPLY,
                    setting("a", json!({"free": {"anything": 1}})),
                )
                .q("fieldManager", "applier"),
            ],
        ),
        case("defaults: a Job, its generated selector and labels", {
            let jobs = "/apis/batch/v1/namespaces/{ns}/jobs";
            let pod = |labels: Value| {
                json!({"metadata": {"labels": labels}, "spec": {"restartPolicy": "Never",
                    "schedulerName": "kclient-differential-none",
                    "containers": [{"name": "app", "image": "app:1"}]}})
            };
            vec![
                post(
                    jobs,
                    json!({"metadata": {"name": "plain"}, "spec": {"suspend": true,
                        "template": pod(json!({"app": "j"}))}}),
                ),
                post(
                    jobs,
                    json!({"metadata": {"name": "parallel", "labels": {"own": "x"}},
                        "spec": {"suspend": true, "parallelism": 2,
                            "podFailurePolicy": {"rules": [{"action": "FailJob",
                                "onExitCodes": {"operator": "In", "values": [42]}}]},
                            "template": pod(json!({"app": "j"}))}}),
                ),
                post(
                    jobs,
                    json!({"metadata": {"name": "manual"}, "spec": {"suspend": true,
                        "manualSelector": true, "completions": 3,
                        "selector": {"matchLabels": {"app": "m"}},
                        "template": pod(json!({"app": "m"}))}}),
                ),
                post(
                    jobs,
                    json!({"metadata": {"name": "indexed"}, "spec": {"suspend": true,
                        "completionMode": "Indexed", "completions": 2,
                        "backoffLimitPerIndex": 1, "template": pod(json!({}))}}),
                ),
            ]
        }),
        case(
            "defaults: a CronJob",
            vec![post(
                "/apis/batch/v1/namespaces/{ns}/cronjobs",
                json!({"metadata": {"name": "nightly"}, "spec": {"schedule": "0 3 * * *",
                    "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                        "containers": [{"name": "app", "image": "app"}]}}}}}}),
            )],
        ),
        case(
            "defaults: a Deployment",
            vec![
                post(
                    "/apis/apps/v1/namespaces/{ns}/deployments",
                    json!({"metadata": {"name": "web"}, "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template(json!([
                        {"name": "app", "image": "app:1", "ports": [{"containerPort": 80}]},
                        {"name": "side", "image": "side"},
                    ]))}}),
                ),
                post(
                    "/apis/apps/v1/namespaces/{ns}/deployments",
                    json!({"metadata": {"name": "recreate"}, "spec": {
                    "replicas": 0, "strategy": {"type": "Recreate"},
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template(json!([
                        {"name": "app", "image": "registry:5000/app@sha256:0123"},
                        {"name": "side", "image": "side:latest", "imagePullPolicy": "Never"},
                    ]))}}),
                ),
                post(
                    "/apis/apps/v1/namespaces/{ns}/deployments",
                    json!({"metadata": {"name": "partial"}, "spec": {
                        "strategy": {"rollingUpdate": {"maxSurge": 2}},
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": template(json!([{"name": "app", "image": "app:1"}]))}}),
                ),
            ],
        ),
        case(
            "defaults: a ReplicaSet",
            vec![post(
                "/apis/apps/v1/namespaces/{ns}/replicasets",
                json!({"metadata": {"name": "web"}, "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template(json!([{"name": "app", "image": "app:1"}]))}}),
            )],
        ),
        case(
            "defaults: a StatefulSet and a DaemonSet",
            vec![
                post(
                    "/apis/apps/v1/namespaces/{ns}/statefulsets",
                    json!({"metadata": {"name": "db"}, "spec": {"serviceName": "db",
                        "replicas": 0,
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": template(json!([{"name": "db", "image": "db:1"}]))}}),
                ),
                post(
                    "/apis/apps/v1/namespaces/{ns}/statefulsets",
                    json!({"metadata": {"name": "ondelete"}, "spec": {"serviceName": "db",
                        "replicas": 0, "updateStrategy": {"type": "OnDelete"},
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": template(json!([{"name": "db", "image": "db:1"}]))}}),
                ),
                post(
                    "/apis/apps/v1/namespaces/{ns}/daemonsets",
                    json!({"metadata": {"name": "agent"}, "spec": {
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": template(json!([{"name": "agent", "image": "agent:1"}]))}}),
                ),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/daemonsets/agent",
                    MERGE,
                    json!({"spec": {"template": {"metadata": {"labels": {"app": "web", "v": "2"}}}}}),
                )
                .replicas(),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/daemonsets/agent",
                    MERGE,
                    json!({"spec": {"revisionHistoryLimit": 3}}),
                )
                .replicas(),
            ],
        ),
        case(
            "defaults: Services",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/services",
                    json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
                        "ports": [{"name": "a", "port": 80},
                            {"name": "b", "port": 81, "targetPort": "http", "protocol": "UDP"}]}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/services",
                    json!({"metadata": {"name": "headless"}, "spec": {"clusterIP": "None",
                        "selector": {"app": "web"}, "ports": [{"port": 80}]}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/services",
                    json!({"metadata": {"name": "external"}, "spec": {"type": "ExternalName",
                        "externalName": "example.com"}}),
                ),
            ],
        ),
        case(
            "defaults: a Pod",
            vec![post(
                PODS,
                json!({"metadata": {"name": "p"}, "spec": {
                "schedulerName": "kclient-differential-none",
                "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 5}],
                "initContainers": [{"name": "init", "image": "init"}],
                "containers": [
                    {"name": "app", "image": "app:1", "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}},
                ]}}),
            )],
        ),
        case(
            "defaults: Secrets",
            vec![post(
                "/api/v1/namespaces/{ns}/secrets",
                json!({"metadata": {"name": "s"}, "stringData": {"a": "b"}}),
            )],
        ),
    ]
}

const GADGETS: &str = "/apis/diff.kclient.dev/v1/namespaces/{ns}/gadgets";

fn gadget_path(name: &str) -> String {
    format!("{GADGETS}/{name}")
}

/// A workload of `kind` at `path` with 2 replicas, whose Pods testenv's scheduler leaves
/// alone.
fn workload(path: &str, kind: &str) -> Step {
    let mut spec = json!({"replicas": 2,
        "selector": {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
        "template": {"metadata": {"labels": {"app": "web", "tier": "a"}},
            "spec": {"schedulerName": "kclient-differential-none",
                "containers": [{"name": "app", "image": "app:1"}]}}});
    if kind == "StatefulSet" {
        spec["serviceName"] = json!("web");
    }
    post(path, json!({"metadata": {"name": "web"}, "spec": spec})).replicas()
}

/// An `autoscaling/v1` Scale configuration named `name` with `replicas`.
fn scale_config(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": name}, "spec": {"replicas": replicas}})
}

/// Server-side apply of a Scale to the object named `web` under `path` (created by
/// `create`): the replicas change, the answer is the Scale, the object records the manager
/// as an `Apply` through `scale` (forced: the creator owns the replicas, and the real server
/// detects that conflict), and bad configurations are refused.
fn scale_apply_steps(create: Step, path: &str) -> Vec<Step> {
    let scale = format!("{path}/web/scale");
    let apply_at = |at: &str, body: Value| {
        patch(at, APPLY, body)
            .q("fieldManager", "scaler")
            .q("force", "true")
            .replicas()
    };
    let apply = |body: Value| apply_at(&scale, body);
    vec![
        create,
        apply(scale_config("web", 5)),
        get(&format!("{path}/web")).managers(),
        get(&scale).replicas(),
        apply(scale_config("web", 3)),
        // The same configuration again changes nothing.
        apply(scale_config("web", 3)),
        get(&format!("{path}/web")).managers(),
        patch(&scale, APPLY, scale_config("web", 4)).replicas(),
        apply(json!({"spec": {"replicas": 4}})),
        apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 4}})),
        apply(scale_config("other", 4)),
        apply(scale_config("web", -1)),
        apply_at(&format!("{path}/nope/scale"), scale_config("nope", 4)),
        get(&format!("{path}/web")).replicas(),
    ]
}

fn subresource_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (kind, plural) in [
        ("Deployment", "deployments"),
        ("ReplicaSet", "replicasets"),
        ("StatefulSet", "statefulsets"),
    ] {
        let path = format!("/apis/apps/v1/namespaces/{{ns}}/{plural}");
        let scale = format!("{path}/web/scale");
        let name: &'static str =
            Box::leak(format!("scale: get, update and patch a {kind}'s").into_boxed_str());
        cases.push(case(
            name,
            vec![
                workload(&path, kind),
                get(&scale).replicas(),
                put(
                    &scale,
                    json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                        "metadata": {"name": "web"}, "spec": {"replicas": 3}}),
                )
                .replicas(),
                get(&format!("{path}/web")).replicas(),
                patch(&scale, MERGE, json!({"spec": {"replicas": 0}})).replicas(),
                patch(&scale, STRATEGIC, json!({"spec": {"replicas": 4}})).replicas(),
                patch(
                    &scale,
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]),
                )
                .replicas(),
                get(&format!("{path}/web")).replicas(),
                put(
                    &scale,
                    json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                        "metadata": {"name": "web"}, "spec": {"replicas": -1}}),
                )
                .replicas(),
                get(&format!("{path}/nope/scale")).replicas(),
            ],
        ));
        let name: &'static str =
            Box::leak(format!("scale: server-side apply on a {kind}'s").into_boxed_str());
        cases.push(case(name, scale_apply_steps(workload(&path, kind), &path)));
    }
    cases.extend([
        case(
            "scale: a custom resource's scale subresource",
            vec![
                post(
                    GADGETS,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gadget",
                        "metadata": {"name": "g"}, "spec": {"replicas": 2}}),
                ),
                get(&format!("{}/scale", gadget_path("g"))),
                put(
                    &format!("{}/status", gadget_path("g")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Gadget",
                        "metadata": {"name": "g", "resourceVersion": "$rv:0"},
                        "spec": {"replicas": 2},
                        "status": {"replicas": 1, "selector": "app=g"}}),
                ),
                get(&format!("{}/scale", gadget_path("g"))),
                put(
                    &format!("{}/scale", gadget_path("g")),
                    json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                        "metadata": {"name": "g", "resourceVersion": "$rv:3"},
                        "spec": {"replicas": 4}}),
                ),
                get(&gadget_path("g")),
                put(
                    &format!("{}/scale", gadget_path("g")),
                    json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                        "metadata": {"name": "g", "resourceVersion": "$rv:0"},
                        "spec": {"replicas": 6}}),
                ),
                patch(
                    &format!("{}/scale", gadget_path("g")),
                    MERGE,
                    json!({"spec": {"replicas": 1}}),
                ),
                get(&gadget_path("g")),
                watch(WIDGETS, json!({})),
            ],
        ),
        case(
            "scale: a ReplicationController's, its selector a map",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/replicationcontrollers",
                    json!({"metadata": {"name": "rc"}, "spec": {"replicas": 1,
                        "selector": {"app": "web", "tier": "a"},
                        "template": {"metadata": {"labels": {"app": "web", "tier": "a"}},
                            "spec": {"schedulerName": "kclient-differential-none",
                                "containers": [{"name": "app", "image": "app:1"}]}}}}),
                )
                .replicas(),
                get("/api/v1/namespaces/{ns}/replicationcontrollers/rc/scale").replicas(),
                patch(
                    "/api/v1/namespaces/{ns}/replicationcontrollers/rc/scale",
                    MERGE,
                    json!({"spec": {"replicas": 2}}),
                )
                .replicas(),
                get("/api/v1/namespaces/{ns}/replicationcontrollers/rc").replicas(),
            ],
        ),
        case(
            "scale: server-side apply on a ReplicationController's",
            scale_apply_steps(
                post(
                    "/api/v1/namespaces/{ns}/replicationcontrollers",
                    json!({"metadata": {"name": "web"}, "spec": {"replicas": 1,
                        "selector": {"app": "web"},
                        "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"schedulerName": "kclient-differential-none",
                                "containers": [{"name": "app", "image": "app:1"}]}}}}),
                )
                .replicas(),
                "/api/v1/namespaces/{ns}/replicationcontrollers",
            ),
        ),
        case(
            "scale: a resource without it is not found",
            vec![
                create_cm("a"),
                get(&format!("{}/scale", cm_path("a"))),
                create_widget("w"),
                get(&format!("{}/scale", w_path("w"))),
            ],
        ),
        case(
            "binding: binds an unscheduled Pod once",
            vec![
                pod("a", None),
                post(
                    &format!("{}/binding", pod_path("a")),
                    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                        "target": {"kind": "Node", "name": "node-1"}}),
                ),
                get(&pod_path("a")).names(),
                post(
                    &format!("{}/binding", pod_path("a")),
                    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                        "target": {"kind": "Node", "name": "node-2"}}),
                ),
                post(
                    &format!("{}/binding", pod_path("a")),
                    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
                        "target": {"kind": "Node", "name": "node-2"}}),
                ),
                post(
                    &format!("{}/binding", pod_path("nope")),
                    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "nope"},
                        "target": {"kind": "Node", "name": "node-2"}}),
                ),
                // A Binding naming another namespace than the URL's is refused.
                pod("d", None),
                post(
                    &format!("{}/binding", pod_path("d")),
                    json!({"apiVersion": "v1", "kind": "Binding",
                        "metadata": {"name": "d", "namespace": "kclient-elsewhere"},
                        "target": {"kind": "Node", "name": "node-2"}}),
                ),
                get(&pod_path("d")).names(),
                // The URL's namespace, written out, is accepted.
                post(
                    &format!("{}/binding", pod_path("d")),
                    json!({"apiVersion": "v1", "kind": "Binding",
                        "metadata": {"name": "d", "namespace": "{ns}"},
                        "target": {"kind": "Node", "name": "node-2"}}),
                ),
            ],
        ),
        case(
            "eviction: evicting a Pod deletes it",
            vec![
                pod("a", None),
                pod("b", Some("node-1")),
                evict("a", None),
                get(&pod_path("a")).names(),
                evict("b", None),
                get(&pod_path("b")).names(),
                evict("b", Some(json!({"gracePeriodSeconds": 0}))),
                get(&pod_path("b")).names(),
                evict("nope", None),
                pod("c", None),
                post(
                    &format!("{}/eviction", pod_path("c")),
                    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}}),
                ),
                // An Eviction naming another namespace than the URL's is refused, and the
                // Pod stays.
                post(
                    &format!("{}/eviction", pod_path("c")),
                    json!({"apiVersion": "policy/v1", "kind": "Eviction",
                        "metadata": {"name": "c", "namespace": "kclient-elsewhere"}}),
                ),
                get(&pod_path("c")).names(),
                // The URL's namespace, written out, is accepted.
                post(
                    &format!("{}/eviction", pod_path("c")),
                    json!({"apiVersion": "policy/v1", "kind": "Eviction",
                        "metadata": {"name": "c", "namespace": "{ns}"}}),
                ),
                get(&pod_path("c")).names(),
            ],
        ),
        case(
            "eviction: evicting a terminating Pod again keeps its DisruptionTarget condition's time",
            vec![
                pod("b", Some("node-1")),
                evict("b", None),
                // A transition time in the past stands for an eviction a while ago.
                patch(
                    &format!("{}/status", pod_path("b")),
                    MERGE,
                    json!({"status": {"conditions": [{"type": "DisruptionTarget",
                        "status": "True", "reason": "EvictionByEvictionAPI",
                        "message": "Eviction API: evicting",
                        "lastTransitionTime": "2020-01-01T00:00:00Z"}]}}),
                )
                .names(),
                // The condition is the same, so nothing is written: the resourceVersion stays.
                evict("b", None),
                get(&pod_path("b")).names(),
            ],
        ),
        case(
            "eviction: preconditions are checked before the condition is written",
            vec![
                pod("b", Some("node-1")),
                evict("b", Some(json!({"preconditions": {"resourceVersion": "1"}}))),
                // Refused before any write: the resourceVersion stays, no condition.
                get(&pod_path("b")).names(),
                // The current version passes, although the condition's write changes it.
                evict("b", Some(json!({"preconditions": {"resourceVersion": "$rv:0"}}))),
                get(&pod_path("b")).names(),
            ],
        ),
        case(
            "eviction: a finished Pod gets the DisruptionTarget condition too, then goes",
            vec![
                pod("before", None),
                watch(PODS, json!({})).q("resourceVersion", "$rv:0"),
                pod("c", Some("node-1")),
                patch(
                    &format!("{}/status", pod_path("c")),
                    MERGE,
                    json!({"status": {"phase": "Succeeded"}}),
                )
                .names(),
                evict("c", None),
                get(&pod_path("c")).names(),
            ],
        ),
        case(
            "token: a TokenRequest for a ServiceAccount",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts",
                    json!({"metadata": {"name": "robot"}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"audiences": ["a", "b"], "expirationSeconds": 7200}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"expirationSeconds": 60}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/nobody/token",
                    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {}}),
                ),
                // A TokenRequest naming another namespace than the URL's is refused.
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "metadata": {"namespace": "kclient-elsewhere"}, "spec": {}}),
                ),
            ],
        ),
    ]);
    cases
}

/// A resourceVersion no store has reached.
const FUTURE_RV: &str = "999999999999";

fn list_at_version_cases() -> Vec<Case> {
    let exact = |step: usize| {
        get(CMS)
            .q("resourceVersion", &format!("$rv:{step}"))
            .q("resourceVersionMatch", "Exact")
    };
    vec![
        case(
            "list at a version: Exact shows the objects as they were",
            vec![
                create_cm("a"),
                create_cm("b"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "changed"}})),
                delete(&cm_path("b"), None),
                create_cm("c"),
                exact(1),
                exact(2),
            ],
        ),
        case(
            "list at a version: Exact with a limit pages at that version",
            vec![
                create_cm("a"),
                create_cm("b"),
                create_cm("c"),
                create_cm("d"),
                delete(&cm_path("a"), None),
                exact(2).q("limit", "2"),
                get(CMS).q("limit", "2").q("continue", "$continue:5"),
            ],
        ),
        case(
            "list at a version: a version with a limit and no match is Exact",
            vec![
                create_cm("a"),
                create_cm("b"),
                get(CMS).q("resourceVersion", "$rv:0").q("limit", "5"),
            ],
        ),
        case(
            "list at a version: NotOlderThan reads the latest state",
            vec![
                create_cm("a"),
                create_cm("b"),
                // At the second create's version: the server's watch cache may not hold the
                // second object yet when asked for the first's, and would answer without it.
                get(CMS)
                    .q("resourceVersion", "$rv:1")
                    .q("resourceVersionMatch", "NotOlderThan"),
                get(CMS)
                    .q("resourceVersion", "$rv:1")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("limit", "1"),
            ],
        ),
        case(
            "list at a version: a version without a match or a limit reads the latest state",
            vec![
                create_cm("a"),
                create_cm("b"),
                // At the second create's version, as the NotOlderThan case above.
                get(CMS).q("resourceVersion", "$rv:1"),
            ],
        ),
        case(
            "list at a version: 0 ignores the limit",
            vec![
                create_cm("a"),
                create_cm("b"),
                // Waits until the server's watch cache has both, as "0" reads it as it is.
                get(CMS)
                    .q("resourceVersion", "$rv:1")
                    .q("resourceVersionMatch", "NotOlderThan"),
                get(CMS).q("resourceVersion", "0").q("limit", "1"),
                get(CMS)
                    .q("resourceVersion", "0")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("limit", "1"),
            ],
        ),
        case(
            "list at a version: older than the history is Expired",
            vec![
                create_cm("a"),
                Step::Compact,
                get(CMS)
                    .q("resourceVersion", COMPACTED_RV)
                    .q("resourceVersionMatch", "Exact"),
                get(CMS).q("resourceVersion", COMPACTED_RV).q("limit", "1"),
                get(CMS)
                    .q("resourceVersion", COMPACTED_RV)
                    .q("resourceVersionMatch", "NotOlderThan"),
            ],
        ),
        case(
            "list at a version: a future version times out",
            vec![
                create_cm("a"),
                get(CMS)
                    .q("resourceVersion", FUTURE_RV)
                    .q("resourceVersionMatch", "NotOlderThan"),
            ],
        ),
        case(
            "list at a version: Exact at a future version times out",
            vec![
                create_cm("a"),
                get(CMS)
                    .q("resourceVersion", FUTURE_RV)
                    .q("resourceVersionMatch", "Exact"),
            ],
        ),
        case(
            "list: options the server refuses, and the option each error names",
            vec![
                create_cm("a"),
                get(CMS).q("sendInitialEvents", "true"),
                get(CMS).q("sendInitialEvents", "false"),
                get(CMS)
                    .q("sendInitialEvents", "")
                    .q("resourceVersionMatch", "NotOlderThan"),
                get(CMS).q("timeoutSeconds", "soon"),
                get(CMS).q("timeoutSeconds", "-1"),
                get(CMS).q("limit", "many"),
                get(CMS).q("limit", ""),
                get(CMS).q("limit", "-1"),
                get(CMS).q("continue", "garbage"),
                get(CMS).q("limit", "1").q("continue", "garbage"),
                get(CMS).q("resourceVersion", "-1"),
                get(CMS).q("resourceVersion", "+1"),
                get(CMS).q("allowWatchBookmarks", "maybe"),
                get(CMS).q("labelSelector", "a=b=c"),
                get(CMS).q("labelSelector", "a>x"),
                get(CMS).q("labelSelector", "-a"),
                get(CMS).q("labelSelector", "a=b,"),
                get(CMS).q("fieldSelector", "metadata.name"),
                get(CMS).q("fieldSelector", "metadata.name in (a)"),
                get(PODS).q("fieldSelector", "spec.foo=x"),
            ],
        ),
        case(
            "delete-collection: list options the server refuses",
            vec![
                create_cm("a"),
                delete(CMS, None).q("sendInitialEvents", "true"),
                delete(CMS, None).q("timeoutSeconds", "soon"),
                delete(CMS, None).q("limit", "many"),
                delete(CMS, None).q("resourceVersionMatch", "Exact"),
                delete(CMS, None).q("resourceVersion", "abc"),
                delete(CMS, None)
                    .q("resourceVersion", "0")
                    .q("resourceVersionMatch", "Exact"),
                delete(CMS, None).q("labelSelector", "a=b=c"),
                get(CMS),
            ],
        ),
        case(
            "across namespaces: a namespaced collection is listed, not deleted or created",
            vec![
                delete("/api/v1/configmaps", None).q("labelSelector", "kclient-differential=none"),
                post("/api/v1/configmaps", cm("across", json!({}), json!({}))),
            ],
        ),
        case(
            "get: a named object's watch parameter is ignored",
            vec![
                create_cm("a"),
                get(&cm_path("a"))
                    .q("watch", "true")
                    .q("timeoutSeconds", "1"),
            ],
        ),
        case(
            "get: at a resourceVersion",
            vec![
                create_cm("a"),
                // At the create's version first: the server's watch cache waits until it has
                // seen that version, so the get at "0" (any version the cache holds) after it
                // finds the object. In the other order a busy server answered 404 (CI).
                get(&cm_path("a")).q("resourceVersion", "$rv:0"),
                get(&cm_path("a")).q("resourceVersion", "0"),
                get(&cm_path("a")).q("resourceVersion", "abc"),
                get(&cm_path("a")).q("resourceVersion", FUTURE_RV),
                get(&cm_path("nope")).q("resourceVersion", "abc"),
            ],
        ),
        case(
            "list at a version: invalid options",
            vec![
                create_cm("a"),
                create_cm("b"),
                get(CMS).q("resourceVersionMatch", "Exact"),
                get(CMS)
                    .q("resourceVersion", "0")
                    .q("resourceVersionMatch", "Exact"),
                get(CMS)
                    .q("resourceVersion", "1")
                    .q("resourceVersionMatch", "Sometime"),
                get(CMS).q("resourceVersion", "abc"),
                get(CMS).q("limit", "1"),
                get(CMS)
                    .q("limit", "1")
                    .q("continue", "$continue:6")
                    .q("resourceVersion", "$rv:0"),
                get(CMS)
                    .q("limit", "1")
                    .q("continue", "$continue:6")
                    .q("resourceVersionMatch", "NotOlderThan"),
                get(CMS)
                    .q("limit", "1")
                    .q("continue", "$continue:6")
                    .q("resourceVersion", "0"),
            ],
        ),
    ]
}

const PODS: &str = "/api/v1/namespaces/{ns}/pods";

/// A Pod, bound to `node` or left unscheduled. Its scheduler is one that does not exist, so
/// testenv's kube-scheduler leaves an unscheduled one alone, as the fake does.
fn pod(name: &str, node: Option<&str>) -> Step {
    let mut spec = json!({
        "containers": [{"name": "app", "image": "app:1"}],
        "schedulerName": "kclient-differential-none",
    });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    post(PODS, json!({"metadata": {"name": name}, "spec": spec})).names()
}

/// POST an Eviction of the Pod `name`, with `deleteOptions` if given.
fn evict(name: &str, delete_options: Option<Value>) -> Step {
    let mut eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name}});
    if let Some(options) = delete_options {
        eviction["deleteOptions"] = options;
    }
    post(&format!("{}/eviction", pod_path(name)), eviction)
}

/// A Pod on node-1 that a finalizer (`kclient.dev/hold`) keeps until [`release`].
fn held_pod(name: &str) -> Step {
    post(
        PODS,
        json!({"metadata": {"name": name, "finalizers": ["kclient.dev/hold"]},
            "spec": {"nodeName": "node-1", "schedulerName": "kclient-differential-none",
            "containers": [{"name": "app", "image": "app:1"}]}}),
    )
    .names()
}

/// Removes every finalizer of the object at `path` (a merge patch).
fn release(path: &str) -> Step {
    patch(path, MERGE, json!({"metadata": {"finalizers": null}}))
}

/// A time for fields that Go would otherwise write as `null` (the fake leaves them out).
const TIME: &str = "2020-01-02T03:04:05Z";

fn pod_path(name: &str) -> String {
    format!("{PODS}/{name}")
}

fn pod_cases() -> Vec<Case> {
    let three = || {
        vec![
            pod("a", Some("node-1")),
            pod("b", Some("node-2")),
            pod("c", None),
        ]
    };
    let with = |mut steps: Vec<Step>, more: Step| {
        steps.push(more);
        steps
    };
    vec![
        case(
            "pods: field selector spec.nodeName",
            with(
                three(),
                get(PODS).q("fieldSelector", "spec.nodeName=node-1").names(),
            ),
        ),
        case(
            "pods: field selector spec.nodeName= (unscheduled)",
            with(
                three(),
                get(PODS).q("fieldSelector", "spec.nodeName=").names(),
            ),
        ),
        case(
            "pods: field selector status.phase",
            with(
                three(),
                get(PODS).q("fieldSelector", "status.phase=Pending").names(),
            ),
        ),
        case(
            "pods: a field selector term with neither field nor value selects everything",
            with(three(), get(PODS).q("fieldSelector", "!=").names()),
        ),
        case(
            "pods: field selectors combined",
            with(
                three(),
                get(PODS)
                    .q(
                        "fieldSelector",
                        "status.phase!=Running,spec.nodeName!=node-2",
                    )
                    .names(),
            ),
        ),
        case(
            "pods: deleting an unscheduled Pod removes it at once",
            vec![
                pod("before", None),
                watch(PODS, json!({})).q("resourceVersion", "$rv:0"),
                pod("a", None),
                delete(&pod_path("a"), None).names(),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "pods: deleting a Pod on a node waits for its grace period",
            vec![
                pod("before", None),
                watch(PODS, json!({})).q("resourceVersion", "$rv:0"),
                pod("a", Some("node-1")),
                delete(&pod_path("a"), None).names(),
                get(&pod_path("a")).names(),
                // A longer or equal period changes nothing.
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 60}))).names(),
                // A shorter one moves the deadline.
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 10}))).names(),
                delete(&pod_path("a"), None)
                    .q("gracePeriodSeconds", "0")
                    .names(),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "pods: the grace period comes from the request, then the Pod",
            vec![
                pod("a", Some("node-1")),
                post(
                    PODS,
                    json!({"metadata": {"name": "b"}, "spec": {
                        "nodeName": "node-1", "terminationGracePeriodSeconds": 7,
                        "schedulerName": "kclient-differential-none",
                        "containers": [{"name": "app", "image": "app:1"}]}}),
                )
                .names(),
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 5}))).names(),
                delete(&pod_path("b"), None).names(),
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 0}))).names(),
                delete(&pod_path("b"), Some(json!({"gracePeriodSeconds": -3}))).names(),
            ],
        ),
        case(
            "pods/status: qosClass and observedGenerations left out are kept; qosClass is immutable",
            vec![
                pod("q", None),
                patch(
                    &format!("{}/status", pod_path("q")),
                    MERGE,
                    json!({"status": {"observedGeneration": 3, "conditions": [
                        {"type": "Ready", "status": "True", "observedGeneration": 2,
                            "lastProbeTime": TIME, "lastTransitionTime": TIME},
                        {"type": "Other", "status": "True", "observedGeneration": 1,
                            "lastProbeTime": TIME, "lastTransitionTime": TIME}]}}),
                ),
                patch(
                    &format!("{}/status", pod_path("q")),
                    MERGE,
                    json!({"status": {"qosClass": null, "observedGeneration": null,
                        "conditions": [
                            {"type": "New", "status": "False",
                                "lastProbeTime": TIME, "lastTransitionTime": TIME},
                            {"type": "Ready", "status": "False",
                                "lastProbeTime": TIME, "lastTransitionTime": TIME}]}}),
                ),
                patch(
                    &format!("{}/status", pod_path("q")),
                    MERGE,
                    json!({"status": {"qosClass": "Guaranteed"}}),
                ),
                patch(
                    &format!("{}/status", pod_path("q")),
                    MERGE,
                    json!({"status": {"observedGeneration": -1, "conditions": [
                        {"type": "Ready", "status": "False", "observedGeneration": -2,
                            "lastProbeTime": TIME, "lastTransitionTime": TIME}]}}),
                ),
                get(&pod_path("q")),
            ],
        ),
        case(
            "pods: qosClass compares amounts of CPU and memory, summed over the containers",
            [
                (
                    "text",
                    json!([{"limits": {"cpu": "1000m", "memory": "1024Mi"},
                    "requests": {"cpu": "1", "memory": "1Gi"}}]),
                    "Guaranteed",
                ),
                (
                    "storage",
                    json!([{"requests": {"ephemeral-storage": "1Gi"}}]),
                    "BestEffort",
                ),
                ("zero", json!([{"requests": {"cpu": "0"}}]), "BestEffort"),
                (
                    "two",
                    json!([{"limits": {"cpu": "1", "memory": "1Gi"}},
                    {"limits": {"cpu": "500m", "memory": "2Gi"}}]),
                    "Guaranteed",
                ),
                (
                    "unlimited",
                    json!([{"limits": {"cpu": "1", "memory": "1Gi"}}, {}]),
                    "Burstable",
                ),
                ("cpu-only", json!([{"limits": {"cpu": "1"}}]), "Burstable"),
            ]
            .into_iter()
            .flat_map(|(name, resources, class)| {
                let containers: Vec<Value> = resources
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(
                        |(i, r)| json!({"name": format!("c{i}"), "image": "app:1", "resources": r}),
                    )
                    .collect();
                [
                    post(
                        PODS,
                        json!({"metadata": {"name": name}, "spec": {
                            "schedulerName": "kclient-differential-none",
                            "containers": containers}}),
                    )
                    .names(),
                    patch(
                        &pod_path(name),
                        JSON_PATCH,
                        json!([{"op": "test", "path": "/status/qosClass", "value": class}]),
                    )
                    .outcome(),
                ]
            })
            .collect(),
        ),
        case(
            "pods: a Pod in its grace period outlasts its last finalizer",
            vec![
                held_pod("a"),
                delete(&pod_path("a"), None).names(),
                patch(
                    &format!("{}/status", pod_path("a")),
                    MERGE,
                    json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
                )
                .names(),
                // With no finalizer left, the Pod still waits for its kubelet.
                release(&pod_path("a")).names(),
                get(&pod_path("a")).names(),
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 0}))).names(),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "pods: a Pod with a finalizer deleted at once stays until the finalizer goes",
            vec![
                held_pod("a"),
                delete(&pod_path("a"), Some(json!({"gracePeriodSeconds": 0}))).names(),
                get(&pod_path("a")).names(),
                release(&pod_path("a")).names(),
                get(&pod_path("a")).names(),
            ],
        ),
        case(
            "delete: a ServiceAccount and a Service answer with the object",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts",
                    json!({"metadata": {"name": "robot"}}),
                ),
                delete("/api/v1/namespaces/{ns}/serviceaccounts/robot", None),
                post(
                    "/api/v1/namespaces/{ns}/services",
                    json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}),
                )
                .names(),
                delete("/api/v1/namespaces/{ns}/services/web", None).names(),
            ],
        ),
        case(
            "pods: an unsupported field selector",
            with(
                three(),
                get(PODS).q("fieldSelector", "spec.hostname=x").names(),
            ),
        ),
    ]
}

const ACCEPT_METADATA: &str = kclient_apimachinery::meta::ACCEPT_METADATA;
const ACCEPT_METADATA_LIST: &str = kclient_apimachinery::meta::ACCEPT_METADATA_LIST;

fn metadata_cases() -> Vec<Case> {
    vec![
        case(
            "metadata: get as PartialObjectMetadata",
            vec![
                create_labeled("a", json!({"app": "web"})),
                get(&cm_path("a")).h("Accept", ACCEPT_METADATA),
            ],
        ),
        case(
            "metadata: list as PartialObjectMetadataList",
            vec![
                create_labeled("a", json!({"app": "web"})),
                create_widget("w"),
                get(CMS).h("Accept", ACCEPT_METADATA_LIST),
                get(WIDGETS).h("Accept", ACCEPT_METADATA_LIST),
            ],
        ),
        case(
            "metadata: watch as PartialObjectMetadata",
            vec![
                create_cm("before"),
                watch(CMS, json!({}))
                    .q("resourceVersion", "$rv:0")
                    .h("Accept", ACCEPT_METADATA),
                create_cm("a"),
                delete(&cm_path("a"), None),
            ],
        ),
        case(
            "metadata: a missing object is NotFound",
            vec![get(&cm_path("nope")).h("Accept", ACCEPT_METADATA)],
        ),
    ]
}

fn dry_run_cases() -> Vec<Case> {
    vec![
        case(
            "dry run: a create stores nothing",
            vec![create_cm("a").q("dryRun", "All"), get(&cm_path("a"))],
        ),
        case(
            "dry run: an update stores nothing",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a"}, "data": {"k": "dry"}}),
                )
                .q("dryRun", "All"),
                get(&cm_path("a")),
            ],
        ),
        case(
            "dry run: a patch stores nothing",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "dry"}})).q("dryRun", "All"),
                get(&cm_path("a")),
            ],
        ),
        case(
            "dry run: a delete keeps the object",
            vec![
                create_cm("a"),
                delete(&cm_path("a"), None).q("dryRun", "All"),
                get(&cm_path("a")),
            ],
        ),
        case(
            "dry run: a create still fails as the create would",
            vec![create_cm("a"), create_cm("a").q("dryRun", "All")],
        ),
    ]
}

fn create_cases() -> Vec<Case> {
    vec![
        case("create: a configmap", vec![create_cm("a")]),
        case(
            "create: generateName",
            vec![post(
                CMS,
                json!({"metadata": {"generateName": "gen-"}, "data": {}}),
            )],
        ),
        case(
            "create: a long generateName is cut to 58 characters",
            vec![post(
                CMS,
                json!({"metadata": {"generateName": "g".repeat(70)}, "data": {}}),
            )],
        ),
        case("create: names as each kind's rule has them", {
            let rbac = "/apis/rbac.authorization.k8s.io/v1";
            let services = "/api/v1/namespaces/{ns}/services";
            let service =
                |name: &str| json!({"metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}});
            vec![
                // Path segments: colons, capitals, spaces; not '%'.
                post(
                    &format!("{rbac}/namespaces/{{ns}}/roles"),
                    json!({"metadata": {"name": "system:controller:replicaset-controller"},
                            "rules": rules()}),
                ),
                post(
                    &format!("{rbac}/clusterroles"),
                    json!({"metadata": {"name": "system:{ns}:Reader"}, "rules": rules()}),
                ),
                delete(&format!("{rbac}/clusterroles/system:{{ns}}:Reader"), None),
                post(
                    &format!("{rbac}/namespaces/{{ns}}/rolebindings"),
                    json!({"metadata": {"name": "system:a%b"},
                            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                "name": "r"}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/events",
                    json!({"metadata": {"name": "kubelet:Pulled"},
                            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"}}),
                )
                .names(),
                post(
                    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
                    json!({"metadata": {"name": "budget:a"}}),
                )
                .names(),
                // Subdomains: not colons.
                post(CMS, cm("a:b", json!({}), json!({}))),
                post(CMS, cm("a.b", json!({}), json!({}))),
                // Labels: no dots, at most 63 characters.
                post(
                    "/api/v1/namespaces",
                    json!({"metadata": {"name": "{ns}.a"}}),
                ),
                post(services, service("web.a")),
                post(services, service("1web")),
                post(services, service(&"s".repeat(64))),
                post(
                    "/apis/apps/v1/namespaces/{ns}/statefulsets",
                    json!({"metadata": {"name": "db.a"}, "spec": {"serviceName": "db",
                            "replicas": 0, "selector": {"matchLabels": {"app": "db"}},
                            "template": {"metadata": {"labels": {"app": "db"}},
                                "spec": {"containers": [{"name": "db", "image": "db:1"}]}}}}),
                ),
                // CronJobs: at most 52 characters.
                post(
                    "/apis/batch/v1/namespaces/{ns}/cronjobs",
                    json!({"metadata": {"name": "c".repeat(53)}, "spec": {
                            "schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                                "spec": {"restartPolicy": "Never",
                                    "containers": [{"name": "c", "image": "c:1"}]}}}}}}),
                ),
            ]
        }),
        case(
            "create: a body with a resourceVersion is refused",
            vec![
                create_cm("a"),
                // An object read back and created again under its own name or another.
                post(
                    CMS,
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0"}}),
                ),
                post(
                    CMS,
                    json!({"metadata": {"name": "b", "resourceVersion": "$rv:0"}}),
                ),
                post(
                    CMS,
                    json!({"metadata": {"name": "c", "resourceVersion": "0"}}),
                ),
                get(CMS),
            ],
        ),
        case(
            "create: a resourceVersion that the storage cannot parse is ignored",
            // The storage refuses a body whose resourceVersion parses as a non-zero unsigned
            // number (Go's `strconv.ParseUint`: digits only); anything else is dropped.
            [
                "+5",
                "abc",
                "-1",
                " 5",
                "00",
                "18446744073709551616",
                "",
                "5",
            ]
            .iter()
            .enumerate()
            .map(|(i, rv)| {
                post(
                    CMS,
                    json!({"metadata": {"name": format!("rv-{i}"), "resourceVersion": rv}}),
                )
            })
            .chain([get(CMS)])
            .collect(),
        ),
        case(
            "create: labels, annotations and finalizers are validated",
            vec![
                create_labeled("long-value", json!({"x": "a".repeat(64)})),
                create_labeled("bad-key", json!({"bad key": "1"})),
                create_labeled("bad-value", json!({"x": "-bad"})),
                create_labeled("slash-value", json!({"x": "a/b"})),
                create_labeled("bad-prefix", json!({"Bad.Prefix/x": "1"})),
                post(
                    CMS,
                    json!({"metadata": {"name": "bad-annotation", "annotations": {"bad key": "1"}}}),
                ),
                post(
                    CMS,
                    json!({"metadata": {"name": "capital-annotation",
                        "annotations": {"Example.com/Key": "any value / at all"}}}),
                ),
                post(
                    CMS,
                    json!({"metadata": {"name": "bad-finalizer", "finalizers": ["Bad Final/x"]}}),
                ),
                create_labeled(
                    "valid",
                    json!({"app.kubernetes.io/name": "web-1.2_x", "empty": ""}),
                ),
                patch(
                    &cm_path("valid"),
                    MERGE,
                    json!({"metadata": {"labels": {"x": "a/b"}}}),
                ),
                put(
                    &cm_path("valid"),
                    json!({"metadata": {"name": "valid", "annotations": {"a b": "1"}}}),
                ),
                get(CMS),
            ],
        ),
        case(
            "create: a duplicate is AlreadyExists",
            vec![create_cm("a"), create_cm("a")],
        ),
        case(
            "create: no name nor generateName is Invalid",
            vec![post(CMS, json!({"metadata": {}, "data": {}}))],
        ),
        case(
            "create: an invalid name is Invalid",
            vec![post(CMS, json!({"metadata": {"name": "Not_Valid"}}))],
        ),
        case(
            "create: the body's namespace against the URL's",
            vec![post(
                CMS,
                json!({"metadata": {"name": "a", "namespace": "elsewhere"}}),
            )],
        ),
        case(
            "create: in a namespace that does not exist",
            vec![post(
                "/api/v1/namespaces/{ns}-missing/configmaps",
                json!({"metadata": {"name": "a"}}),
            )],
        ),
        case(
            "create: a body of another kind",
            vec![post(
                CMS,
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}),
            )],
        ),
        case(
            "create: a body of another apiVersion",
            vec![post(
                CMS,
                json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            )],
        ),
        case(
            "create: a body without apiVersion and kind",
            vec![post(
                CMS,
                json!({"metadata": {"name": "a"}, "data": {"x": "y"}}),
            )],
        ),
        case(
            "create: a secret gets type Opaque",
            vec![post(
                "/api/v1/namespaces/{ns}/secrets",
                json!({"metadata": {"name": "s"}, "data": {"k": "dg=="}}),
            )],
        ),
        case(
            "create: a custom resource starts at generation 1",
            vec![create_widget("w")],
        ),
        case(
            "create: a custom resource's status is dropped",
            vec![post(
                WIDGETS,
                json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                    "metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"ready": true}}),
            )],
        ),
        case(
            "create: labels, annotations and finalizers are kept",
            vec![post(
                CMS,
                json!({"metadata": {"name": "a", "labels": {"x": "1"},
                    "annotations": {"note": "n"}, "finalizers": ["example.com/f"]}}),
            )],
        ),
        case(
            "create: a cluster-scoped namespace",
            vec![
                post(
                    "/api/v1/namespaces",
                    json!({"metadata": {"name": "{ns}-extra", "labels": {"kclient.dev/test": "true"}}}),
                ),
                delete("/api/v1/namespaces/{ns}-extra", None),
            ],
        ),
    ]
}

fn get_and_list_cases() -> Vec<Case> {
    let three = || {
        vec![
            create_labeled("a", json!({"app": "web", "tier": "front"})),
            create_labeled("b", json!({"app": "db", "tier": "back"})),
            create_labeled("c", json!({"app": "web"})),
        ]
    };
    let with = |mut steps: Vec<Step>, more: Vec<Step>| {
        steps.extend(more);
        steps
    };
    vec![
        case(
            "list: a Job's status.successful is computed, 0 when unset",
            {
                let jobs = "/apis/batch/v1/namespaces/{ns}/jobs";
                vec![
                    post(
                        jobs,
                        json!({"metadata": {"name": "once"}, "spec": {"suspend": true,
                            "template": {"spec": {"restartPolicy": "Never",
                                "schedulerName": "kclient-differential-none",
                                "containers": [{"name": "once", "image": "once:1"}]}}}}),
                    )
                    .names(),
                    get(jobs).q("fieldSelector", "status.successful=0").names(),
                    get(jobs).q("fieldSelector", "status.successful=1").names(),
                    get(jobs).q("fieldSelector", "status.succeeded=0").names(),
                ]
            },
        ),
        case("list: core Events by source, else reportingComponent", {
            let core = "/api/v1/namespaces/{ns}/events";
            let regarding = json!({"kind": "Pod", "name": "p", "namespace": "{ns}"});
            vec![
                post(
                    core,
                    json!({"metadata": {"name": "pulled"}, "involvedObject": regarding,
                            "reason": "Pulled", "type": "Normal",
                            "source": {"component": "kubelet", "host": "node-1"}}),
                )
                .names(),
                post(
                    core,
                    json!({"metadata": {"name": "reported"}, "involvedObject": regarding,
                            "reason": "Synced", "type": "Normal", "reportingComponent": "ctrl",
                            "reportingInstance": "ctrl-1"}),
                )
                .names(),
                get(core).q("fieldSelector", "source=kubelet").names(),
                get(core).q("fieldSelector", "source=ctrl").names(),
                get(core)
                    .q("fieldSelector", "reportingComponent=ctrl")
                    .names(),
                get(core).q("fieldSelector", "regarding.name=p").names(),
            ]
        }),
        // In a case of its own: the fake keeps the two APIs' Events apart (see
        // differences.rs), the server shows core Events through events.k8s.io too.
        case("list: events.k8s.io Events by their own field set", {
            let events = "/apis/events.k8s.io/v1/namespaces/{ns}/events";
            let regarding = json!({"kind": "Pod", "name": "p", "namespace": "{ns}"});
            vec![
                post(
                    events,
                    json!({"metadata": {"name": "new"}, "regarding": regarding,
                            "eventTime": "2024-01-01T00:00:00.000000Z", "action": "Sync",
                            "reason": "Synced", "type": "Normal",
                            "reportingController": "ctrl", "reportingInstance": "ctrl-1"}),
                )
                .names(),
                get(events).q("fieldSelector", "regarding.name=p").names(),
                get(events)
                    .q(
                        "fieldSelector",
                        "regarding.kind=Pod,reportingController=ctrl",
                    )
                    .names(),
                get(events).q("fieldSelector", "reason=Other").names(),
                get(events).q("fieldSelector", "source=ctrl").names(),
                get(events)
                    .q("fieldSelector", "involvedObject.name=p")
                    .names(),
            ]
        }),
        case("list: a CRD's selectableFields", {
            let sprockets = "/apis/diff.kclient.dev/v1/namespaces/{ns}/sprockets";
            let sprocket = |name: &str, color: &str, size: i64| {
                json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Sprocket",
                        "metadata": {"name": name}, "spec": {"color": color, "size": size}})
            };
            vec![
                post(sprockets, sprocket("red", "red", 1)),
                post(sprockets, sprocket("blue", "blue", 2)),
                get(sprockets).q("fieldSelector", "spec.color=red").names(),
                get(sprockets).q("fieldSelector", "spec.color!=red").names(),
                get(sprockets).q("fieldSelector", "spec.size=2").names(),
                get(sprockets).q("fieldSelector", "spec.other=x").names(),
            ]
        }),
        case("list: across namespaces in etcd key order, pages too", {
            let other = "/api/v1/namespaces/{ns}-a/configmaps";
            let labels = json!({"case": "{ns}"});
            let all = || get("/api/v1/configmaps").q("labelSelector", "case={ns}");
            vec![
                post(
                    "/api/v1/namespaces",
                    json!({"metadata": {"name": "{ns}-a"}}),
                )
                .names(),
                create_labeled("x", labels.clone()),
                post(other, cm("y", labels.clone(), json!({}))),
                post(other, cm("a", labels, json!({}))),
                // /registry/configmaps/NS-a/... sorts before /registry/configmaps/NS/x.
                all(),
                all().q("limit", "2"),
                all().q("continue", "$continue:5"),
                all().q("limit", "1").q("resourceVersion", "0"),
                delete("/api/v1/namespaces/{ns}-a", None).outcome(),
            ]
        }),
        case("get: an object", vec![create_cm("a"), get(&cm_path("a"))]),
        case(
            "get: a missing object is NotFound",
            vec![get(&cm_path("nope"))],
        ),
        case(
            "get: a missing custom resource is NotFound",
            vec![get(&w_path("nope"))],
        ),
        case(
            "get: the namespace itself",
            vec![get("/api/v1/namespaces/{ns}")],
        ),
        case(
            "list: every object, in name order",
            with(three(), vec![get(CMS)]),
        ),
        case(
            "list: label selector equality",
            with(three(), vec![get(CMS).q("labelSelector", "app=web")]),
        ),
        case(
            "list: label selector in",
            with(
                three(),
                vec![get(CMS).q("labelSelector", "app in (db, cache)")],
            ),
        ),
        case(
            "list: label selector notin and exists",
            with(
                three(),
                vec![get(CMS).q("labelSelector", "app notin (db),tier")],
            ),
        ),
        case(
            "list: label selector does not exist",
            with(three(), vec![get(CMS).q("labelSelector", "!tier")]),
        ),
        case(
            "list: label selector inequality",
            with(three(), vec![get(CMS).q("labelSelector", "app!=web")]),
        ),
        case(
            "list: an invalid label selector is BadRequest",
            vec![get(CMS).q("labelSelector", "app in (")],
        ),
        case(
            "list: field selector metadata.name",
            with(
                three(),
                vec![get(CMS).q("fieldSelector", "metadata.name=b")],
            ),
        ),
        case(
            "list: field selector metadata.name!=",
            with(
                three(),
                vec![get(CMS).q("fieldSelector", "metadata.name!=b")],
            ),
        ),
        case(
            "list: field selector metadata.namespace",
            with(
                three(),
                vec![get(CMS).q("fieldSelector", "metadata.namespace={ns}")],
            ),
        ),
        case(
            "list: an unsupported field selector is BadRequest",
            vec![get(CMS).q("fieldSelector", "data.k=v")],
        ),
        case(
            "list: label and field selectors together",
            with(
                three(),
                vec![
                    get(CMS)
                        .q("labelSelector", "app=web")
                        .q("fieldSelector", "metadata.name!=a"),
                ],
            ),
        ),
        case(
            "list: limit and continue",
            with(
                three(),
                vec![
                    get(CMS).q("limit", "2"),
                    // The continue token is not comparable across servers; the second page
                    // is read with a selector that starts after "b".
                    get(CMS)
                        .q("limit", "2")
                        .q("fieldSelector", "metadata.name!=a"),
                ],
            ),
        ),
        case(
            "list: continue pages over the first page's snapshot",
            with(
                three(),
                vec![
                    get(CMS).q("limit", "1"),
                    delete(&cm_path("b"), None),
                    create_cm("d"),
                    get(CMS).q("limit", "1").q("continue", "$continue:3"),
                    get(CMS).q("limit", "1").q("continue", "$continue:6"),
                    get(CMS).q("limit", "1").q("continue", "$continue:3"),
                ],
            ),
        ),
        case(
            "list: continue with a label selector",
            with(
                three(),
                vec![
                    get(CMS).q("limit", "1").q("labelSelector", "app=web"),
                    get(CMS)
                        .q("limit", "1")
                        .q("labelSelector", "app=web")
                        .q("continue", "$continue:3"),
                ],
            ),
        ),
        case(
            "list: limit with a selector has no remainingItemCount",
            with(
                three(),
                vec![get(CMS).q("limit", "1").q("labelSelector", "app=web")],
            ),
        ),
        case(
            "list: secrets by type",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/secrets",
                    json!({"metadata": {"name": "opaque"}}),
                ),
                post(
                    "/api/v1/namespaces/{ns}/secrets",
                    json!({"metadata": {"name": "tls"}, "type": "example.com/other"}),
                ),
                get("/api/v1/namespaces/{ns}/secrets").q("fieldSelector", "type=Opaque"),
            ],
        ),
        case(
            "list: custom resource items carry apiVersion and kind",
            vec![create_widget("a"), create_widget("b"), get(WIDGETS)],
        ),
        case("list: an empty list", vec![get(CMS)]),
    ]
}

fn update_cases() -> Vec<Case> {
    vec![
        case(
            "update: changes data and the resourceVersion",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0"}, "data": {"k": "w"}}),
                ),
            ],
        ),
        case(
            "update: a stale resourceVersion is a Conflict",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0"}, "data": {"k": "w"}}),
                ),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0"}, "data": {"k": "x"}}),
                ),
            ],
        ),
        case(
            "update: another uid in the body is a Conflict, in a patch Invalid",
            vec![
                create_cm("a"),
                // Without a resourceVersion, the uid is still a precondition.
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "uid": OTHER_UID}, "data": {"k": "u"}}),
                ),
                // The uid is checked before the resourceVersion.
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "uid": OTHER_UID, "resourceVersion": "1"},
                        "data": {"k": "u"}}),
                ),
                get(&cm_path("a")),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"uid": OTHER_UID}}),
                ),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "uid": "$uid:0"}, "data": {"k": "u"}}),
                ),
            ],
        ),
        case(
            "update: a PUT creates the kinds whose strategy allows create on update",
            {
                let lease = |name: &str, extra: Value| {
                    let mut metadata = json!({"name": name});
                    if let (Some(m), Some(e)) = (metadata.as_object_mut(), extra.as_object()) {
                        m.extend(e.clone());
                    }
                    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": metadata, "spec": {"holderIdentity": "me"}})
                };
                let rbac = "/apis/rbac.authorization.k8s.io/v1";
                vec![
                    put(&format!("{LEASES}/lock"), lease("lock", json!({}))),
                    // The resourceVersion of a created object is ignored.
                    put(
                        &format!("{LEASES}/versioned"),
                        lease("versioned", json!({"resourceVersion": "1"})),
                    ),
                    // A uid is a precondition on the empty object.
                    put(
                        &format!("{LEASES}/uid"),
                        lease("uid", json!({"uid": OTHER_UID})),
                    ),
                    put(&format!("{LEASES}/dry"), lease("dry", json!({}))).q("dryRun", "All"),
                    get(&format!("{LEASES}/dry")),
                    // Existing now: an update (a Lease's needs a resourceVersion).
                    put(&format!("{LEASES}/lock"), lease("lock", json!({}))),
                    put(
                        &format!("{LEASES}/lock"),
                        lease("lock", json!({"resourceVersion": "$rv:0"})),
                    ),
                    put(
                        "/api/v1/namespaces/{ns}/endpoints/ep",
                        json!({"metadata": {"name": "ep"}}),
                    ),
                    put(
                        &format!("{rbac}/namespaces/{{ns}}/roles/reader"),
                        json!({"metadata": {"name": "reader"}, "rules": rules()}),
                    ),
                    put(
                        &format!("{rbac}/clusterroles/{{ns}}-reader"),
                        json!({"metadata": {"name": "{ns}-reader"}, "rules": rules()}),
                    ),
                    delete(&format!("{rbac}/clusterroles/{{ns}}-reader"), None),
                    // Kinds without it answer 404.
                    put(&cm_path("missing"), cm("missing", json!({}), json!({}))),
                    put(&w_path("missing"), widget("missing", json!({}))),
                ]
            },
        ),
        case(
            "update: a built-in without resourceVersion is unconditional",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a"}, "data": {"k": "u"}}),
                ),
            ],
        ),
        case(
            "update: admission policies and volume attachments need a resourceVersion",
            {
                let policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
                let policy = json!({"metadata": {"name": "{ns}-policy"}, "spec": {
                    "validations": [{"expression": "true"}],
                    "matchConstraints": {"resourceRules": [{"apiGroups": ["example.com"],
                        "apiVersions": ["v1"], "operations": ["CREATE"],
                        "resources": ["things"]}]}}});
                let attachments = "/apis/storage.k8s.io/v1/volumeattachments";
                let attachment = json!({"metadata": {"name": "{ns}-attachment"}, "spec": {
                    "attacher": "driver.example.com", "nodeName": "node-1",
                    "source": {"persistentVolumeName": "pv"}}});
                vec![
                    post(policies, policy.clone()).names(),
                    put(&format!("{policies}/{{ns}}-policy"), policy),
                    delete(&format!("{policies}/{{ns}}-policy"), None).outcome(),
                    post(attachments, attachment.clone()).names(),
                    put(&format!("{attachments}/{{ns}}-attachment"), attachment),
                    delete(&format!("{attachments}/{{ns}}-attachment"), None).outcome(),
                ]
            },
        ),
        case(
            "update: a custom resource without resourceVersion is Invalid",
            vec![
                create_widget("w"),
                put(&w_path("w"), widget("w", json!({"size": 2}))),
            ],
        ),
        case(
            "update: the body's name against the URL's",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "b"}, "data": {}}),
                ),
            ],
        ),
        case(
            "update: a missing object is NotFound",
            vec![put(
                &cm_path("nope"),
                json!({"metadata": {"name": "nope"}, "data": {}}),
            )],
        ),
        case(
            "update: a no-op keeps the resourceVersion",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0"}, "data": {"k": "v"}}),
                ),
                get(&cm_path("a")),
            ],
        ),
        case(
            "update: uid and creationTimestamp cannot change",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "resourceVersion": "$rv:0",
                        "creationTimestamp": "2001-01-01T00:00:00Z"}, "data": {"k": "2"}}),
                ),
            ],
        ),
        case(
            "update: the deletion fields may only be set by a delete",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "deletionTimestamp": "2024-01-01T00:00:00Z"}}),
                ),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}}),
                ),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a", "deletionGracePeriodSeconds": 5}}),
                ),
                get(&cm_path("a")),
                with_finalizer("b"),
                delete(&cm_path("b"), None),
                patch(
                    &cm_path("b"),
                    MERGE,
                    json!({"metadata": {"deletionGracePeriodSeconds": 5}}),
                ),
            ],
        ),
        case(
            "update: a spec change bumps a custom resource's generation",
            vec![
                create_widget("w"),
                put(
                    &w_path("w"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0"}, "spec": {"size": 2}}),
                ),
            ],
        ),
        case(
            "update: a status change bumps the generation without a status subresource",
            vec![
                post(SPROCKETS, sprocket("s")),
                patch(
                    &format!("{SPROCKETS}/s"),
                    MERGE,
                    json!({"status": {"ready": true}}),
                ),
                put(&format!("{SPROCKETS}/s/status"), sprocket("s")),
            ],
        ),
        case(
            "update: a label change keeps a custom resource's generation",
            vec![
                create_widget("w"),
                put(
                    &w_path("w"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0", "labels": {"l": "1"}},
                        "spec": {"size": 1}}),
                ),
            ],
        ),
        case(
            "update: the main endpoint ignores status",
            vec![
                create_widget("w"),
                put(
                    &w_path("w"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0"},
                        "spec": {"size": 1}, "status": {"ready": true}}),
                ),
            ],
        ),
        case(
            "status: an update of the status subresource",
            vec![
                create_widget("w"),
                put(
                    &format!("{}/status", w_path("w")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0"},
                        "spec": {"size": 1}, "status": {"ready": true}}),
                ),
                get(&w_path("w")),
            ],
        ),
        case(
            "status: the status subresource ignores spec and labels",
            vec![
                create_widget("w"),
                put(
                    &format!("{}/status", w_path("w")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0", "labels": {"x": "y"}},
                        "spec": {"size": 9}, "status": {"ready": false}}),
                ),
            ],
        ),
        case(
            "status: a stale status update is a Conflict",
            vec![
                create_widget("w"),
                put(
                    &format!("{}/status", w_path("w")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0"}, "status": {"n": 1}}),
                ),
                put(
                    &format!("{}/status", w_path("w")),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "resourceVersion": "$rv:0"}, "status": {"n": 2}}),
                ),
            ],
        ),
        case(
            "status: a built-in's status write takes most metadata from the body",
            {
                // Labels, annotations, finalizers and owners written through each kind's
                // status subresource: Services and PodDisruptionBudgets take them all, Pods
                // all but their owners, Deployments all but their labels.
                let metadata = |name: &str| {
                    json!({"name": name, "labels": {"written": "by-status"},
                        "annotations": {"example.com/note": "by-status"},
                        "finalizers": ["example.com/hold"],
                        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                            "name": "owner", "uid": "$uid:0"}]})
                };
                let services = "/api/v1/namespaces/{ns}/services";
                let service_spec = json!({"clusterIP": "None", "selector": {"app": "web"},
                    "ports": [{"port": 80}]});
                let pdbs = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets";
                let pdb_spec =
                    json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}});
                let deployments = "/apis/apps/v1/namespaces/{ns}/deployments";
                let pod_spec = json!({"schedulerName": "kclient-differential-none",
                    "containers": [{"name": "app", "image": "app:1"}]});
                let release = |path: String| {
                    patch(&path, MERGE, json!({"metadata": {"finalizers": null}})).outcome()
                };
                vec![
                    create_cm("owner"),
                    post(
                        services,
                        json!({"metadata": {"name": "s"}, "spec": service_spec}),
                    ),
                    put(
                        &format!("{services}/s/status"),
                        json!({"metadata": metadata("s"), "spec": service_spec,
                            "status": {"loadBalancer": {}}}),
                    ),
                    post(pdbs, json!({"metadata": {"name": "b"}, "spec": pdb_spec})).names(),
                    put(
                        &format!("{pdbs}/b/status"),
                        json!({"metadata": {"resourceVersion": "$rv:3"}, "spec": pdb_spec,
                            "status": {"currentHealthy": 0, "desiredHealthy": 1,
                                "disruptionsAllowed": 0, "expectedPods": 0,
                                "observedGeneration": 1}}),
                    ),
                    post(PODS, json!({"metadata": {"name": "p"}, "spec": pod_spec})).names(),
                    put(
                        &format!("{PODS}/p/status"),
                        json!({"metadata": metadata("p"), "spec": pod_spec,
                            "status": {"phase": "Pending", "qosClass": "BestEffort"}}),
                    ),
                    workload(deployments, "Deployment"),
                    put(
                        &format!("{deployments}/web/status"),
                        json!({"metadata": metadata("web"), "spec": {"selector":
                            {"matchLabels": {"app": "web"}}, "template": {"metadata":
                            {"labels": {"app": "web"}}, "spec": pod_spec}},
                            "status": {"replicas": 0}}),
                    )
                    .metadata(),
                    release(format!("{services}/s")),
                    release(format!("{pdbs}/b")),
                    release(format!("{PODS}/p")),
                    release(format!("{deployments}/web")),
                ]
            },
        ),
        case(
            "status: configmaps have no status subresource",
            vec![
                create_cm("a"),
                put(
                    &format!("{}/status", cm_path("a")),
                    cm("a", json!({}), json!({})),
                ),
            ],
        ),
    ]
}

fn with_finalizer(name: &str) -> Step {
    post(
        CMS,
        json!({"metadata": {"name": name, "finalizers": ["example.com/hold"]}, "data": {}}),
    )
}

const JOBS: &str = "/apis/batch/v1/namespaces/{ns}/jobs";
const RCS: &str = "/api/v1/namespaces/{ns}/replicationcontrollers";

/// A Job that testenv's job controller leaves alone (it is managed by another controller).
fn job(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"managedBy": "example.com/none",
        "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "app", "image": "app:1"}]}}}})
}

fn delete_cases() -> Vec<Case> {
    vec![
        case(
            "delete: an object, then it is gone",
            vec![
                create_cm("a"),
                delete(&cm_path("a"), None),
                get(&cm_path("a")),
            ],
        ),
        case(
            "delete: a missing object is NotFound",
            vec![delete(&cm_path("nope"), None)],
        ),
        case(
            "delete: invalid options are refused before the object is looked up",
            vec![
                create_cm("a"),
                delete(&cm_path("a"), Some(json!({"propagationPolicy": "Bogus"}))),
                delete(
                    &cm_path("a"),
                    Some(json!({"propagationPolicy": "Orphan", "orphanDependents": false})),
                ),
                delete(
                    &cm_path("nope"),
                    Some(json!({"propagationPolicy": "Bogus"})),
                ),
                delete(&cm_path("a"), None).q("propagationPolicy", "Bogus"),
                get(&cm_path("a")).names(),
            ],
        ),
        case(
            "delete: a uid precondition that fails",
            vec![
                create_cm("a"),
                delete(
                    &cm_path("a"),
                    Some(json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})),
                ),
            ],
        ),
        case(
            "delete: a resourceVersion precondition that fails",
            vec![
                create_cm("a"),
                put(
                    &cm_path("a"),
                    json!({"metadata": {"name": "a"}, "data": {"k": "2"}}),
                ),
                delete(
                    &cm_path("a"),
                    Some(json!({"preconditions": {"resourceVersion": "$rv:0"}})),
                ),
            ],
        ),
        case(
            "delete: preconditions that hold",
            vec![
                create_cm("a"),
                delete(
                    &cm_path("a"),
                    Some(json!({"preconditions": {"uid": "$uid:0", "resourceVersion": "$rv:0"}})),
                ),
                get(&cm_path("a")),
            ],
        ),
        case(
            "delete: a finalizer holds the object with a deletionTimestamp",
            vec![
                with_finalizer("a"),
                delete(&cm_path("a"), None),
                get(&cm_path("a")),
            ],
        ),
        case(
            "delete: a finalizer's deletionTimestamp bumps a custom resource's generation",
            vec![
                post(
                    WIDGETS,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w", "finalizers": ["kclient.dev/hold"]},
                        "spec": {"size": 1}}),
                ),
                delete(&w_path("w"), None),
                delete(&w_path("w"), None),
                patch(
                    &w_path("w"),
                    MERGE,
                    json!({"metadata": {"finalizers": null}}),
                ),
            ],
        ),
        case(
            "delete: removing the last finalizer deletes",
            vec![
                with_finalizer("a"),
                delete(&cm_path("a"), None),
                release(&cm_path("a")),
                get(&cm_path("a")),
            ],
        ),
        case(
            "delete: deleting again while finalizers remain",
            vec![
                with_finalizer("a"),
                delete(&cm_path("a"), None),
                delete(&cm_path("a"), None),
            ],
        ),
        case(
            "delete: no new finalizers on an object being deleted",
            vec![
                with_finalizer("a"),
                delete(&cm_path("a"), None),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
                ),
            ],
        ),
        case(
            "delete: Orphan adds the orphan finalizer",
            vec![
                with_finalizer("a"),
                delete(&cm_path("a"), Some(json!({"propagationPolicy": "Orphan"}))),
            ],
        ),
        case(
            "delete: Foreground adds the foregroundDeletion finalizer",
            vec![
                with_finalizer("a"),
                delete(
                    &cm_path("a"),
                    Some(json!({"propagationPolicy": "Foreground"})),
                ),
            ],
        ),
        case(
            "delete: a Job or a ReplicationController orphans its dependents unless told",
            vec![
                post(JOBS, job("orphaned")).names(),
                delete(&format!("{JOBS}/orphaned"), None).names(),
                post(JOBS, job("collected")).names(),
                delete(
                    &format!("{JOBS}/collected"),
                    Some(json!({"propagationPolicy": "Background"})),
                )
                .names(),
                post(JOBS, job("not-orphaned")).names(),
                delete(
                    &format!("{JOBS}/not-orphaned"),
                    Some(json!({"orphanDependents": false})),
                )
                .names(),
                post(
                    RCS,
                    json!({"metadata": {"name": "r"}, "spec": {"replicas": 0,
                        "selector": {"app": "r"}, "template": {"metadata": {"labels": {"app": "r"}},
                        "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}),
                )
                .names(),
                delete(&format!("{RCS}/r"), None).names(),
            ],
        ),
        case(
            "delete: an Event takes no garbage collector finalizer",
            vec![
                post(
                    "/api/v1/namespaces/{ns}/events",
                    json!({"metadata": {"name": "core"}, "reason": "Seen", "message": "m",
                        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"}}),
                )
                .names(),
                delete(
                    "/api/v1/namespaces/{ns}/events/core",
                    Some(json!({"propagationPolicy": "Foreground"})),
                )
                .names(),
                post(
                    "/apis/events.k8s.io/v1/namespaces/{ns}/events",
                    json!({"metadata": {"name": "new"}, "eventTime": "2024-01-01T00:00:00.000000Z",
                        "reportingController": "example.com/c", "reportingInstance": "i",
                        "action": "Act", "type": "Normal", "reason": "Seen", "note": "m",
                        "regarding": {"kind": "Pod", "name": "p", "namespace": "{ns}"}}),
                )
                .names(),
                delete(
                    "/apis/events.k8s.io/v1/namespaces/{ns}/events/new",
                    Some(json!({"propagationPolicy": "Orphan"})),
                )
                .names(),
            ],
        ),
        case(
            "delete: a later delete's policy replaces the garbage collector's finalizer",
            vec![
                with_finalizer("owner"),
                post(
                    CMS,
                    json!({"metadata": {"name": "dep", "finalizers": ["example.com/hold"],
                        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                            "name": "owner", "uid": "$uid:0", "blockOwnerDeletion": true}]}}),
                )
                .names(),
                // The dependent's finalizer keeps it, and so the owner, in the foreground.
                delete(
                    &cm_path("owner"),
                    Some(json!({"propagationPolicy": "Foreground"})),
                )
                .names(),
                delete(
                    &cm_path("owner"),
                    Some(json!({"propagationPolicy": "Orphan"})),
                )
                .names(),
                delete(
                    &cm_path("owner"),
                    Some(json!({"propagationPolicy": "Background"})),
                )
                .names(),
            ],
        ),
        case(
            "delete: a collection by label",
            vec![
                create_labeled("a", json!({"app": "web"})),
                create_labeled("b", json!({"app": "db"})),
                create_labeled("c", json!({"app": "web"})),
                delete(CMS, None).q("labelSelector", "app=web"),
                get(CMS),
            ],
        ),
        case(
            "delete: a custom resource",
            vec![
                create_widget("w"),
                delete(&w_path("w"), None),
                get(&w_path("w")),
            ],
        ),
    ]
}

/// A server-side apply of ConfigMap `applied` by `manager`.
/// An apply of ConfigMap `applied` (or, with `widget`, of Widget `w`) by `manager` that gives
/// it `finalizers`.
fn apply_finalizers(manager: &str, widget: bool, finalizers: &[&str]) -> Step {
    let (path, mut config) = if widget {
        (w_path("w"), self::widget("w", json!({"size": 1})))
    } else {
        (
            cm_path("applied"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "applied"}, "data": {"k": "v"}}),
        )
    };
    config["metadata"]["finalizers"] = json!(finalizers);
    patch(&path, APPLY, config).q("fieldManager", manager)
}

/// Two managers apply a finalizer each, then each stops applying it: the second is added
/// after the first, and each goes once its only owner stops applying it.
fn finalizer_set_steps(widget: bool) -> Vec<Step> {
    vec![
        apply_finalizers("mgr-a", widget, &["example.com/a"]),
        apply_finalizers("mgr-b", widget, &["example.com/b"]),
        apply_finalizers("mgr-a", widget, &[]),
        apply_finalizers("mgr-b", widget, &[]),
    ]
}

fn apply_cm(manager: &str, labels: Value, data: Value) -> Step {
    let mut metadata = json!({"name": "applied"});
    if labels.as_object().is_some_and(|l| !l.is_empty()) {
        metadata["labels"] = labels;
    }
    patch(
        &cm_path("applied"),
        APPLY,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}),
    )
    .q("fieldManager", manager)
}

fn patch_cases() -> Vec<Case> {
    let settings = "/apis/diff.kclient.dev/v1/namespaces/{ns}/settings";
    let applied = |spec: Value| {
        patch(
            &format!("{settings}/e"),
            APPLY,
            json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                "metadata": {"name": "e"}, "spec": spec}),
        )
        .q("fieldManager", "a")
    };
    vec![
        case(
            "server-side apply: a manager applying an empty map drops the entries it owned",
            vec![
                patch(
                    &cm_path("e"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "e", "labels": {"x": "1"}}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "a"),
                patch(
                    &cm_path("e"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "e", "labels": {}}, "data": {}}),
                )
                .q("fieldManager", "a"),
                patch(
                    &cm_path("e"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}}),
                )
                .q("fieldManager", "a"),
                applied(json!({"weights": {"x": 1}, "labels": {"k": {"v": "w"}}})),
                // A custom resource's map that the configuration names as `{}` and the apply
                // empties is `null`, which the schema refuses.
                applied(json!({"weights": {}, "labels": {}})),
                applied(json!({})),
            ],
        ),
        case(
            "server-side apply: a custom resource's map emptied by an apply that names it",
            {
                let applied = |spec: Value| {
                    patch(
                        &format!("{settings}/n"),
                        APPLY,
                        json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Setting",
                            "metadata": {"name": "n"}, "spec": spec}),
                    )
                    .q("fieldManager", "a")
                };
                vec![
                    // Named as `{}` from the start: kept, empty.
                    applied(json!({"weights": {}})),
                    applied(json!({"weights": {"x": 1}})),
                    applied(json!({"weights": {}})).exact(),
                    // Emptied, `null`, then defaulted: `nested` has a default.
                    applied(json!({"nested": {"inner": "q"}})),
                    applied(json!({"nested": {}})),
                    // A map value emptied.
                    applied(json!({"labels": {"k": {"v": "1"}}})),
                    applied(json!({"labels": {"k": {}}})).exact(),
                    // Below a subtree that keeps unknown fields.
                    applied(json!({"free": {"sub": {"a": "x"}}})),
                    applied(json!({"free": {"sub": {}}})).exact(),
                    get(&format!("{settings}/n")),
                ]
            },
        ),
        case(
            "patch: merge adds a key",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"n": "1"}})),
            ],
        ),
        case(
            "patch: merge null removes a key",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": null}})),
            ],
        ),
        case(
            "patch: merge labels",
            vec![
                create_labeled("a", json!({"x": "1"})),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"labels": {"y": "2"}}}),
                ),
            ],
        ),
        case(
            "patch: JSON patch add and replace",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "add", "path": "/data/n", "value": "1"},
                        {"op": "replace", "path": "/data/k", "value": "w"}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch test that holds",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/data/k", "value": "v"},
                        {"op": "remove", "path": "/data/k"}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch test that fails",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/data/k", "value": "other"}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch removing a missing path",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "remove", "path": "/data/nope"}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch replace of a missing member adds it, as the server's library does",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "/data/nope", "value": "x"}]),
                ),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/data/missing", "value": null},
                        {"op": "add", "path": "/data/tested", "value": "1"}]),
                ),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/data/missing", "value": "1"}]),
                ),
            ],
        ),
        case("patch: JSON patch array indexes", {
            let list = |op: &str, index: &str| {
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": op, "path": format!("/spec/list/{index}"), "value": op}]),
                )
            };
            vec![
                post(WIDGETS, widget("w", json!({"list": ["a", "b"]}))),
                list("add", "3"),
                list("add", "2"),
                list("add", "-"),
                list("add", "-1"),
                list("add", "01"),
                list("add", "-9"),
                list("add", "x"),
                list("replace", "-"),
                list("replace", "9"),
                list("replace", "-2"),
                list("remove", "-"),
                list("remove", "9"),
                list("remove", "-1"),
            ]
        }),
        case(
            "patch: JSON patch move and copy from a missing path",
            vec![
                post(WIDGETS, widget("w", json!({"k": "v"}))),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "move", "from": "/spec/nope", "path": "/spec/m"}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "copy", "from": "/spec/nope", "path": "/spec/c"}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "copy", "from": "/spec/k", "path": "/spec/k2"},
                        {"op": "move", "from": "/spec/k2", "path": "/spec/k3"}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "move", "from": "/spec", "path": "/spec/inner"}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "add", "path": "/spec/nope/deeper", "value": 1}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch escaped paths",
            vec![
                post(WIDGETS, widget("w", json!({"x~y": 1, "a/b": 2}))),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "/spec/x~0y", "value": 3},
                        {"op": "remove", "path": "/spec/a~1b"},
                        {"op": "add", "path": "/spec/c~1d~0", "value": 4}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "remove", "path": "/spec/x~2y"}]),
                ),
            ],
        ),
        case(
            "patch: JSON patch malformed operations",
            vec![
                post(WIDGETS, widget("w", json!({"k": "v"}))),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "bogus", "path": "/spec/k"}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"path": "/spec/k", "value": 1}]),
                ),
                patch(&w_path("w"), JSON_PATCH, json!([{"op": "add", "value": 1}])),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "add", "path": "", "value": {}}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!({"op": "add", "path": "/spec/z", "value": 1}),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "add", "path": "/spec/z"}]),
                ),
                patch(&w_path("w"), JSON_PATCH, json!([])),
            ],
        ),
        case("patch: JSON patch test compares scalars by their text", {
            let test = |path: &str, value: Value| {
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": path, "value": value}]),
                )
            };
            vec![
                post(
                    WIDGETS,
                    widget(
                        "w",
                        json!({"n": 3, "half": 2.5, "s": "x<y", "t": "é", "l": [1, "a&b"]}),
                    ),
                ),
                test("/spec/n", json!(3)),
                test("/spec/n", json!(3.0)),
                test("/spec/half", json!(2.5)),
                test("/spec/s", json!("x<y")),
                test("/spec/t", json!("é")),
                test("/spec/l", json!([1, "a&b"])),
            ]
        }),
        case("patch: JSON patch copies add up to at most 3 MiB", {
            let copy_and_remove = |n: usize| {
                let ops: Vec<Value> = (0..n)
                    .flat_map(|_| {
                        [
                            json!({"op": "copy", "from": "/spec/big", "path": "/spec/c"}),
                            json!({"op": "remove", "path": "/spec/c"}),
                        ]
                    })
                    .collect();
                patch(&w_path("w"), JSON_PATCH, Value::Array(ops))
            };
            vec![
                post(WIDGETS, widget("w", json!({"big": "y".repeat(1_000_000)}))),
                // 3 MB of copies pass, 4 MB do not.
                copy_and_remove(3),
                copy_and_remove(4),
            ]
        }),
        case("patch: JSON patch of more than 10000 operations", {
            let tests = |n: usize| {
                let op = json!({"op": "test", "path": "/spec/k", "value": "v"});
                patch(&w_path("w"), JSON_PATCH, Value::Array(vec![op; n]))
            };
            vec![
                post(WIDGETS, widget("w", json!({"k": "v"}))),
                tests(10_000),
                tests(10_001),
            ]
        }),
        case(
            "patch: JSON patch replacing the whole object",
            vec![
                post(WIDGETS, widget("w", json!({"k": "v"}))),
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "", "value": ["x"]}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "", "value": 1}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "", "value": null}]),
                ),
                patch(
                    &w_path("w"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "", "value": {"k": "v"}}]),
                ),
            ],
        ),
        case(
            "patch: strategic merge on a configmap",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), STRATEGIC, json!({"data": {"s": "1"}})),
            ],
        ),
        case(
            "patch: strategic merge on a custom resource is unsupported",
            vec![
                create_widget("w"),
                patch(&w_path("w"), STRATEGIC, json!({"spec": {"size": 3}})),
            ],
        ),
        case(
            "patch: a stale resourceVersion in a patch is a Conflict",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"resourceVersion": "$rv:0"}, "data": {"k": "3"}}),
                ),
            ],
        ),
        case(
            "patch: a patch that changes the namespace is BadRequest",
            vec![
                create_cm("a"),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"namespace": "other"}, "data": {"k": "2"}}),
                ),
                patch(
                    &cm_path("a"),
                    JSON_PATCH,
                    json!([{"op": "replace", "path": "/metadata/namespace", "value": "other"}]),
                ),
                get(&cm_path("a")),
            ],
        ),
        case(
            "patch: a missing object is NotFound",
            vec![patch(&cm_path("nope"), MERGE, json!({"data": {"k": "2"}}))],
        ),
        case(
            "patch: the status subresource of a custom resource",
            vec![
                create_widget("w"),
                patch(
                    &format!("{}/status", w_path("w")),
                    MERGE,
                    json!({"status": {"ready": true}, "spec": {"size": 5}}),
                ),
            ],
        ),
        case(
            "patch: a spec patch bumps the generation",
            vec![
                create_widget("w"),
                patch(&w_path("w"), MERGE, json!({"spec": {"size": 7}})),
                patch(
                    &w_path("w"),
                    MERGE,
                    json!({"metadata": {"annotations": {"a": "b"}}}),
                ),
            ],
        ),
        case(
            "patch: a patch that changes nothing keeps the resourceVersion",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "v"}})),
            ],
        ),
        case(
            "apply: creates the object",
            vec![
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied"}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: a second manager adds its field",
            vec![
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied"}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "mgr-a"),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied"}, "data": {"b": "2"}}),
                )
                .q("fieldManager", "mgr-b"),
            ],
        ),
        case(
            "apply: the same configuration again changes nothing",
            vec![
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied"}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "mgr-a"),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied"}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: a field no longer applied is removed",
            vec![
                apply_cm("mgr-a", json!({"x": "1"}), json!({"a": "1", "b": "2"})),
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
            ],
        ),
        case(
            "apply: a field another manager also applies stays",
            vec![
                apply_cm("mgr-a", json!({}), json!({"a": "1", "b": "2"})),
                apply_cm("mgr-b", json!({}), json!({"b": "2"})),
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
            ],
        ),
        case(
            "apply: a field another writer updated stays",
            vec![
                apply_cm("mgr-a", json!({}), json!({"a": "1", "b": "2"})),
                patch(&cm_path("applied"), MERGE, json!({"data": {"b": "3"}}))
                    .q("fieldManager", "editor"),
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
            ],
        ),
        case(
            "apply: finalizers are a set, each item owned by the managers that apply it",
            finalizer_set_steps(false),
        ),
        case(
            "apply: a custom resource's finalizers are a set too",
            finalizer_set_steps(true),
        ),
        case(
            "apply: a custom resource",
            vec![
                patch(&w_path("w"), APPLY, widget("w", json!({"size": 3})))
                    .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: a stale resourceVersion is a Conflict",
            vec![
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
                apply_cm("mgr-a", json!({}), json!({"a": "2"})),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied", "resourceVersion": "$rv:0"},
                        "data": {"a": "3"}}),
                )
                .q("fieldManager", "mgr-a"),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied", "resourceVersion": "$rv:1"},
                        "data": {"a": "4"}}),
                )
                .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: a configuration without apiVersion or kind is BadRequest",
            vec![
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"metadata": {"name": "applied"}, "data": {"a": "1"}}),
                )
                .q("fieldManager", "mgr-a"),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "metadata": {"name": "applied"}}),
                )
                .q("fieldManager", "mgr-a"),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"kind": "ConfigMap", "metadata": {"name": "applied"}}),
                )
                .q("fieldManager", "mgr-a"),
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"metadata": {"name": "applied"}, "data": {"a": "2"}}),
                )
                .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: the configuration's namespace against the URL's",
            vec![
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied", "namespace": "other"}}),
                )
                .q("fieldManager", "mgr-a"),
                apply_cm("mgr-a", json!({}), json!({"a": "1"})),
                patch(
                    &cm_path("applied"),
                    APPLY,
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "applied", "namespace": "other"}}),
                )
                .q("fieldManager", "mgr-a"),
            ],
        ),
        case(
            "apply: without a field manager",
            vec![patch(
                &cm_path("applied"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}}),
            )],
        ),
        case(
            "patch: an unknown content type",
            vec![
                create_cm("a"),
                patch(&cm_path("a"), "text/plain", json!({})),
            ],
        ),
    ]
}

fn watch_cases() -> Vec<Case> {
    vec![
        case(
            "watch: create, update and delete from a resourceVersion",
            vec![
                create_cm("before"),
                watch(CMS, json!({})).q("resourceVersion", "$rv:0"),
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
                delete(&cm_path("a"), None),
            ],
        ),
        case(
            "watch: replays what happened after the resourceVersion",
            vec![
                create_cm("a"),
                create_cm("b"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
                delete(&cm_path("b"), None),
                watch(CMS, json!({})).q("resourceVersion", "$rv:0"),
            ],
        ),
        case(
            "watch: objects moving in and out of a label selector",
            vec![
                create_labeled("a", json!({"app": "web"})),
                watch(CMS, json!({"app": "web"}))
                    .q("resourceVersion", "$rv:0")
                    .q("labelSelector", "app=web"),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"labels": {"app": "db"}}}),
                ),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "unseen"}})),
                patch(
                    &cm_path("a"),
                    MERGE,
                    json!({"metadata": {"labels": {"app": "web"}}}),
                ),
                create_labeled("b", json!({"app": "db"})),
            ],
        ),
        case(
            "watch: a field selector on metadata.name",
            vec![
                create_cm("first"),
                watch(CMS, json!({}))
                    .q("resourceVersion", "$rv:0")
                    .q("fieldSelector", "metadata.name!=b"),
                create_cm("a"),
                create_cm("b"),
                delete(&cm_path("a"), None),
            ],
        ),
        case(
            "watch: without a resourceVersion starts with the current objects",
            vec![
                create_cm("a"),
                create_cm("b"),
                watch(CMS, json!({})),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
            ],
        ),
        case(
            "watch: sendInitialEvents ends with the initial-events-end bookmark",
            vec![
                create_cm("a"),
                create_cm("b"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "true")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "true"),
                create_cm("c"),
            ],
        ),
        case(
            "watch: options the server refuses, and the option each error names",
            {
                let w = || watch(CMS, json!({}));
                vec![
                    create_cm("a"),
                    w().q("resourceVersion", "$rv:0")
                        .q("resourceVersionMatch", "NotOlderThan"),
                    w().q("resourceVersion", "$rv:0")
                        .q("resourceVersionMatch", "Exact"),
                    w().q("sendInitialEvents", "true"),
                    w().q("sendInitialEvents", "false")
                        .q("resourceVersionMatch", "Exact")
                        .q("allowWatchBookmarks", "true"),
                    w().q("continue", "abc"),
                    w().q("continue", "abc").q("resourceVersionMatch", "Exact"),
                    w().q("sendInitialEvents", "true")
                        .q("resourceVersionMatch", "NotOlderThan")
                        .q("continue", "abc"),
                    w().q("timeoutSeconds", "soon"),
                    w().q("timeoutSeconds", ""),
                    w().q("limit", "many"),
                    w().q("resourceVersion", "abc"),
                    w().q("resourceVersion", "-5"),
                    w().q("labelSelector", "a in ("),
                    w().q("fieldSelector", "data.k=v"),
                ]
            },
        ),
        case(
            "watch: sendInitialEvents=false starts at the current version",
            vec![
                create_cm("a"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "false")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "true"),
                create_cm("b"),
            ],
        ),
        case(
            "watch: sendInitialEvents without allowWatchBookmarks has no end bookmark",
            vec![
                create_cm("a"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "true")
                    .q("resourceVersionMatch", "NotOlderThan"),
                create_cm("b"),
            ],
        ),
        case(
            "watch: boolean options are true unless false or 0",
            vec![
                create_cm("a"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "True")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "yes"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "FALSE")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "0"),
                create_cm("b"),
            ],
        ),
        case(
            "watch: allowWatchBookmarks from no version ends the current objects with a bookmark",
            vec![
                create_cm("a"),
                watch(CMS, json!({})).q("allowWatchBookmarks", "true"),
                watch(CMS, json!({}))
                    .q("allowWatchBookmarks", "true")
                    .q("resourceVersion", "0"),
                create_cm("b"),
            ],
        ),
        case(
            "watch: sendInitialEvents at a future version times out",
            vec![
                create_cm("a"),
                watch(CMS, json!({}))
                    .q("sendInitialEvents", "true")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "true")
                    .q("resourceVersion", FUTURE_RV),
            ],
        ),
        case(
            "watch: sendInitialEvents from a version older than the history",
            vec![
                create_cm("a"),
                Step::Compact,
                watch(CMS, json!({}))
                    .q("resourceVersion", "1")
                    .q("sendInitialEvents", "false")
                    .q("resourceVersionMatch", "NotOlderThan"),
                watch(CMS, json!({}))
                    .q("resourceVersion", "1")
                    .q("sendInitialEvents", "true")
                    .q("resourceVersionMatch", "NotOlderThan")
                    .q("allowWatchBookmarks", "true"),
            ],
        ),
        case(
            "watch: a resourceVersion older than the history is Expired",
            vec![
                create_cm("a"),
                Step::Compact,
                watch(CMS, json!({})).q("resourceVersion", "1"),
            ],
        ),
        case(
            "watch: finalizers show as MODIFIED then DELETED",
            vec![
                create_cm("before"),
                watch(CMS, json!({})).q("resourceVersion", "$rv:0"),
                with_finalizer("a"),
                delete(&cm_path("a"), None),
                release(&cm_path("a")),
            ],
        ),
        case(
            "watch: custom resources and their status",
            vec![
                create_widget("before"),
                watch(WIDGETS, json!({})).q("resourceVersion", "$rv:0"),
                create_widget("w"),
                patch(
                    &format!("{}/status", w_path("w")),
                    MERGE,
                    json!({"status": {"ready": true}}),
                ),
                patch(&w_path("w"), MERGE, json!({"spec": {"size": 2}})),
                delete(&w_path("w"), None),
            ],
        ),
        case(
            "watch: a no-op write sends no event",
            vec![
                create_cm("a"),
                watch(CMS, json!({})).q("resourceVersion", "$rv:0"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "v"}})),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "changed"}})),
            ],
        ),
        case(
            "watch: delete-collection sends one DELETED per object",
            vec![
                create_labeled("a", json!({"app": "web"})),
                create_labeled("b", json!({"app": "web"})),
                watch(CMS, json!({})).q("resourceVersion", "$rv:1"),
                delete(CMS, None).q("labelSelector", "app=web"),
            ],
        ),
    ]
}

/// A custom resource's numbers as the server stores them: decoded into an int64 when the
/// text is an integer that fits, else a float64, and encoded by Go's `encoding/json`.
fn number_cases() -> Vec<Case> {
    let numbers = || -> Value {
        serde_json::from_str(
            r#"{"three": 3.0, "thousand": 1e3, "negativeZero": -0.0, "oneAndAHalf": 1.50,
            "exactInt": 9007199254740993, "maxU64": 18446744073709551615,
            "past64": 99999999999999999999, "pastI64": 9223372036854775808,
            "belowI64": -9223372036854775809, "minI64": -9223372036854775808,
            "big": 1e21, "bigger": 123456789012345678901234567890.5, "tiny": 1e-7,
            "small": 0.000001, "tenth": 0.1, "negative": -3.0, "list": [2.0, 2.5, -0.0]}"#,
        )
        .expect("the numbers parse")
    };
    vec![
        case(
            "numbers: a custom resource's numbers as the server encodes them",
            vec![
                post(WIDGETS, widget("n", numbers())),
                get(&w_path("n")),
                get(WIDGETS),
                watch(WIDGETS, json!({})).q("resourceVersion", "$rv:0"),
                patch(
                    &w_path("n"),
                    MERGE,
                    json!({"spec": {"three": 4.0, "added": 7.0}}),
                ),
                put(
                    &w_path("n"),
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "n", "resourceVersion": "$rv:4"},
                        "spec": {"only": 5.0, "half": 0.5}}),
                ),
                patch(
                    &w_path("n"),
                    APPLY,
                    json!({"apiVersion": "diff.kclient.dev/v1", "kind": "Widget",
                        "metadata": {"name": "n"}, "spec": {"applied": 6.0}}),
                )
                .q("fieldManager", "numbers"),
            ],
        ),
        case(
            "numbers: a JSON patch test sees the stored number",
            vec![
                post(WIDGETS, widget("n", json!({"three": 3.0, "half": 0.5}))),
                // Stored as 3, so a test against 3 holds and one against 3.0 does not.
                patch(
                    &w_path("n"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/spec/three", "value": 3},
                        {"op": "replace", "path": "/spec/half", "value": 1.0}]),
                ),
                patch(
                    &w_path("n"),
                    JSON_PATCH,
                    json!([{"op": "test", "path": "/spec/half", "value": 1.0}]),
                ),
            ],
        ),
    ]
}

/// A watch at the deprecated `/watch/` path prefix, whose marker goes to `collection`.
fn legacy_watch(path: &str, collection: &str, labels: Value) -> Step {
    let Step::Watch {
        path,
        query,
        headers,
        marker,
        ..
    } = watch(collection, labels).with_path(path)
    else {
        unreachable!("watch builds a watch")
    };
    Step::Watch {
        path,
        query,
        headers,
        marker_path: collection.into(),
        marker,
    }
}

/// The deprecated watch paths (`/api/v1/watch/...`, `/apis/GROUP/VERSION/watch/...`), which
/// the server still serves: GET only, a list watch, or with a name one object's.
fn legacy_watch_cases() -> Vec<Case> {
    const WATCH_CMS: &str = "/api/v1/watch/namespaces/{ns}/configmaps";
    vec![
        case(
            "legacy watch: a namespace's configmaps",
            vec![
                create_cm("before"),
                legacy_watch(WATCH_CMS, CMS, json!({})).q("resourceVersion", "$rv:0"),
                create_cm("a"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
                delete(&cm_path("a"), None),
            ],
        ),
        case(
            "legacy watch: every namespace with a field selector",
            vec![
                create_cm("before"),
                legacy_watch("/api/v1/watch/configmaps", CMS, json!({}))
                    .q("resourceVersion", "$rv:0")
                    .q("fieldSelector", "metadata.namespace={ns}"),
                create_cm("a"),
            ],
        ),
        case(
            "legacy watch: a custom resource",
            vec![
                create_widget("before"),
                legacy_watch(
                    "/apis/diff.kclient.dev/v1/watch/namespaces/{ns}/widgets",
                    WIDGETS,
                    json!({}),
                )
                .q("resourceVersion", "$rv:0"),
                create_widget("a"),
                delete(&w_path("a"), None),
            ],
        ),
        case(
            "legacy watch: a name watches that object only",
            vec![
                create_cm("a"),
                // The marker is the watched object, so the watch ends with it.
                legacy_watch(&format!("{WATCH_CMS}/zz-marker"), CMS, json!({}))
                    .q("resourceVersion", "$rv:0"),
                create_cm("b"),
                patch(&cm_path("a"), MERGE, json!({"data": {"k": "2"}})),
                legacy_watch(&format!("{WATCH_CMS}/zz-marker"), CMS, json!({}))
                    .q("resourceVersion", "$rv:0")
                    .q(
                        "fieldSelector",
                        "metadata.name=zz-marker,metadata.namespace={ns}",
                    ),
                legacy_watch(&format!("{WATCH_CMS}/a"), CMS, json!({}))
                    .q("fieldSelector", "metadata.name=b"),
                legacy_watch(&format!("{WATCH_CMS}/a"), CMS, json!({}))
                    .q("fieldSelector", "metadata.namespace={ns}"),
                legacy_watch(&format!("{WATCH_CMS}/a"), CMS, json!({}))
                    .q("fieldSelector", "bogus=x"),
            ],
        ),
        case(
            "legacy watch: only GET, and no subresources",
            vec![
                post(WATCH_CMS, cm("a", json!({}), json!({}))),
                put(&format!("{WATCH_CMS}/a"), cm("a", json!({}), json!({}))),
                delete(&format!("{WATCH_CMS}/a"), None),
                patch(&format!("{WATCH_CMS}/a"), MERGE, json!({})),
                create_cm("a"),
                get(&format!("{WATCH_CMS}/a/status")),
                get("/api/v1/watch/namespaces/{ns}/nosuchthings"),
                get(CMS),
            ],
        ),
    ]
}
