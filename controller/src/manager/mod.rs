//! The manager, controller-runtime's `manager.Manager`: one object that runs several
//! controllers and other [`Runnable`]s over one shared informer factory, with one leader
//! election for all of them and an ordered graceful shutdown.

mod builder;
mod controller_manager;
mod election;
mod group;
mod runnable;

pub use builder::{DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, ManagerBuilder};
pub use controller_manager::Manager;
pub use runnable::Runnable;
