// SPDX-License-Identifier: MIT OR Apache-2.0
//! Where a rank's listener binds (semantics §4: loopback unless an option names an address or an
//! interface): the value of [`crate::launch::ENV_BIND`] and of `rtrun --bind`.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};

use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

/// The local address that `spec` names:
/// - an IP address: itself;
/// - `route:HOST` (HOST an address, or `ADDRESS:PORT`): the address of the interface this host
///   uses to reach HOST (no packet is sent), so one setting names the right interface on every
///   host of a job, and in every network namespace;
/// - otherwise the name of a network interface (`eth0`, `veth0`): its first IPv4 address.
///
/// # Errors
/// `NotFound` for an interface that does not exist or has no IPv4 address; the error of the
/// route look-up or of the netlink query otherwise.
pub fn bind_address(spec: &str) -> io::Result<IpAddr> {
    if let Ok(address) = spec.parse::<IpAddr>() {
        return Ok(address);
    }
    if let Some(host) = spec.strip_prefix("route:") {
        let target: SocketAddr = match host.parse::<IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, 9),
            Err(_) if host.contains(':') => resolve(host)?,
            Err(_) => resolve(&format!("{host}:9"))?,
        };
        let unspecified: SocketAddr = if target.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(unspecified)?;
        socket.connect(target)?;
        return Ok(socket.local_addr()?.ip());
    }
    interface_address(spec)
}

fn resolve(host_port: &str) -> io::Result<SocketAddr> {
    host_port.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{host_port} does not resolve"),
        )
    })
}

