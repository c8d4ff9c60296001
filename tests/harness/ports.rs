//! Ports held for the tests' own servers and for "nobody is there".

/// A port of 127.0.0.1 held for a test: bound with `SO_REUSEADDR` but not
/// listening, so a connection to it is refused (nothing is there) while no
/// other socket can take it (an ephemeral port of an outgoing connection,
/// another test's `127.0.0.1:0`). Releasing a port and binding it again later
/// raced with those: CI once saw the test SMTP server's bind fail with
/// "address already in use". A server that also sets `SO_REUSEADDR` (asyncio
/// does) binds beside it, which Linux allows while neither listens; drop the
/// hold once that server listens.
pub struct HeldPort {
    socket: socket2::Socket,
    port: u16,
}

impl HeldPort {
    /// A free port, held from now on.
    pub fn free() -> HeldPort {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("a socket to hold a port");
        socket
            .set_reuse_address(true)
            .expect("SO_REUSEADDR on the held port");
        let any_port: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
        socket
            .bind(&any_port.into())
            .expect("a free port on 127.0.0.1");
        let port = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.port())
            .expect("the held port's number");
        HeldPort { socket, port }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl std::fmt::Debug for HeldPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldPort")
            .field("port", &self.port)
            .field("socket", &self.socket)
            .finish()
    }
}
