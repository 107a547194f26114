//! Conversion from the `meta/v1` `LabelSelector` struct (client-go's
//! `metav1.LabelSelectorAsSelector`).

use super::{Operator, Requirement, Selector, SelectorError};

impl Selector {
    /// Converts an optional `meta/v1` `LabelSelector` as client-go's `LabelSelectorAsSelector`
    /// does: `None` (a `null` selector) selects nothing, an empty one selects everything.
    ///
    /// ```
    /// use kclient_apimachinery::Selector;
    /// use kclient_apimachinery::meta::v1::LabelSelector;
    ///
    /// let spec: LabelSelector = serde_json::from_str(
    ///     r#"{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]}"#,
    /// )?;
    /// let selector = Selector::from_label_selector(Some(&spec))?;
    /// assert_eq!(selector.to_string(), "app=web,tier in (a,b)");
    /// assert!(Selector::from_label_selector(None)?.matches_nothing());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_label_selector(
        selector: Option<&crate::meta::v1::LabelSelector>,
    ) -> Result<Self, SelectorError> {
        match selector {
            None => Ok(Selector::nothing()),
            Some(selector) => Selector::try_from(selector),
        }
    }
}

impl TryFrom<&crate::meta::v1::LabelSelector> for Selector {
    type Error = SelectorError;

    /// Converts `matchLabels` (each an `=` requirement) and `matchExpressions` (`In`, `NotIn`,
    /// `Exists`, `DoesNotExist`), validating keys and values.
    fn try_from(selector: &crate::meta::v1::LabelSelector) -> Result<Self, SelectorError> {
        let mut result = Selector::everything();
        for (key, value) in selector.match_labels.iter().flat_map(|m| m.iter()) {
            result = result.and(Requirement::new(
                key.as_str(),
                Operator::Equals,
                [value.as_str()],
            )?);
        }
        for expression in selector.match_expressions.iter().flat_map(|l| l.iter()) {
            let operator = match expression.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError::new(
                        None,
                        format!("{other:?} is not a valid label selector operator"),
                    ));
                }
            };
            let values = expression
                .values
                .iter()
                .flat_map(|l| l.iter())
                .map(|v| v.as_str());
            result = result.and(Requirement::new(expression.key.as_str(), operator, values)?);
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn converts_meta_v1_label_selectors() {
        use crate::meta::v1::LabelSelector;
        let parse = |json: &str| serde_json::from_str::<LabelSelector>(json).unwrap();

        let empty = parse("{}");
        assert!(Selector::try_from(&empty).unwrap().is_empty());
        assert!(
            Selector::from_label_selector(None)
                .unwrap()
                .matches_nothing()
        );

        let spec = parse(
            r#"{"matchLabels":{"app":"web"},"matchExpressions":[
                {"key":"tier","operator":"NotIn","values":["db"]},
                {"key":"canary","operator":"DoesNotExist"},
                {"key":"env","operator":"Exists"}]}"#,
        );
        let selector = Selector::from_label_selector(Some(&spec)).unwrap();
        assert_eq!(selector.to_string(), "app=web,!canary,env,tier notin (db)");
        assert!(selector.matches(&labels(&[("app", "web"), ("env", "x"), ("tier", "fe")])));
        assert!(!selector.matches(&labels(&[("app", "web"), ("env", "x"), ("canary", "1")])));

        for (json, fragment) in [
            (
                r#"{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}"#,
                "\"Gt\" is not a valid",
            ),
            (
                r#"{"matchExpressions":[{"key":"a","operator":"In"}]}"#,
                "can't be empty",
            ),
            (
                r#"{"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]}"#,
                "must be empty",
            ),
            (r#"{"matchLabels":{"bad key":"x"}}"#, "invalid label key"),
            (r#"{"matchLabels":{"a":"-x"}}"#, "invalid label value"),
        ] {
            let err = Selector::try_from(&parse(json)).unwrap_err();
            assert!(err.to_string().contains(fragment), "{json}: {err}");
        }
    }
}
