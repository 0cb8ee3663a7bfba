// SPDX-License-Identifier: MIT OR Apache-2.0
//! The two kinds of connection between ranks: TCP, and Unix-domain stream sockets between ranks
//! that share a host, a network namespace and a mount namespace.
//!
//! The socket transport (in the `runthrough` crate) sees one [`Stream`] type whatever the kind; everything above
//! the socket (framing, the handshake, heartbeats, fencing, draining) is the same for both.
//!
//! # Addresses
//! A rank publishes one word: its TCP address, optionally followed by `,unix:PATH,host:ID`
//! ([`Address`]). `ID` names where the path means something ([`local_identity`]): the boot, the
//! network namespace and the mount namespace. A peer with the same `ID` connects to `PATH`; any
//! other peer, or a peer whose Unix connect fails, uses the TCP address. The network namespace
//! is part of `ID` because a filesystem socket crosses network namespaces, and a job spread over
//! namespaces on purpose (a cut link between them) must not be joined again through the
//! filesystem. A Unix socket is not trusted by itself: the HMAC handshake runs on it as on TCP.
//!
//! # The socket directory
//! Under rtrun the listener's socket lives in the private directory (mode 0700) rtrun creates
//! per job and names in [`crate::launch::ENV_SOCKET_DIR`]; rtrun removes it when the job ends
//! (and the ranks, when they halt because rtrun died). Without it (Hydra, srun), the socket is
//! an abstract one of a random name, which vanishes with the process however it ends. [`crate::launch::ENV_TRANSPORT`]` = tcp` turns Unix
//! sockets off.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// The longest path a `sockaddr_un` holds (108 bytes with its terminating zero on Linux).
const MAX_SOCKET_PATH: usize = 107;

/// The send buffer a Unix connection asks for.
const UNIX_SEND_BUFFER: usize = 4 << 20;

/// A connection to a peer.
#[derive(Debug)]
pub enum Stream {
    /// A TCP connection.
    Tcp(TcpStream),
    /// A Unix-domain stream socket, between ranks of one host.
    Unix(UnixStream),
}

impl Stream {
    /// `"tcp"` or `"unix"`, for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            Stream::Tcp(_) => "tcp",
            Stream::Unix(_) => "unix",
        }
    }

    /// Another handle on the same connection.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    /// Shuts down reading, writing or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        }
    }

    /// How long a read waits (`None`: for ever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }

    /// How long a write waits (`None`: for ever).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(timeout),
            Stream::Unix(s) => s.set_write_timeout(timeout),
        }
    }

    /// No Nagle delay on TCP (Unix sockets have none); a Unix socket asks for a send buffer
    /// like the one TCP grows to on loopback (the kernel caps it at `net.core.wmem_max`), so
    /// that a large message does not go through in 200 KiB steps.
    pub fn tune(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nodelay(true),
            Stream::Unix(s) => {
                let _ = rustix::net::sockopt::set_socket_send_buffer_size(s, UNIX_SEND_BUFFER);
                Ok(())
            }
        }
    }
}

impl AsFd for Stream {
    #[inline]
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
        }
    }
}

impl Read for &Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
            Stream::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

/// Writes go through `send(MSG_NOSIGNAL)` for both kinds: a peer that has gone makes the write
/// fail with `EPIPE`, never raise SIGPIPE (std writes a `UnixStream`, and any vectored write,
/// with plain `write`/`writev`, and a C program linking the library keeps SIGPIPE's default
/// action, which kills the process).
impl Write for &Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(rustix::net::send(
            self.as_fd(),
            buf,
            rustix::net::SendFlags::NOSIGNAL,
        )?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A listener of either kind.
#[derive(Debug)]
pub enum Listener {
    /// A TCP listener.
    Tcp(TcpListener),
    /// A Unix-domain listener.
    Unix(UnixListener),
}

impl Listener {
    /// The next connection and a description of where it came from.
    pub fn accept(&self) -> io::Result<(Stream, String)> {
        match self {
            Listener::Tcp(l) => {
                let (s, from) = l.accept()?;
                Ok((Stream::Tcp(s), from.to_string()))
            }
            Listener::Unix(l) => {
                let (s, _) = l.accept()?;
                Ok((Stream::Unix(s), "a unix socket".into()))
            }
        }
    }
}

/// Where a rank accepts its peers, as it publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// `IP:PORT`.
    pub tcp: String,
    /// The Unix socket and the identity of the place where its path is valid.
    pub unix: Option<(PathBuf, String)>,
    /// The identity of the place the rank runs in ([`local_identity`]) when it publishes no
    /// Unix socket (TCP only, or a path that cannot be written): for telling which ranks share
    /// a host, never for reaching them.
    pub host: Option<String>,
}

