//! The port of a page served at `http://localhost:PORT`, held in both loopback families.
//!
//! A browser resolves `localhost` to `::1` and `127.0.0.1` and tries `::1` first. A listener
//! on `127.0.0.1:PORT` alone leaves `[::1]:PORT` to any local process: it would receive the
//! person's browser, the page's link (an enrolment code) and the person's passkey ceremony,
//! whose origin (`http://localhost:PORT`) is the real page's. So the other family's address on
//! the same port is bound too, and kept bound without listening: nobody else can take it, and
//! a browser trying it is refused at once and goes on to the listener. When the other address
//! is taken, the port is not used: another free port is tried, or a fixed one is refused,
//! naming the address.
//!
//! When the machine has no IPv6 at all (a kernel without it: no IPv6 socket can be made),
//! nobody can bind `::1` and `127.0.0.1` alone is safe. When IPv6 is there but `::1` is not
//! configured, an unprivileged process could still bind it with `IPV6_FREEBIND` (Linux) and
//! receive browsers once `::1` comes up: the address is held the same way here.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use socket2::{Domain, Protocol, Socket, Type};

/// How many free ports are tried before giving up, when each one's other family is taken.
const ATTEMPTS: usize = 16;

/// Why the page's loopback port cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoopbackError {
    /// The other loopback family's address on the port is held by another process.
    #[error(
        "{addr} is held by another process, which would receive the browsers opening http://localhost:{port}: choose another port, or stop that process"
    )]
    Taken {
        /// The address taken.
        addr: SocketAddr,
        /// The port.
        port: u16,
    },
    /// Every free port tried had its other family taken.
    #[error(
        "no loopback port could be held in both families ({ATTEMPTS} free ports tried): another process holds [::1] on each"
    )]
    NoFreePort,
    /// Binding failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the system said.
        source: io::Error,
    },
}

/// A listener on `127.0.0.1:port` with `[::1]:port` held beside it.
#[derive(Debug)]
pub(crate) struct LoopbackPort {
    /// The listener, non-blocking, for Tokio.
    pub(crate) listener: std::net::TcpListener,
    /// Its port.
    pub(crate) port: u16,
    /// The other family's address, held for as long as this lives.
    pub(crate) held: Option<Socket>,
}

/// Listens on `127.0.0.1:port` (`0`: a free port) and holds `[::1]` on the same port.
pub(crate) fn bind(port: u16) -> Result<LoopbackPort, LoopbackError> {
    let attempts = if port == 0 { ATTEMPTS } else { 1 };
    for _ in 0..attempts {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let bind_error = |source| LoopbackError::Bind { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let bound = listener.local_addr().map_err(bind_error)?.port();
        match hold_other_family(SocketAddr::from((Ipv4Addr::LOCALHOST, bound))) {
            Ok(held) => {
                return Ok(LoopbackPort {
                    listener,
                    port: bound,
                    held,
                });
            }
            Err(LoopbackError::Taken { addr, .. }) if port == 0 => {
                tracing::warn!(%addr, "a loopback port's other family is held by another process; trying another port");
            }
            Err(error) => return Err(error),
        }
    }
    Err(LoopbackError::NoFreePort)
}

/// For a server listening on `local` and reached as `http://localhost:PORT` on that port:
/// holds the loopback address of the family `local` does not cover. `None` when there is
/// nothing to hold (`local` covers both, or the machine has no IPv6).
pub(crate) fn hold_other_family(local: SocketAddr) -> Result<Option<Socket>, LoopbackError> {
    let other = match local.ip() {
        IpAddr::V4(ip) if ip.is_loopback() || ip.is_unspecified() => {
            SocketAddr::from((Ipv6Addr::LOCALHOST, local.port()))
        }
        IpAddr::V6(ip) if ip.is_loopback() => SocketAddr::from((Ipv4Addr::LOCALHOST, local.port())),
        // `[::]` takes both families (the system's default), or is the operator's choice.
        _ => return Ok(None),
    };
    let socket = match Socket::new(
        Domain::for_address(other),
        Type::STREAM,
        Some(Protocol::TCP),
    ) {
        Ok(socket) => socket,
        Err(error) if other.is_ipv6() && no_ipv6(&error) => {
            tracing::info!(
                "this machine has no IPv6: nobody can take [::1], 127.0.0.1 alone serves the page"
            );
            return Ok(None);
        }
        Err(source) => {
            return Err(LoopbackError::Bind {
                addr: other,
                source,
            });
        }
    };
    let bind_error = |source| LoopbackError::Bind {
        addr: other,
        source,
    };
    if other.is_ipv6() {
        socket.set_only_v6(true).map_err(bind_error)?;
    }
    match socket.bind(&other.into()) {
        Ok(()) => Ok(Some(socket)),
        Err(error) if error.kind() == io::ErrorKind::AddrInUse => Err(LoopbackError::Taken {
            addr: other,
            port: other.port(),
        }),
        Err(error) if error.kind() == io::ErrorKind::AddrNotAvailable => {
            hold_unconfigured(socket, other)
        }
        Err(source) => Err(bind_error(source)),
    }
}

/// Holds `addr`, not configured on this machine, as anyone else could: with `FREEBIND`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn hold_unconfigured(socket: Socket, addr: SocketAddr) -> Result<Option<Socket>, LoopbackError> {
    let bind_error = |source| LoopbackError::Bind { addr, source };
    if addr.is_ipv6() {
        socket.set_freebind_v6(true).map_err(bind_error)?;
    } else {
        socket.set_freebind_v4(true).map_err(bind_error)?;
    }
    match socket.bind(&addr.into()) {
        Ok(()) => Ok(Some(socket)),
        Err(error) if error.kind() == io::ErrorKind::AddrInUse => Err(LoopbackError::Taken {
            addr,
            port: addr.port(),
        }),
        Err(source) => Err(bind_error(source)),
    }
}

