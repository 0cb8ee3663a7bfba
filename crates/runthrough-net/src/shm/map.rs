// SPDX-License-Identifier: MIT OR Apache-2.0
//! Anonymous shared memory that two processes map: a memfd (no name in `/dev/shm`, nothing left
//! behind when the processes die), its mapping, and passing its descriptor over a Unix socket.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;

use rustix::fs::{
    fcntl_add_seals, fcntl_get_seals, fstat, ftruncate, memfd_create, MemfdFlags, SealFlags,
};
use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};
use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use super::ring::Region;

/// A shared, read-write mapping of a whole memfd, with the descriptor that another process
/// maps too. Unmapped when dropped; the memory itself lives while any process maps it or holds
/// the descriptor.
///
/// # Invariants
///
/// `base..base + len` is one `MAP_SHARED` mapping of the whole file, page-aligned (so 64-byte
/// aligned), owned by this value alone.
pub struct SharedMapping {
    fd: OwnedFd,
    base: NonNull<u8>,
    len: usize,
}

impl std::fmt::Debug for SharedMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedMapping")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl SharedMapping {
    /// Creates a memfd of `len` bytes (zeroed, close-on-exec), seals it against shrinking and
    /// growing (so a process that maps it never faults on a page cut away under it; see
    /// [`SharedMapping::map_sealed`]) and maps it.
    ///
    /// # Errors
    ///
    /// A zero `len`, or the kernel refusing the memfd, its size, its seals or the mapping (the
    /// error says which).
    pub fn create(name: &str, len: usize) -> io::Result<SharedMapping> {
        SharedMapping::create_with(name, len, true)
    }

    /// [`SharedMapping::create`] without the seals (tests of the check that wants them).
    #[doc(hidden)]
    pub fn create_unsealed(name: &str, len: usize) -> io::Result<SharedMapping> {
        SharedMapping::create_with(name, len, false)
    }

    fn create_with(name: &str, len: usize, sealed: bool) -> io::Result<SharedMapping> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a shared mapping of 0 bytes",
            ));
        }
        let context = |what: &str, error: rustix::io::Errno| {
            io::Error::new(
                io::Error::from(error).kind(),
                format!("shared memory of {len} bytes: {what}: {error}"),
            )
        };
        let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)
            .map_err(|e| context("memfd_create", e))?;
        ftruncate(&fd, len as u64).map_err(|e| context("ftruncate", e))?;
        if sealed {
            fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)
                .map_err(|e| context("sealing", e))?;
        }
        SharedMapping::map_len(fd, len)
    }

    /// [`SharedMapping::map`] for memory that another process owns and might misuse: the file
    /// must be sealed against shrinking and growing, so its length, checked here, holds for
    /// as long as it is mapped.
    ///
    /// # Errors
    ///
    /// `InvalidData` for a file without those seals; those of [`SharedMapping::map`].
    pub fn map_sealed(fd: OwnedFd, min_len: usize) -> io::Result<SharedMapping> {
        let seals = fcntl_get_seals(&fd).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a sealed memfd: {e}"),
            )
        })?;
        if !seals.contains(SealFlags::SHRINK | SealFlags::GROW) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "shared memory not sealed against resizing",
            ));
        }
        SharedMapping::map(fd, min_len)
    }

    /// Maps the whole of a memfd another process made (as received by [`recv_fd`]), requiring
    /// at least `min_len` bytes.
    ///
    /// # Errors
    ///
    /// A file shorter than `min_len` (or longer than this address space), or the kernel
    /// refusing the mapping.
    pub fn map(fd: OwnedFd, min_len: usize) -> io::Result<SharedMapping> {
        let size = fstat(&fd)
            .map_err(|e| io::Error::new(io::Error::from(e).kind(), format!("fstat: {e}")))?
            .st_size;
        let len = usize::try_from(size).unwrap_or(0);
        if len < min_len.max(1) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("shared memory of {size} bytes, below the {min_len} needed"),
            ));
        }
        SharedMapping::map_len(fd, len)
    }

    #[allow(unsafe_code)]
    fn map_len(fd: OwnedFd, len: usize) -> io::Result<SharedMapping> {
        // SAFETY: a new mapping at an address the kernel picks (null hint, no MAP_FIXED), so no
        // existing memory is affected; the result is owned by the value built below.
        let base = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!("mmap of {len} bytes of shared memory: {e}"),
            )
        })?;
        let base = NonNull::new(base.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(SharedMapping { fd, base, len })
    }

    /// The memfd, to pass to the peer ([`send_fd`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for SharedMapping {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: `base..base + len` is the mapping this value alone owns (the invariant), and
        // nothing borrows it past this value's life (`Region` users hold the value).
        let _ = unsafe { munmap(self.base.as_ptr().cast(), self.len) };
    }
}

