//! [`EventType`], and what an event is about: the `core/v1` `ObjectReference` to an object
//! (client-go's `reference.GetReference`), built by kclient-clientset's [`object_reference`]
//! and [`IntoObjectReference`] (re-exported here), which its `Api::<Event>::search` takes too.

pub use kclient_clientset::{IntoObjectReference, object_reference};

/// The type of an event; the API server accepts only these two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Information: nothing is wrong (`Normal`).
    Normal,
    /// Something may need attention (`Warning`).
    Warning,
}

impl EventType {
    /// The value of the event's `type` field.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
