//! The CEL environment of CRD rules: what kube-apiserver declares for
//! `x-kubernetes-validations` (read from v1.36 by writing CRDs whose rules call each
//! function), built once.
//!
//! - CEL's standard library, macros and optional values;
//! - cel-go's strings extension (`lowerAscii`, `split`, `format`, `strings.quote`, ...)
//!   and its lists extension (`slice`, `flatten`, `distinct`, `sort`, `sortBy`,
//!   `lists.range`, ...), both from the `cel` crate, which has them as cel-go does;
//! - cel-go's sets extension and `first` / `last`, and Kubernetes' list functions
//!   ([`lists`](super::lists));
//! - Kubernetes' regex functions ([`regex`](super::regex)), URLs ([`url`](super::url)),
//!   quantities ([`quantity`](super::quantity)), IP addresses and CIDRs
//!   ([`ip`](super::ip)), versions ([`semver`](super::semver)), and named formats
//!   ([`format`](super::format));
//! - cel-go's two-variable comprehensions ([`comprehensions`](super::comprehensions)).
//!
//! The server declares no `math`, `base64` or `cel.bind`. It also type-checks each rule
//! against the schema when the CRD is written, which the fake does not: a rule the server
//! would refuse there (`self.count == 1.0` on an integer) is evaluated here as the `cel`
//! crate evaluates it.

use std::sync::{Arc, LazyLock};

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The function name under which the libraries here report their errors: the fake
/// prints their message alone, in the server's words.
pub(super) const KUBERNETES: &str = "kubernetes library";

/// The environment, built on first use.
pub(super) fn environment() -> &'static Arc<Env> {
    static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
        let mut env = Env::stdlib();
        let declared = env
            .add_extension(cel::extensions::strings)
            .and_then(|()| env.add_extension(cel::extensions::lists))
            .and_then(|()| env.add_extension(super::lists::register))
            .and_then(|()| env.add_extension(super::regex::register))
            .and_then(|()| env.add_extension(super::url::register))
            .and_then(|()| env.add_extension(super::quantity::register))
            .and_then(|()| env.add_extension(super::ip::register))
            .and_then(|()| env.add_extension(super::semver::register))
            .and_then(|()| env.add_extension(super::format::register))
            .and_then(|()| env.add_extension(super::comprehensions::register));
        // The declarations are fixed, and tested: an error here is a bug in them.
        if let Err(e) = declared {
            panic!("the CRD rules' CEL environment: {e}");
        }
        Arc::new(env)
    });
    &ENV
}

/// Implements `Val` for a value of one of these libraries (a URL, a quantity, ...): the
/// static CEL type `$cel_type`, equality by `$equal` (a `fn(&Self, &Self) -> bool`), and
/// a clone for the interpreter.
macro_rules! library_value {
    ($ty:ty, $cel_type:expr, $equal:expr) => {
        impl cel::common::value::Val for $ty {
            fn get_type(&self) -> &cel::common::types::Type {
                &$cel_type
            }

            fn cel_type() -> &'static cel::common::types::Type {
                &$cel_type
            }

            fn equals(&self, other: &dyn cel::common::value::Val) -> bool {
                let equal: fn(&$ty, &$ty) -> bool = $equal;
                other.downcast_ref::<$ty>().is_some_and(|o| equal(self, o))
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }

            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }

        impl cel::common::value::StaticVal for $ty {}
    };
}
pub(super) use library_value;

/// An error of one of these libraries, whose message the server gives as it is.
pub(super) fn fail(message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(KUBERNETES, message)
}

/// The error for an argument of a type the function does not take (which the server's
/// type check rules out when the CRD is written, and the fake meets at run time).
pub(super) fn no_overload(val: &dyn Val) -> ExecutionError {
    fail(format!("no such overload: {}", val.get_type().name()))
}

/// A string argument's text.
pub(super) fn string_arg(val: &dyn Val) -> Result<&str, ExecutionError> {
    val.downcast_ref::<CelString<'_>>()
        .map(|s| s.inner())
        .ok_or_else(|| no_overload(val))
}

/// A `string` result.
pub(super) fn string<'b, 'v>(s: impl Into<String>) -> CowVal<'b, 'v> {
    CowVal::owned(CelString::from(s.into()))
}

/// A `bool` result.
pub(super) fn boolean<'b, 'v>(b: bool) -> CowVal<'b, 'v> {
    CowVal::owned(CelBool::from(b))
}

