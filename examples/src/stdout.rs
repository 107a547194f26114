//! Writing to standard output the way a Go command does when its reader goes away
//! (`klogs web-0 | head -1`): the program ends at once, quietly, with the status a shell
//! reports for a program killed by SIGPIPE (141), which is what happens to kubectl. Rust
//! ignores SIGPIPE, so there `println!` panics with a backtrace, and a `write_all(..)?` makes
//! "Broken pipe" the program's error.
//!
//! The example programs print through [`outln!`](crate::outln) and [`out!`](crate::out), and
//! pass the results of their own writes to standard output or standard error through
//! [`exit_on_broken_pipe`]. Only those writes: a broken pipe on a network connection is an
//! error to report, not a reader that has gone.

use std::fmt;
use std::io::{self, Write as _};

/// The exit status of a program that a closed pipe ended: as a shell reports a process
/// killed by SIGPIPE (128 + 13).
pub const BROKEN_PIPE_STATUS: i32 = 141;

/// Ends the process with [`BROKEN_PIPE_STATUS`], printing nothing, if `result` (a write to
/// standard output or standard error) failed because the reader of that pipe has gone; returns
/// any other result unchanged.
pub fn exit_on_broken_pipe<T>(result: io::Result<T>) -> io::Result<T> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(BROKEN_PIPE_STATUS),
        other => other,
    }
}

/// Writes `args` to standard output, for [`out!`](crate::out) and [`outln!`](crate::outln).
///
/// A broken pipe ends the process as [`exit_on_broken_pipe`] does; any other failed write is
/// reported on standard error and ends it with status 1 (where `print!` would panic).
pub fn write_out(args: fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| out.flush());
    if let Err(e) = exit_on_broken_pipe(written) {
        eprintln!("writing to standard output: {e}");
        std::process::exit(1);
    }
}

/// `print!` that ends the program quietly when its reader has gone (see
/// [`write_out`](crate::stdout::write_out)).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write_out(::std::format_args!($($arg)*))
    };
}

/// `println!` that ends the program quietly when its reader has gone (see
/// [`write_out`](crate::stdout::write_out)).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write_out(::std::format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write_out(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}
