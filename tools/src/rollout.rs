//! Waiting for a Deployment's rollout, as `kubectl rollout status deployment/NAME` does
//! (kubectl's `polymorphichelpers/rollout_status.go`, `DeploymentStatusViewer`).
//!
//! [`deployment_rollout_status`] says where one observed Deployment stands:
//!
//! 1. the controller has not observed the latest spec yet (`metadata.generation` is above
//!    `status.observedGeneration`): waiting;
//! 2. its `Progressing` condition has the reason `ProgressDeadlineExceeded`: an error, the
//!    rollout has failed;
//! 3. fewer than `spec.replicas` pods run the new template (`status.updatedReplicas`):
//!    waiting;
//! 4. pods of the old templates remain (`status.replicas` above `status.updatedReplicas`):
//!    waiting;
//! 5. fewer of the updated pods are available than were updated (`status.availableReplicas`):
//!    waiting;
//! 6. otherwise the rollout is done.
//!
//! [`wait_for_deployment_rollout`] runs an informer on the one Deployment
//! ([`until_with_sync`]) and applies that test to each state it sees, until the rollout is
//! done, fails, the Deployment is deleted, or the stop comes.
//!
//! ```no_run
//! use std::time::Duration;
//! use kclient_api::apps::v1::Deployment;
//! use kclient_clientset::{Api, Clientset};
//! use kclient_tools::rollout::wait_for_deployment_rollout;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let deployments: Api<Deployment> = Clientset::try_default()?.apps_v1().deployments("default");
//! let done = wait_for_deployment_rollout(&deployments, "web", None, Duration::from_secs(300), |status| {
//!     println!("{}", status.message())
//! })
//! .await?;
//! println!("{} replicas available", done.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0));
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use kclient_api::apps::v1::{Deployment, DeploymentStatus};
use kclient_apimachinery::{ListOptions, Object, WatchEvent};
use kclient_cache::ListWatch;
use kclient_clientset::Api;

use crate::watch::{Stop, UntilError, condition, until_with_sync};

/// The annotation in which the deployment controller keeps a Deployment's revision.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

/// The `Progressing` condition's reason once the rollout exceeded `progressDeadlineSeconds`.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";

/// Where a Deployment's rollout stands, with kubectl's message for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutStatus {
    /// Every replica runs the latest template and is available.
    Done(String),
    /// The rollout goes on; the message says what it waits for.
    Waiting(String),
}

impl RolloutStatus {
    /// Whether the rollout is done.
    pub fn is_done(&self) -> bool {
        matches!(self, RolloutStatus::Done(_))
    }

    /// kubectl's message for this state (without its newline), such as
    /// `Waiting for deployment "web" rollout to finish: 1 of 2 updated replicas are available...`.
    pub fn message(&self) -> &str {
        match self {
            RolloutStatus::Done(m) | RolloutStatus::Waiting(m) => m,
        }
    }
}

/// Why a rollout cannot be waited on any longer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RolloutError {
    /// The `Progressing` condition says the rollout exceeded its progress deadline.
    ProgressDeadlineExceeded {
        /// The Deployment.
        name: String,
    },
    /// A revision was asked for, and the Deployment runs another.
    RevisionMismatch {
        /// The revision asked for.
        desired: i64,
        /// The Deployment's revision.
        running: i64,
    },
    /// A revision was asked for, and the Deployment's revision annotation is not a number.
    InvalidRevision {
        /// The Deployment.
        name: String,
        /// The annotation's value.
        value: String,
    },
    /// The Deployment was deleted while waiting.
    Deleted {
        /// The Deployment.
        name: String,
    },
}

/// So that `?` works in a function returning the API error (`kclient::Error`): an
/// [`Error::other`](kclient_apimachinery::Error::other) from which
/// `downcast_ref::<RolloutError>()` gives this error back.
impl From<RolloutError> for kclient_apimachinery::Error {
    fn from(error: RolloutError) -> Self {
        kclient_apimachinery::Error::other(error)
    }
}