/// An `int` result.
pub(super) fn int<'b, 'v>(i: i64) -> CowVal<'b, 'v> {
    CowVal::owned(CelInt::from(i))
}

/// A library value with an order (quantities, versions): `isGreaterThan`, `isLessThan` and
/// `compareTo` on it.
pub(super) trait Ordered {
    /// How the first argument orders against the second.
    fn order(a: &dyn Val, b: &dyn Val) -> Result<std::cmp::Ordering, ExecutionError>;
}

/// Registers `isGreaterThan`, `isLessThan` and `compareTo` on values of `T`, of CEL type
/// `cel_type` (its name in the overload ids).
pub(super) fn register_order<T: Ordered>(
    env: &mut Env,
    cel_type: &Type,
) -> Result<(), DeclarationError> {
    let name = cel_type.name();
    let functions: [(&str, Overload); 3] = [
        ("isGreaterThan", is_greater_than::<T>),
        ("isLessThan", is_less_than::<T>),
        ("compareTo", compare_to::<T>),
    ];
    for (function, overload) in functions {
        env.add_member_overload(
            function,
            &format!("{name}.{function}"),
            cel_type.to_owned(),
            vec![cel_type.to_owned()],
            overload,
        )?;
    }
    Ok(())
}

/// An overload's implementation.
type Overload = for<'b, 'v> fn(Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError>;

fn is_greater_than<'b, 'v, T: Ordered>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    Ok(boolean(T::order(a.as_ref(), b.as_ref())?.is_gt()))
}

fn is_less_than<'b, 'v, T: Ordered>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    Ok(boolean(T::order(a.as_ref(), b.as_ref())?.is_lt()))
}

fn compare_to<'b, 'v, T: Ordered>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    Ok(int(T::order(a.as_ref(), b.as_ref())? as i64))
}