/// The first IPv4 address of interface `name`, asked of the kernel over rtnetlink.
fn interface_address(name: &str) -> io::Result<IpAddr> {
    let not_found = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{name:?} is neither an IP address, route:HOST nor an interface with an IPv4 address"),
        )
    };
    let probe = UdpSocket::bind("0.0.0.0:0")?;
    let index = rustix::net::netdevice::name_to_index(&probe, name).map_err(|_| not_found())?;
    let fd = rustix::net::socket(AddressFamily::NETLINK, SocketType::RAW, None)?;
    let request = dump_request();
    rustix::net::sendto(
        &fd,
        &request,
        SendFlags::empty(),
        &SocketAddrNetlink::new(0, 0),
    )?;
    let mut buffer = vec![0u8; 32 << 10];
    let mut found = None;
    loop {
        let (n, _) = rustix::net::recv(&fd, &mut buffer[..], RecvFlags::empty())?;
        match parse_addresses(&buffer[..n.min(buffer.len())], index, &mut found) {
            Parsed::More => continue,
            Parsed::Done => break,
            Parsed::Failed(errno) => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
    found.map(IpAddr::V4).ok_or_else(not_found)
}

const NLMSG_HEADER: usize = 16;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const AF_INET: u8 = 2;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;

/// An `RTM_GETADDR` dump request for IPv4 addresses: a netlink header and an `ifaddrmsg`.
fn dump_request() -> Vec<u8> {
    let mut request = Vec::with_capacity(24);
    request.extend_from_slice(&24u32.to_ne_bytes());
    request.extend_from_slice(&RTM_GETADDR.to_ne_bytes());
    request.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    request.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    request.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel
    request.extend_from_slice(&[AF_INET, 0, 0, 0]);
    request.extend_from_slice(&0u32.to_ne_bytes()); // every interface
    request
}

#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    More,
    Done,
    Failed(i32),
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Reads one datagram of the dump; keeps in `found` the first IPv4 address of interface
/// `index` (its `IFA_LOCAL`, else its `IFA_ADDRESS`). Malformed input ends the dump.
fn parse_addresses(datagram: &[u8], index: u32, found: &mut Option<Ipv4Addr>) -> Parsed {
    let mut at = 0;
    while at + NLMSG_HEADER <= datagram.len() {
        let (Some(len), Some(kind)) = (u32_at(datagram, at), u16_at(datagram, at + 4)) else {
            return Parsed::Done;
        };
        let len = len as usize;
        if len < NLMSG_HEADER || at + len > datagram.len() {
            return Parsed::Done;
        }
        let message = &datagram[at..at + len];
        match kind {
            NLMSG_DONE => return Parsed::Done,
            NLMSG_ERROR => {
                let errno = u32_at(message, NLMSG_HEADER).map_or(0, |e| e as i32);
                return if errno == 0 {
                    Parsed::Done
                } else {
                    Parsed::Failed(-errno)
                };
            }
            RTM_NEWADDR if found.is_none() => {
                let body = &message[NLMSG_HEADER..];
                if body.len() >= 8 && body[0] == AF_INET && u32_at(body, 4) == Some(index) {
                    *found = ipv4_attribute(&body[8..]);
                }
            }
            _ => {}
        }
        at += align4(len);
    }
    Parsed::More
}

fn ipv4_attribute(mut attributes: &[u8]) -> Option<Ipv4Addr> {
    let mut address = None;
    while attributes.len() >= 4 {
        let len = u16_at(attributes, 0)? as usize;
        let kind = u16_at(attributes, 2)?;
        if len < 4 || len > attributes.len() {
            return address;
        }
        if len == 8 {
            let ip = Ipv4Addr::new(attributes[4], attributes[5], attributes[6], attributes[7]);
            match kind {
                IFA_LOCAL => return Some(ip),
                IFA_ADDRESS => address = address.or(Some(ip)),
                _ => {}
            }
        }
        attributes = &attributes[align4(len).min(attributes.len())..];
    }
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_routes() {
        assert_eq!(
            bind_address("10.1.2.3").unwrap(),
            "10.1.2.3".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            bind_address("route:127.0.0.1").unwrap(),
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            bind_address("route:127.0.0.1:5000").unwrap(),
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
    }

    /// The loopback interface has 127.0.0.1 in every network namespace.
    #[test]
    fn an_interface_name_gives_its_ipv4_address() {
        assert_eq!(
            bind_address("lo").unwrap(),
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
        let missing = bind_address("no-such-if0").unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound, "{missing}");
    }

    fn message(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&((NLMSG_HEADER + body.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(body);
        while m.len() % 4 != 0 {
            m.push(0);
        }
        m
    }

    fn address(index: u32, attributes: &[(u16, [u8; 4])]) -> Vec<u8> {
        let mut body = vec![AF_INET, 24, 0, 0];
        body.extend_from_slice(&index.to_ne_bytes());
        for (kind, ip) in attributes {
            body.extend_from_slice(&8u16.to_ne_bytes());
            body.extend_from_slice(&kind.to_ne_bytes());
            body.extend_from_slice(ip);
        }
        message(RTM_NEWADDR, &body)
    }

    /// Dumps as the kernel sends them, and malformed ones (which end the dump, never panic).
    #[test]
    fn netlink_dumps_parse() {
        let mut dump = address(1, &[(IFA_LOCAL, [127, 0, 0, 1])]);
        dump.extend(address(
            5,
            &[(IFA_ADDRESS, [10, 0, 0, 9]), (IFA_LOCAL, [10, 0, 0, 1])],
        ));
        let mut found = None;
        assert_eq!(parse_addresses(&dump, 5, &mut found), Parsed::More);
        assert_eq!(found, Some(Ipv4Addr::new(10, 0, 0, 1)));
        let mut found = None;
        let done = message(NLMSG_DONE, &[0; 4]);
        assert_eq!(parse_addresses(&done, 5, &mut found), Parsed::Done);
        assert_eq!(found, None);
        let error = message(NLMSG_ERROR, &(-13i32).to_ne_bytes());
        assert_eq!(parse_addresses(&error, 5, &mut found), Parsed::Failed(13));
        for cut in 0..dump.len() {
            let _ = parse_addresses(&dump[..cut], 5, &mut None);
        }
        let mut bad = dump.clone();
        bad[0] = 3; // a length shorter than a header
        assert_eq!(parse_addresses(&bad, 5, &mut None), Parsed::Done);
    }
}
