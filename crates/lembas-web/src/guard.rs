//! The resolver every fetch's names go through: a name that leads to an address in the person's
//! own network (`lembas_permissions::network::is_private`) is refused unless the fetch may go
//! there — so a public-looking name that resolves to 127.0.0.1 or the cloud's metadata address
//! reaches nothing the rules would have refused by address. The check is on the addresses the
//! connection then uses, so a name cannot answer one way when checked and another when used.

use std::net::SocketAddr;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Resolves names with the system's resolver, keeping the private network out unless allowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guarded {
    pub private_ok: bool,
}

/// A name refused because it leads into the person's own network.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to {address}, on this computer or its private network")]
pub(crate) struct PrivateName {
    pub host: String,
    pub address: std::net::IpAddr,
}

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let private_ok = self.private_ok;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !private_ok && let Some(private) = found.iter().find(|a| lembas_permissions::network::is_private(a.ip()))
            {
                return Err(
                    Box::new(PrivateName { host, address: private.ip() }) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_name_that_resolves_into_the_private_network_is_refused_unless_allowed() {
        let name = |n: &str| -> Name { n.parse().unwrap() };
        let refused = Guarded { private_ok: false }.resolve(name("localhost")).await.err().expect("refused");
        assert!(refused.to_string().starts_with("localhost resolves to "), "{refused}");
        let allowed = Guarded { private_ok: true }.resolve(name("localhost")).await.expect("resolved");
        assert!(allowed.into_iter().all(|a| a.ip().is_loopback()));
    }
}
