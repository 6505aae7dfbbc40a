//! The client at the other end, as it is now. An editor's connection lasts as long as the server;
//! a LLeMbas server's link may drop and come back, and the sessions it opened go on meanwhile:
//! what they say goes to whichever connection is there (nothing, between links), and an approval
//! asked on a link that dropped is asked again on the next one.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use tokio::sync::watch;

/// Which connection it is (each link's is a new one), and the connection, while there is one.
type Current = (u64, Option<ConnectionTo<Client>>);

#[derive(Clone, Debug)]
pub(crate) struct Peer {
    current: watch::Sender<Current>,
    /// The lembas protocol the client said it speaks at `initialize` (0: none, an editor; 1: a
    /// client that said `lembas: true`), lowered to 1 once it answers a protocol-2 request with
    /// method-not-found, for the rest of the link.
    protocol: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

impl Default for Peer {
    fn default() -> Self {
        Peer { current: watch::Sender::new((0, None)), protocol: std::sync::Arc::default() }
    }
}

impl Peer {
    /// What the client said at `initialize`.
    pub(crate) fn set_protocol(&self, protocol: u8) {
        self.protocol.store(protocol, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the client gets `_lembas/question` and `_lembas/plan` (protocol 2 or later).
    pub(crate) fn asks_itself(&self) -> bool {
        self.protocol.load(std::sync::atomic::Ordering::Relaxed) >= 2
    }

    /// The client answered such a request with method-not-found: it is read as protocol 1 from
    /// now on (an editor on `serve --stdio` that says it speaks lembas' protocol).
    pub(crate) fn asks_itself_not(&self) {
        self.protocol.fetch_min(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A new connection is the client now.
    pub(crate) fn connected(&self, cx: ConnectionTo<Client>) {
        self.current.send_modify(|(generation, now)| {
            *generation += 1;
            *now = Some(cx);
        });
    }

    /// `cx` is the client unless one already is (a request that came before `initialize`).
    pub(crate) fn connected_if_none(&self, cx: &ConnectionTo<Client>) {
        if self.current.borrow().1.is_none() {
            self.connected(cx.clone());
        }
    }

    /// The connection `generation` ended: nobody is the client until the next.
    pub(crate) fn gone(&self, generation: u64) {
        self.current.send_if_modified(|(now_generation, now)| {
            let ended = *now_generation == generation && now.is_some();
            if ended {
                *now = None;
            }
            ended
        });
    }

    /// The connection now, and which it is.
    pub(crate) fn now(&self) -> (u64, Option<ConnectionTo<Client>>) {
        self.current.borrow().clone()
    }

    /// Waits for a connection other than `generation` (any, for 0 with none now).
    pub(crate) async fn next_after(&self, generation: u64) -> (u64, ConnectionTo<Client>) {
        let mut seen = self.current.subscribe();
        let found = seen
            .wait_for(|(now_generation, now)| now.is_some() && *now_generation != generation)
            .await
            .map(|current| (current.0, current.1.clone()));
        match found {
            Ok((now, Some(cx))) => (now, cx),
            // The sender lives as long as the server: never reached while anyone waits.
            _ => std::future::pending().await,
        }
    }

    /// Waits until the connection `generation` is no longer the client.
    pub(crate) async fn left(&self, generation: u64) {
        let mut seen = self.current.subscribe();
        let _ = seen.wait_for(|(now_generation, now)| *now_generation != generation || now.is_none()).await;
    }
}