impl fmt::Display for RolloutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RolloutError::ProgressDeadlineExceeded { name } => {
                write!(f, "deployment {name:?} exceeded its progress deadline")
            }
            RolloutError::RevisionMismatch { desired, running } => write!(
                f,
                "desired revision ({desired}) is different from the running revision ({running})"
            ),
            RolloutError::InvalidRevision { name, value } => write!(
                f,
                "cannot get the revision of deployment {name:?}: annotation {REVISION_ANNOTATION} is {value:?}, not a number"
            ),
            RolloutError::Deleted { name } => {
                write!(
                    f,
                    "deployment {name:?} was deleted while waiting for its rollout"
                )
            }
        }
    }
}

impl std::error::Error for RolloutError {}

/// The rollout status of one observed Deployment (see the [module docs](self)); with
/// `revision`, a Deployment at another revision is an error, as
/// `kubectl rollout status --revision=N` says.
pub fn deployment_rollout_status(
    deployment: &Deployment,
    revision: Option<i64>,
) -> Result<RolloutStatus, RolloutError> {
    let name = deployment.metadata.name.as_deref().unwrap_or_default();
    if let Some(desired) = revision.filter(|r| *r > 0) {
        let value = deployment
            .annotations()
            .get(REVISION_ANNOTATION)
            .unwrap_or_default();
        // An absent annotation is revision 0, as kubectl's deploymentutil.Revision reads it.
        let running = if value.is_empty() {
            0
        } else {
            value
                .parse::<i64>()
                .map_err(|_| RolloutError::InvalidRevision {
                    name: name.to_owned(),
                    value: value.to_owned(),
                })?
        };
        if running != desired {
            return Err(RolloutError::RevisionMismatch { desired, running });
        }
    }
    let none = DeploymentStatus::default();
    let status = deployment.status.as_deref().unwrap_or(&none);
    let observed = status.observed_generation.unwrap_or(0);
    if deployment.metadata.generation.unwrap_or(0) > observed {
        return Ok(RolloutStatus::Waiting(
            "Waiting for deployment spec update to be observed...".to_owned(),
        ));
    }
    let timed_out = status
        .conditions
        .iter()
        .flatten()
        .any(|c| &*c.type_ == "Progressing" && c.reason.as_deref() == Some(TIMED_OUT_REASON));
    if timed_out {
        return Err(RolloutError::ProgressDeadlineExceeded {
            name: name.to_owned(),
        });
    }
    let updated = status.updated_replicas.unwrap_or(0);
    let replicas = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if let Some(wanted) = deployment.spec.as_ref().and_then(|s| s.replicas)
        && updated < wanted
    {
        return Ok(RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {updated} out of {wanted} new replicas have been updated..."
        )));
    }
    if replicas > updated {
        return Ok(RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...",
            // Widened: a status with a negative count must not overflow.
            i64::from(replicas) - i64::from(updated)
        )));
    }
    if available < updated {
        return Ok(RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {available} of {updated} updated replicas are available..."
        )));
    }
    Ok(RolloutStatus::Done(format!(
        "deployment {name:?} successfully rolled out"
    )))
}

