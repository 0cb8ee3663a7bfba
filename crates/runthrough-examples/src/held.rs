// SPDX-License-Identifier: MIT OR Apache-2.0
//! The communicator an application runs on: the job's world (borrowed), or one of its own
//! after a non-shrinking recovery (`Comm::respawn`) replaced it.

use runthrough::Comm;

/// Borrowed (the job's world) or owned (a respawn's).
#[derive(Debug)]
pub(crate) enum Held<'a> {
    Borrowed(&'a Comm),
    Owned(Comm),
}

impl std::ops::Deref for Held<'_> {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        match self {
            Held::Borrowed(comm) => comm,
            Held::Owned(comm) => comm,
        }
    }
}