/// A call's arguments (the receiver first), as many as the overload declares.
pub(super) fn take<'b, 'v, const N: usize>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<[CowVal<'b, 'v>; N], ExecutionError> {
    args.try_into()
        .map_err(|args: Vec<_>| ExecutionError::invalid_argument_count(N, args.len()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cel::{Context, Value};

    use super::environment;

    fn eval(source: &str) -> Result<Value, String> {
        let program = environment().compile(source).map_err(|e| e.to_string())?;
        let context = Context::with_env(Arc::clone(environment()));
        program
            .execute(&context)
            .map_err(|e| super::super::cel_error(&e))
    }

    /// Each library's functions, with results kube-apiserver v1.36 gives (the differential
    /// suite compares the fake with it on CRD rules).
    #[test]
    fn the_kubernetes_libraries_evaluate() {
        for source in [
            "[1, 2, 2, 3].isSorted() && !['b', 'a'].isSorted() && [].isSorted()",
            "[1, 3].sum() == 4 && [1.5, 2.0].sum() == 3.5 && [].sum() == 0",
            "[3, 1, 2].min() == 1 && ['a', 'c', 'b'].max() == 'c'",
            "[1, 2, 2, 3].indexOf(2) == 1 && [1, 2, 2, 3].lastIndexOf(2) == 2 && [1].indexOf(5) == -1",
            "[1, 2].first() == optional.of(1) && [].last() == optional.none()",
            "sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])",
            "sets.equivalent([1, 2, 2], [2, 1]) && sets.intersects([1, 2], [2, 3])",
            "'abc123def456'.find('[0-9]+') == '123' && 'abc'.find('[0-9]') == ''",
            "'a1b22c333'.findAll('[0-9]+') == ['1', '22', '333']",
            "'a1b22c333'.findAll('[0-9]+', 2) == ['1', '22']",
            "'x١'.find('\\\\d') == ''",
            "isURL('https://example.com:8443/a%20b?x=1') && !isURL('a/b') && !isURL('http://a b')",
            "url('HTTPS://User@Example.com:8443/a%20b?x=1&x=2#f').getScheme() == 'https'",
            "url('https://example.com:8443/p').getHost() == 'example.com:8443'",
            "url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]:80/').getPort() == '80'",
            "url('https://h/a%20b').getEscapedPath() == '/a%20b' && url('https://h/a b').getEscapedPath() == '/a%20b'",
            "url('https://h/?x=1&x=2&y=a+b').getQuery() == {'x': ['1', '2'], 'y': ['a b']}",
            "isQuantity('100m') && !isQuantity('1 Gi')",
            "quantity('1') == quantity('1000m') && quantity('1Gi').isGreaterThan(quantity('1G'))",
            "quantity('500m').isLessThan(quantity('1')) && quantity('2').compareTo(quantity('2000m')) == 0",
            "sign(quantity('-1m')) == -1 && sign(quantity('0')) == 0",
            "quantity('1').add(quantity('1')).asInteger() == 2 && quantity('1').sub(3).asInteger() == -2",
            // Go holds 1000m as 1000 * 10^-3, and does not reduce it to find an integer.
            "!quantity('1000m').isInteger() && quantity('1e3').isInteger() && !quantity('8Ei').isInteger()",
            "!quantity('1500m').add(quantity('500m')).isInteger() && !quantity('0').sub(1).isInteger()",
            "quantity('1.5').isInteger() == false && quantity('1k').asInteger() == 1000",
            "quantity('1.5').asApproximateFloat() == 1.5",
            "isIP('10.0.0.1') && !isIP('01.2.3.4') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",
            "ip('10.0.0.1').family() == 4 && ip('::1').family() == 6 && ip('::1').isLoopback()",
            "ip.isCanonical('2001:db8::abcd') && !ip.isCanonical('2001:DB8::ABCD')",
            "string(ip('2001:db8::0:0:0:abcd')) == '2001:db8::abcd'",
            "ip('169.254.1.1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()",
            "ip('8.8.8.8').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')",
            "cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))",
            "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))",
            "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
            "cidr('2001:db8::/32').prefixLength() == 32 && string(cidr('10.1.2.3/8')) == '10.1.2.3/8'",
            "isSemver('1.2.3-rc.1+b.5') && !isSemver('v1.2') && isSemver('v1.2', true)",
            "semver('01.02', true).minor() == 2 && semver('1.2.3').patch() == 3",
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
            "semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta')) && semver('1.0.0-2').isLessThan(semver('1.0.0-11'))",
            "semver('1.0.0').compareTo(semver('1.0.0+build')) == 0 && semver('2.0.0').isGreaterThan(semver('1.9.9'))",
            "quantity('2').isGreaterThan(quantity('1')) && semver('2.0.0').compareTo(semver('3.0.0')) == -1",
            "!format.dns1123Label().validate('my-name').hasValue() && format.named('x') == optional.none()",
            "format.named('labelValue').value().validate('a b').value().size() == 1",
            "format.dns1123LabelPrefix().validate('ab-') == optional.none()",
            "[1, 2, 3].all(i, x, i < 3 && x > 0) && !['a'].all(i, x, i > 0)",
            "{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)",
            "[1, 2, 1].existsOne(i, x, x == 2) && ![1, 1].exists_one(i, x, x == 1)",
            "[1, 2, 3].transformList(i, x, x * 2) == [2, 4, 6]",
            "[1, 2, 3].transformList(i, x, i > 0, x) == [2, 3]",
            "[1, 2].transformMap(i, x, x * 10) == {0: 10, 1: 20}",
            "{'a': 1}.transformMapEntry(k, v, {v: k}) == {1: 'a'}",
            "[[1, 2], [3]].all(i, xs, xs.all(j, y, y > i))",
            "[1, 2].all(i, x, [x].exists(y, y == x)) && [1].all(x, [5].all(i, y, y > x))",
        ] {
            assert_eq!(eval(source), Ok(Value::Bool(true)), "{source}");
        }
    }

    #[test]
    fn errors_read_as_on_the_server() {
        for (source, error) in [
            ("[].min() == 1", "min called on empty list"),
            (
                "quantity('x').isInteger()",
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
            (
                "quantity('1.5').asInteger() == 1",
                "cannot convert value to integer",
            ),
            (
                "ip('1.2.3') == ip('1.2.3.4')",
                r#"IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short"#,
            ),
            (
                "timestamp('2020-01-01') > timestamp('2019-01-01T00:00:00Z')",
                "type conversion error from 'string' to 'google.protobuf.Timestamp'",
            ),
            (
                "[1, 2].transformMapEntry(i, x, {'k': x}) == {}",
                "insert failed: key k already exists",
            ),
            (
                "semver('1.02.3').major() == 1",
                r#"Minor number must not contain leading zeroes "02""#,
            ),
            (
                "semver('1.2', true).major() == 1 && semver('1.2-rc', true).major() == 1",
                "short version cannot contain PreRelease/Build meta data",
            ),
            (
                "url('a/b').getHost() == ''",
                r#"URL parse error during conversion from string: parse "a/b": invalid URI for request"#,
            ),
        ] {
            assert_eq!(eval(source), Err(error.to_owned()), "{source}");
        }
    }
}