/// Waits until the rollout of the Deployment `name` is done, as `kubectl rollout status`
/// does: an informer on that one Deployment ([`until_with_sync`], so a lost watch is resumed
/// or relisted), [`deployment_rollout_status`] on each state it sees, and `on_progress` called
/// with each new status (kubectl prints them). Returns the Deployment as it was when done.
///
/// Ends with [`UntilError::Condition`] holding a [`RolloutError`] when the rollout exceeded
/// its progress deadline, runs another `revision`, or the Deployment is deleted, and with the
/// stop's reason ([`UntilError::Timeout`], ...) when `stop` comes first. A Deployment that
/// does not exist yet is waited for.
pub async fn wait_for_deployment_rollout(
    deployments: &Api<Deployment>,
    name: &str,
    revision: Option<i64>,
    stop: impl Into<Stop>,
    mut on_progress: impl FnMut(&RolloutStatus) + Send + 'static,
) -> Result<Arc<Deployment>, UntilError> {
    let selector = format!("metadata.name={name}");
    let (list_api, watch_api) = (deployments.clone(), deployments.clone());
    let lw = ListWatch::new(
        move |opts: ListOptions| {
            let api = list_api.clone();
            async move { api.list(&opts).await }
        },
        move |opts: ListOptions| {
            let api = watch_api.clone();
            async move { api.watch(&opts).await }
        },
    )
    .with_tweak_list_options(move |opts| opts.field_selector = Some(selector.clone()));
    let mut last_message = None::<String>;
    let deleted = RolloutError::Deleted {
        name: name.to_owned(),
    };
    let on_delete = deleted.clone();
    let event = until_with_sync(
        stop,
        Arc::new(lw),
        None,
        vec![condition(
            move |event: &WatchEvent<Arc<Deployment>>| match event {
                WatchEvent::Added(d) | WatchEvent::Modified(d) => {
                    let status = deployment_rollout_status(d, revision)?;
                    if last_message.as_deref() != Some(status.message()) {
                        last_message = Some(status.message().to_owned());
                        on_progress(&status);
                    }
                    Ok(status.is_done())
                }
                WatchEvent::Deleted(_) => Err(on_delete.clone()),
                _ => Ok(false),
            },
        )],
    )
    .await?;
    match event {
        Some(WatchEvent::Added(d) | WatchEvent::Modified(d)) => Ok(d),
        // The condition ends the wait only on an Added or Modified event that is done; a
        // Deleted one is its error.
        _ => Err(UntilError::Condition(Box::new(deleted))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(json: serde_json::Value) -> Deployment {
        serde_json::from_value(json).unwrap()
    }

    fn web(generation: i64, replicas: i32, status: serde_json::Value) -> Deployment {
        deployment(serde_json::json!({
            "metadata": {"name": "web", "generation": generation,
                         "annotations": {"deployment.kubernetes.io/revision": "2"}},
            "spec": {"replicas": replicas, "selector": {}, "template": {}},
            "status": status,
        }))
    }

    #[test]
    fn each_step_of_kubectls_status() {
        let status = |d: &Deployment| deployment_rollout_status(d, None).unwrap();
        let d = web(2, 3, serde_json::json!({"observedGeneration": 1}));
        assert_eq!(
            status(&d),
            RolloutStatus::Waiting("Waiting for deployment spec update to be observed...".into())
        );
        let d = web(
            2,
            3,
            serde_json::json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 1}),
        );
        assert_eq!(
            status(&d).message(),
            "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated..."
        );
        let d = web(
            2,
            3,
            serde_json::json!({"observedGeneration": 2, "replicas": 4, "updatedReplicas": 3}),
        );
        assert_eq!(
            status(&d).message(),
            "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination..."
        );
        let d = web(
            2,
            3,
            serde_json::json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 2}),
        );
        assert_eq!(
            status(&d).message(),
            "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available..."
        );
        let d = web(
            2,
            3,
            serde_json::json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}),
        );
        assert_eq!(
            status(&d),
            RolloutStatus::Done("deployment \"web\" successfully rolled out".into())
        );
        assert!(status(&d).is_done());
    }

    #[test]
    fn counts_at_the_ends_of_the_range_do_not_overflow() {
        // No spec.replicas: the updated-replicas step does not apply.
        let d = deployment(serde_json::json!({
            "metadata": {"name": "web", "generation": 2},
            "status": {"observedGeneration": 2, "replicas": i32::MAX,
                       "updatedReplicas": i32::MIN},
        }));
        let status = deployment_rollout_status(&d, None).expect("a status");
        assert_eq!(
            status.message(),
            "Waiting for deployment \"web\" rollout to finish: 4294967295 old replicas are pending termination..."
        );
    }

    #[test]
    fn a_progress_deadline_and_a_revision_are_errors() {
        let d = web(
            2,
            3,
            serde_json::json!({"observedGeneration": 2, "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}),
        );
        let err = deployment_rollout_status(&d, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "deployment \"web\" exceeded its progress deadline"
        );
        let d = web(1, 1, serde_json::json!({"observedGeneration": 1}));
        assert_eq!(
            deployment_rollout_status(&d, Some(3)).unwrap_err(),
            RolloutError::RevisionMismatch {
                desired: 3,
                running: 2
            }
        );
        // The revision it runs: the status applies.
        assert!(deployment_rollout_status(&d, Some(2)).is_ok());
        let mut d = d;
        d.metadata.annotations =
            Some(serde_json::from_value(serde_json::json!({REVISION_ANNOTATION: "two"})).unwrap());
        let err = deployment_rollout_status(&d, Some(2)).unwrap_err();
        assert!(err.to_string().contains("\"two\""), "{err}");
    }
}
