// SPDX-License-Identifier: MIT OR Apache-2.0
//! Shared memory between the ranks of one host (semantics §4 "Transports on one host"; issue 12
//! step (b)): a single-producer/single-consumer ring of variable-size entries laid out in a
//! region that two processes map, and the memfd mapping that holds it.
//!
//! The contract: the ring works on any [`Region`] and never assumes it owns the memory; each
//! side treats what the other writes as untrusted input, so garbage is a typed
//! [`RingError::Corrupt`] (the transport fences the peer), never a panic, an access outside the
//! region or a loop without bound; an entry is visible only once published with a release store,
//! so a writer killed inside an entry leaves nothing a reader can take. The layout, the wrap
//! rule, the ordering argument, how several writer threads share a ring and the doorbell are in
//! [`ring`]'s docs. The transport that uses it (rings made on first use, chunking, fencing) is
//! step (c), in the `runthrough` crate.
//!
//! ```
//! use std::os::unix::net::UnixStream;
//! use std::sync::Arc;
//! use runthrough_net::shm::{self, Consumer, Producer, Push, SharedMapping};
//!
//! // The receiver makes the memory for its inbound ring and passes the memfd to the sender.
//! let mine = SharedMapping::create("inbound", shm::region_len(1 << 16)).unwrap();
//! shm::init(&mine).unwrap();
//! let (receiver_side, sender_side) = UnixStream::pair().unwrap();
//! shm::send_fd(&receiver_side, mine.fd()).unwrap();
//! let theirs = SharedMapping::map(shm::recv_fd(&sender_side).unwrap(), shm::region_len(64)).unwrap();
//!
//! // Several sender threads would share the producer behind a mutex.
//! let producer = std::sync::Mutex::new(Producer::attach(Arc::new(theirs)).unwrap());
//! let mut consumer = Consumer::attach(mine).unwrap();
//! assert_eq!(producer.lock().unwrap().try_push(3, b"payload").unwrap(), Push::Done);
//! let mut out = Vec::new();
//! assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(3));
//! assert_eq!(out, b"payload");
//! assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
//! // Larger than half the ring: refused, to be sent in chunks.
//! let big = vec![0; 1 << 15];
//! assert!(matches!(
//!     producer.lock().unwrap().try_push(0, &big),
//!     Err(shm::RingError::TooLarge { .. })
//! ));
//! ```

pub mod inbox;
mod map;
pub mod ring;

pub use inbox::{Bell, Inbox, Slot};
pub use map::{recv_fd, recv_optional_fd, send_fd, send_no_fd, SharedMapping};
pub use ring::{
    init, max_payload, region_len, Consumer, Corruption, HeapRegion, Memory, Producer, Push,
    Region, RingError,
};
