//! [`LeaderElectionRecord`], client-go's `resourcelock.LeaderElectionRecord`: the election
//! state a lock stores, independent of the object that stores it, and its mapping to a
//! `coordination.k8s.io/v1` `LeaseSpec`.

use kclient_api::coordination::v1::LeaseSpec;
use kclient_apimachinery::meta::MicroTime;

/// The election state kept in a lock object.
///
/// Its timestamps are written for humans and other tools; electors never compare them with
/// their own clock (see [`LeaderElector`](crate::LeaderElector)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// The identity of the current holder; empty when nobody holds the lock (released).
    pub holder_identity: String,
    /// How long, in seconds, candidates wait without seeing a change before taking over.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lock.
    pub acquire_time: Option<MicroTime>,
    /// When the current holder last renewed the lock.
    pub renew_time: Option<MicroTime>,
    /// How many times the lock changed hands.
    pub leader_transitions: i32,
    /// The coordinated leader election strategy, empty when not used.
    pub strategy: String,
    /// The holder coordinated leader election would prefer, empty when not used.
    pub preferred_holder: String,
}

impl LeaderElectionRecord {
    /// The record a Lease spec holds (client-go's `LeaseSpecToLeaderElectionRecord`); missing
    /// fields read as zero values.
    pub fn from_lease_spec(spec: Option<&LeaseSpec>) -> LeaderElectionRecord {
        let Some(spec) = spec else {
            return LeaderElectionRecord::default();
        };
        LeaderElectionRecord {
            holder_identity: spec.holder_identity.as_deref().unwrap_or("").to_string(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time,
            renew_time: spec.renew_time,
            leader_transitions: spec.lease_transitions.unwrap_or(0),
            strategy: spec.strategy.as_deref().unwrap_or("").to_string(),
            preferred_holder: spec.preferred_holder.as_deref().unwrap_or("").to_string(),
        }
    }

    /// The Lease spec that stores this record (client-go's `LeaderElectionRecordToLeaseSpec`).
    pub fn to_lease_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder_identity.as_str().into()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time,
            renew_time: self.renew_time,
            lease_transitions: Some(self.leader_transitions),
            strategy: (!self.strategy.is_empty()).then(|| self.strategy.as_str().into()),
            preferred_holder: (!self.preferred_holder.is_empty())
                .then(|| self.preferred_holder.as_str().into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_spec_round_trip() {
        let record = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(MicroTime::from_unix_micros(1_000_001)),
            renew_time: Some(MicroTime::from_unix_micros(2_000_002)),
            leader_transitions: 3,
            strategy: String::new(),
            preferred_holder: String::new(),
        };
        let spec = record.to_lease_spec();
        assert_eq!(spec.strategy, None);
        assert_eq!(spec.lease_transitions, Some(3));
        assert_eq!(LeaderElectionRecord::from_lease_spec(Some(&spec)), record);
        assert_eq!(
            LeaderElectionRecord::from_lease_spec(None),
            LeaderElectionRecord::default()
        );
    }
}