impl Address {
    /// Reads a published address word (a bare TCP address is one). An empty host identity
    /// names no host.
    pub fn parse(word: &str) -> Address {
        let mut parts = word.split(',');
        let tcp = parts.next().unwrap_or_default().to_string();
        let (mut path, mut host) = (None, None);
        for part in parts {
            if let Some(p) = part.strip_prefix("unix:") {
                path = Some(PathBuf::from(p));
            } else if let Some(h) = part.strip_prefix("host:").filter(|h| !h.is_empty()) {
                host = Some(h.to_string());
            }
        }
        match path {
            Some(path) => Address {
                tcp,
                unix: host.map(|host| (path, host)),
                host: None,
            },
            None => Address {
                tcp,
                unix: None,
                host,
            },
        }
    }

    /// The published word; the Unix part only when its path can be written in it, the host's
    /// identity whenever it is known.
    pub fn word(&self) -> String {
        if let Some((path, host)) = &self.unix {
            if let Some(p) = path.to_str().filter(|p| publishable(p)) {
                return format!("{},unix:{p},host:{host}", self.tcp);
            }
        }
        match self.host() {
            Some(host) => format!("{},host:{host}", self.tcp),
            None => self.tcp.clone(),
        }
    }

    /// The identity of the host (boot, network and mount namespace) that published this
    /// address ([`local_identity`]), if it said.
    pub fn host(&self) -> Option<&str> {
        match &self.unix {
            Some((_, host)) => Some(host),
            None => self.host.as_deref(),
        }
    }

    /// The Unix path to use from a rank whose identity is `here` (`None`: Unix sockets off).
    pub fn unix_path_from(&self, here: Option<&str>) -> Option<&Path> {
        let here = here?;
        let (path, host) = self.unix.as_ref()?;
        (host == here).then_some(path.as_path())
    }
}

/// Whether a path fits in an address word and a `sockaddr_un`.
fn publishable(path: &str) -> bool {
    path.len() <= MAX_SOCKET_PATH && !path.contains([',', ' ', '\n'])
}

/// Where a filesystem Unix socket path reaches the same socket: the boot, the network namespace
/// and the mount namespace, hashed (16 hex digits). `None` when `/proc` does not say.
pub fn local_identity() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let net = std::fs::read_link("/proc/self/ns/net").ok()?;
    let mnt = std::fs::read_link("/proc/self/ns/mnt").ok()?;
    let mut hash = Sha256::new();
    hash.update(boot.trim().as_bytes());
    hash.update(b"\0");
    hash.update(net.as_os_str().as_encoded_bytes());
    hash.update(b"\0");
    hash.update(mnt.as_os_str().as_encoded_bytes());
    let digest = hash.finalize();
    Some(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// A private directory for sockets (mode 0700, owned by this user), created here.
pub fn create_private_dir(parent: &Path, prefix: &str) -> io::Result<PathBuf> {
    for _ in 0..16 {
        let nonce = crate::auth::random_token();
        let name: String = nonce[..8].iter().map(|b| format!("{b:02x}")).collect();
        let dir = parent.join(format!("{prefix}{name}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a socket directory",
    ))
}

/// The parent of per-job socket directories: `$XDG_RUNTIME_DIR` when set and absolute, else
/// the temporary directory.
pub fn socket_parent() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() && dir.is_dir() => dir,
        _ => std::env::temp_dir(),
    }
}

/// Whether `dir` is a directory of this user that nobody else may enter (a directory named by
/// the launcher is checked before a socket is bound in it).
pub fn is_private_dir(dir: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    meta.is_dir() && meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o077 == 0
}

/// A bound Unix listener. A socket file goes when it is dropped, and so does the launcher's
/// directory once it is empty (the launcher removes it anyway; a rank that halts because its
/// launcher died cleans up after it); an abstract socket leaves nothing behind.
#[derive(Debug)]
pub struct UnixSocket {
    /// The socket's path, or `@NAME` for an abstract socket.
    pub path: PathBuf,
    in_filesystem: bool,
}