// SAFETY: the mapping is valid for reads and writes for `len` bytes while the value lives (it
// is unmapped only in `drop`), page-aligned, and accessed only through raw pointers and atomics.
#[allow(unsafe_code)]
unsafe impl Region for SharedMapping {
    fn base(&self) -> NonNull<u8> {
        self.base
    }
    fn len(&self) -> usize {
        self.len
    }
}

// SAFETY: the value holds a descriptor and a mapping, both usable from any thread; concurrent
// access to the memory is the ring's business (atomics), as `Region` says.
#[allow(unsafe_code)]
unsafe impl Send for SharedMapping {}
// SAFETY: as for `Send`: `&SharedMapping` gives only the base pointer and the descriptor.
#[allow(unsafe_code)]
unsafe impl Sync for SharedMapping {}

/// Sends `fd` over a connected Unix socket with one byte of data (SCM_RIGHTS).
///
/// # Errors
///
/// The socket's error.
pub fn send_fd(socket: impl AsFd, fd: BorrowedFd<'_>) -> io::Result<()> {
    let fds = [fd];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for SCM_RIGHTS"));
    }
    sendmsg(
        socket,
        &[IoSlice::new(b"F")],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// Sends one byte without a descriptor: "I have none to give" where the peer calls
/// [`recv_optional_fd`].
///
/// # Errors
///
/// The socket's error.
pub fn send_no_fd(socket: impl AsFd) -> io::Result<()> {
    let sent = rustix::net::send(socket, b"N", SendFlags::NOSIGNAL)?;
    if sent == 1 {
        Ok(())
    } else {
        Err(io::Error::new(io::ErrorKind::WriteZero, "sending one byte"))
    }
}

/// Receives what [`send_fd`] or [`send_no_fd`] sent: the descriptor, or `None`.
///
/// # Errors
///
/// The socket's error, an end of stream, or more than one descriptor.
pub fn recv_optional_fd(socket: impl AsFd) -> io::Result<Option<OwnedFd>> {
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if received.bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the socket closed before a descriptor came",
        ));
    }
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if fds.len() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "more than one descriptor with the message",
        ));
    }
    Ok(fds.pop())
}

/// Receives one descriptor sent by [`send_fd`].
///
/// # Errors
///
/// The socket's error, an end of stream, or a message without exactly one descriptor.
pub fn recv_fd(socket: impl AsFd) -> io::Result<OwnedFd> {
    recv_optional_fd(socket)?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "expected exactly one descriptor with the message",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shm::ring::{init, region_len, Consumer, Producer, Push};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;

    /// A ring in a memfd, its descriptor passed over a socket pair and mapped a second time:
    /// entries written through one mapping are read through the other.
    #[test]
    fn memfd_passed_over_a_socket_shares_the_ring() {
        let mapping = SharedMapping::create("rt-test", region_len(4096)).unwrap();
        init(&mapping).unwrap();
        let (a, b) = UnixStream::pair().unwrap();
        send_fd(&a, mapping.fd()).unwrap();
        let fd = recv_fd(&b).unwrap();
        let other = SharedMapping::map(fd, region_len(4096)).unwrap();
        assert_ne!(other.base(), mapping.base());
        let mut producer = Producer::attach(Arc::new(mapping)).unwrap();
        let mut consumer = Consumer::attach(other).unwrap();
        assert_eq!(producer.try_push(7, b"hello").unwrap(), Push::Done);
        let mut out = Vec::new();
        assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(7));
        assert_eq!(out, b"hello");
    }

    /// A mapping too small for what the receiver needs, and a zero-length one, are clear errors.
    #[test]
    fn too_small_or_empty_mappings_are_refused() {
        let mapping = SharedMapping::create("rt-test", 100).unwrap();
        let fd = mapping.fd().try_clone_to_owned().unwrap();
        let error = SharedMapping::map(fd, region_len(4096)).unwrap_err();
        assert!(
            error.to_string().contains("below the 4352 needed"),
            "{error}"
        );
        assert!(SharedMapping::create("rt-test", 0).is_err());
        // A ring in a region too small, or whose data area is no power of two, is refused.
        assert!(init(&mapping).is_err());
        // A descriptor-less message is refused by the receiver.
        let (a, b) = UnixStream::pair().unwrap();
        std::io::Write::write_all(&mut &a, b"x").unwrap();
        assert!(recv_fd(&b).is_err());
        drop(a);
        assert_eq!(
            recv_fd(&b).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