/// Elsewhere an address not configured cannot be bound without privileges: nobody holds it.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn hold_unconfigured(_socket: Socket, addr: SocketAddr) -> Result<Option<Socket>, LoopbackError> {
    tracing::info!(%addr, "not configured on this machine: nobody can take it");
    Ok(None)
}

/// Whether making an IPv6 socket failed because the system has no IPv6 (`EAFNOSUPPORT`).
fn no_ipv6(error: &io::Error) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const EAFNOSUPPORT: i32 = 97;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const EAFNOSUPPORT: i32 = 47;
    error.raw_os_error() == Some(EAFNOSUPPORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this machine can bind `[::1]` at all.
    fn has_ipv6_loopback() -> bool {
        std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).is_ok()
    }

    /// Whether IPv6 sockets can be made here (`::1` itself may still be unconfigured).
    fn has_ipv6() -> bool {
        Socket::new(Domain::IPV6, Type::STREAM, None).is_ok()
    }

    /// Every way another process could try to take `addr`: plainly, with `SO_REUSEADDR` and
    /// `SO_REUSEPORT` set, and (Linux) with `FREEBIND`, which binds an unconfigured address.
    fn squat_attempts(addr: SocketAddr) -> Vec<io::Result<()>> {
        let mut out = vec![std::net::TcpListener::bind(addr).map(drop)];
        for (reuse_port, freebind) in [(false, false), (true, false), (true, true)] {
            let attempt = (|| {
                let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
                socket.set_reuse_address(true)?;
                #[cfg(unix)]
                socket.set_reuse_port(reuse_port)?;
                #[cfg(any(target_os = "linux", target_os = "android"))]
                if freebind {
                    socket.set_freebind_v6(true)?;
                }
                let _ = freebind;
                socket.bind(&addr.into())?;
                socket.listen(8)
            })();
            out.push(attempt);
        }
        out
    }

    #[test]
    fn both_families_are_held_on_the_port() {
        let port = bind(0).expect("a port");
        let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, port.port));
        if !has_ipv6() {
            // No IPv6 in this kernel: nobody can take `::1`; 127.0.0.1 alone serves.
            assert!(port.held.is_none());
            return;
        }
        // Configured or not (`FREEBIND` where it is not, on Linux), `[::1]` is held.
        if has_ipv6_loopback() || cfg!(any(target_os = "linux", target_os = "android")) {
            assert!(port.held.is_some(), "[::1]:{} left to anyone", port.port);
            for attempt in squat_attempts(v6) {
                assert!(
                    attempt.is_err(),
                    "[::1]:{} was taken beside the page",
                    port.port
                );
            }
        }
        if !has_ipv6_loopback() {
            return;
        }
        // Positive control: the same attempts on a port nobody holds succeed.
        let free = std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).expect("a v6 port");
        let free_port = free.local_addr().expect("addr").port();
        drop(free);
        let v6_free = SocketAddr::from((Ipv6Addr::LOCALHOST, free_port));
        assert!(squat_attempts(v6_free)[0].is_ok());
        // And the held address refuses connections at once rather than hanging.
        let refused = std::net::TcpStream::connect_timeout(&v6, std::time::Duration::from_secs(5));
        assert_eq!(
            refused.err().map(|e| e.kind()),
            Some(io::ErrorKind::ConnectionRefused)
        );
    }

    #[test]
    fn a_fixed_port_whose_other_family_is_taken_is_refused() {
        if !has_ipv6_loopback() {
            return;
        }
        let squatter = std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).expect("a v6 port");
        let port = squatter.local_addr().expect("addr").port();
        // The v4 side of that port may be taken by chance; the test needs it free.
        if std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_err() {
            return;
        }
        let error = bind(port).expect_err("the squatted port was used");
        assert!(matches!(error, LoopbackError::Taken { .. }), "{error}");
        assert!(
            error.to_string().contains(&format!("[::1]:{port}")),
            "{error}"
        );
        // Positive control: once the squatter is gone, the same port serves.
        drop(squatter);
        let port_now = bind(port).expect("the port, free now");
        assert_eq!(port_now.port, port);
        assert!(port_now.held.is_some());
    }

    #[test]
    fn a_server_on_one_family_gets_the_other_held() {
        let server = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a port");
        let local = server.local_addr().expect("addr");
        let held = hold_other_family(local).expect("held");
        let holds = has_ipv6_loopback()
            || (has_ipv6() && cfg!(any(target_os = "linux", target_os = "android")));
        assert_eq!(held.is_some(), holds);
        // Already held: a second holder (another process) is refused.
        if held.is_some() {
            assert!(matches!(
                hold_other_family(local),
                Err(LoopbackError::Taken { .. })
            ));
        }
        // A dual-stack `[::]` server holds nothing more.
        let any = SocketAddr::from((Ipv6Addr::UNSPECIFIED, local.port()));
        assert!(hold_other_family(any).expect("nothing to hold").is_none());
    }
}
