// SPDX-License-Identifier: MIT OR Apache-2.0
//! Matched probes (MPI-4.0 §3.8.2: `MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`): a probe that
//! takes the message it finds out of matching, so that no other receive (of another thread) can
//! take it before the program receives it.

use bytemuck::Pod;
use runthrough_core::matching::{SourceSelector, TagSelector};
use runthrough_core::Result;

use crate::comm::{deliver_into, element_size, Comm, Source, Status, Tag};
use crate::endpoint::{Engine, Received};

/// A message taken out of matching by [`Comm::mprobe`] or [`Comm::improbe`]
/// (`MPI_Message`), received by [`Comm::mrecv`]. Dropping it discards the message.
#[derive(Debug)]
pub struct Message {
    received: Received,
}

impl Message {
    /// The message's sender, tag and size in elements of `T` (as `MPI_Mprobe`'s status);
    /// `source` and `tag` are `None` for the `MPI_MESSAGE_NO_PROC` message of a probe of a rank
    /// recognized as failed.
    pub fn status<T>(&self) -> Status {
        let element = std::mem::size_of::<T>().max(1);
        match &self.received.envelope {
            Some(envelope) => Status {
                source: Some(envelope.source),
                tag: Some(envelope.tag),
                count: self.received.payload.len() / element,
            },
            None => Status {
                source: None,
                tag: None,
                count: 0,
            },
        }
    }

    /// Its size in bytes (0 for the no-process message).
    pub fn len(&self) -> usize {
        self.received.payload.len()
    }

    /// Whether it carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.received.payload.is_empty()
    }

    /// Receives it into `buf` (what [`Comm::mrecv`] does).
    ///
    /// # Errors
    /// `Error::Truncated` when it does not fit (the part that fits is written).
    pub fn receive_into<T: Pod>(self, buf: &mut [T]) -> Result<Status> {
        let element = element_size::<T>()?;
        deliver_into(self.received, bytemuck::cast_slice_mut(buf), element)
    }

    /// Whether it is the message of a probe of a rank recognized as failed
    /// (`MPI_MESSAGE_NO_PROC`: receiving it completes at once, as from `MPI_PROC_NULL`).
    pub fn is_no_proc(&self) -> bool {
        self.received.envelope.is_none()
    }
}

impl Comm {
    /// Waits for a message that matches and takes it out of matching (`MPI_Mprobe`), with the
    /// failure rules of [`Comm::recv`]: a source recognized as failed gives the no-process
    /// message at once, a failed source not yet recognized `Error::ProcFailed`, and a wildcard
    /// probe with an unacknowledged failure `Error::ProcFailedPending`.
    ///
    /// # Errors
    /// As [`Comm::recv`]'s.
    pub fn mprobe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Message> {
        self.process.enter()?;
        let (source, tag) = self.selectors(source.into(), tag.into())?;
        let message = self
            .process
            .wait_for(|engine| self.mprobe_once(engine, source, tag).transpose());
        self.process
            .unlock_and_send_credits(self.process.endpoint.lock());
        message
    }

    /// Takes a matching message out of matching if one is buffered (`MPI_Improbe`);
    /// `Ok(None)` if none is and the peer may still send one.
    ///
    /// # Errors
    /// As [`Comm::mprobe`]'s.
    pub fn improbe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Option<Message>> {
        self.process.enter()?;
        let (source, tag) = self.selectors(source.into(), tag.into())?;
        self.process.progress();
        let mut engine = self.process.endpoint.lock();
        let message = self.mprobe_once(&mut engine, source, tag);
        self.process.unlock_and_send_credits(engine);
        message
    }

    /// Receives a message taken by [`Comm::mprobe`] or [`Comm::improbe`] into `buf`
    /// (`MPI_Mrecv`). The message must have been taken on this communicator.
    ///
    /// # Errors
    /// `Error::Truncated` when it does not fit (the part that fits is written).
    pub fn mrecv<T: Pod>(&self, message: Message, buf: &mut [T]) -> Result<Status> {
        message.receive_into(buf)
    }

    fn mprobe_once(
        &self,
        engine: &mut Engine,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Message>> {
        Ok(engine
            .take_matched(self.context, source, tag)?
            .map(|received| Message { received }))
    }
}