impl UnixSocket {
    /// Binds `NAME` in the launcher's directory `dir` (checked private and absolute), or,
    /// without one, an abstract socket of a random name: no launcher would remove a file of a
    /// rank killed under Hydra or srun. An abstract name is visible to every process of the
    /// network namespace, as a loopback port is; the handshake refuses whoever is not of the
    /// job, and the network namespace is part of [`local_identity`].
    pub fn bind(dir: Option<&Path>, name: &str) -> io::Result<(UnixListener, UnixSocket)> {
        match dir {
            Some(dir) => {
                if !dir.is_absolute() || !is_private_dir(dir) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{} is not an absolute private directory", dir.display()),
                    ));
                }
                let path = dir.join(name);
                let listener = UnixListener::bind(&path)?;
                Ok((
                    listener,
                    UnixSocket {
                        path,
                        in_filesystem: true,
                    },
                ))
            }
            None => {
                let nonce = crate::auth::random_token();
                let random: String = nonce[..8].iter().map(|b| format!("{b:02x}")).collect();
                let abstract_name = format!("runthrough-{random}-{name}");
                let address = SocketAddr::from_abstract_name(abstract_name.as_bytes())?;
                let listener = UnixListener::bind_addr(&address)?;
                Ok((
                    listener,
                    UnixSocket {
                        path: PathBuf::from(format!("@{abstract_name}")),
                        in_filesystem: false,
                    },
                ))
            }
        }
    }
}

/// Connects to a published Unix socket: a path, or `@NAME` for an abstract socket.
pub fn connect_unix(path: &Path) -> io::Result<UnixStream> {
    match path.to_str().and_then(|p| p.strip_prefix('@')) {
        Some(name) => UnixStream::connect_addr(&SocketAddr::from_abstract_name(name.as_bytes())?),
        None => UnixStream::connect(path),
    }
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        if self.in_filesystem {
            let _ = std::fs::remove_file(&self.path);
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::remove_dir(dir); // fails while other ranks' sockets are there
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_name_where_their_path_is_valid() {
        let plain = Address::parse("127.0.0.1:5");
        assert_eq!(plain.tcp, "127.0.0.1:5");
        assert_eq!(plain.unix, None);
        assert_eq!(plain.word(), "127.0.0.1:5");
        let both = Address {
            tcp: "127.0.0.1:5".into(),
            unix: Some(("/run/x/0".into(), "abcd".into())),
            host: None,
        };
        let word = both.word();
        assert_eq!(word, "127.0.0.1:5,unix:/run/x/0,host:abcd");
        assert_eq!(Address::parse(&word), both);
        assert_eq!(
            both.unix_path_from(Some("abcd")),
            Some(Path::new("/run/x/0"))
        );
        assert_eq!(both.unix_path_from(Some("other")), None);
        assert_eq!(both.unix_path_from(None), None);
        // A path that cannot be written in the word is left out.
        let spaced = Address {
            tcp: "127.0.0.1:5".into(),
            unix: Some(("/run/a b/0".into(), "abcd".into())),
            host: None,
        };
        assert_eq!(spaced.word(), "127.0.0.1:5,host:abcd");
        let parsed = Address::parse(&spaced.word());
        assert_eq!((&parsed.unix, parsed.host()), (&None, Some("abcd")));
        // TCP only: the host's identity alone, which reaches nothing.
        let tcp_only = Address {
            tcp: "127.0.0.1:5".into(),
            unix: None,
            host: Some("abcd".into()),
        };
        assert_eq!(tcp_only.word(), "127.0.0.1:5,host:abcd");
        assert_eq!(Address::parse(&tcp_only.word()), tcp_only);
        assert_eq!(tcp_only.unix_path_from(Some("abcd")), None);
    }

    #[test]
    fn the_identity_is_stable_and_short() {
        let here = local_identity().expect("/proc is readable here");
        assert_eq!(here.len(), 16);
        assert_eq!(local_identity(), Some(here));
    }

    #[test]
    fn sockets_go_when_dropped_and_their_directory_once_empty() {
        let dir = create_private_dir(&std::env::temp_dir(), "runthrough-test-").unwrap();
        assert!(is_private_dir(&dir));
        let (zero, zero_socket) = UnixSocket::bind(Some(&dir), "0").unwrap();
        let (one, one_socket) = UnixSocket::bind(Some(&dir), "1").unwrap();
        assert!(connect_unix(&zero_socket.path).is_ok());
        drop((zero, zero_socket));
        assert!(dir.exists(), "rank 1's socket is still there");
        assert!(connect_unix(&one_socket.path).is_ok());
        drop((one, one_socket));
        assert!(!dir.exists());
        assert!(UnixSocket::bind(Some(Path::new("relative")), "0").is_err());
    }

    #[test]
    fn without_a_directory_the_socket_is_abstract() {
        let (listener, socket) = UnixSocket::bind(None, "0").unwrap();
        let path = socket.path.to_str().unwrap().to_string();
        assert!(path.starts_with("@runthrough-"), "{path}");
        assert!(connect_unix(&socket.path).is_ok());
        drop((listener, socket));
        assert!(connect_unix(Path::new(&path)).is_err());
    }
}
