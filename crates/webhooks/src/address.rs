//! The guard against server-side request forgery: unless `TIDEMARK_WEBHOOKS_ALLOW_PRIVATE`
//! is set, webhook deliveries go to public unicast addresses only, never to loopback,
//! private, link-local, shared, documentation, reserved or multicast ones.
//!
//! Two checks are needed because reqwest resolves names but connects to IP literals
//! directly: [`check_url`] refuses literal addresses (and `localhost`), and
//! [`GuardedResolver`] drops non-public addresses from every name it resolves. Filtering
//! the very addresses the connection then uses leaves no gap for DNS rebinding.

use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Why a webhook URL or its address was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("the URL scheme must be http or https, not {0}")]
    UnsupportedScheme(String),
    #[error("the URL must not contain a user name or password")]
    Credentials,
    #[error("the URL has no host")]
    MissingHost,
    /// Display reads after "refused address: " in a delivery log.
    #[error("{0} is not a public address")]
    RefusedAddress(IpAddr),
    #[error("{0} resolves only to non-public addresses")]
    RefusedHost(String),
}

impl AddressError {
    /// A short, stable code for API errors and delivery logs.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnsupportedScheme(_) => "unsupported_scheme",
            Self::Credentials => "credentials_in_url",
            Self::MissingHost => "missing_host",
            Self::RefusedAddress(_) | Self::RefusedHost(_) => "refused_address",
        }
    }

    /// Finds the guard's refusal in an error's chain, such as the `reqwest::Error` of a
    /// delivery whose host resolved only to private addresses.
    pub fn find_in<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a Self> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(found) = error.downcast_ref::<Self>() {
                return Some(found);
            }
            if let Some(ResolveError::Refused(found)) = error.downcast_ref::<ResolveError>() {
                return Some(found);
            }
            current = error.source();
        }
        None
    }
}

/// Whether `ip` is a public unicast address, reachable on the internet. IPv6 addresses that
/// embed an IPv4 one (mapped, compatible, NAT64, 6to4) are judged by that IPv4 address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, network: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

fn in_v6(ip: Ipv6Addr, network: [u16; 8], prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(network)) & mask
}

/// IPv4 special-purpose ranges that are not reachable on the internet (IANA registry,
/// RFC 6890 and successors), plus multicast and the reserved 240/4.
const NON_PUBLIC_V4: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),       // "this network", unspecified
    ([10, 0, 0, 0], 8),      // private
    ([100, 64, 0, 0], 10),   // shared address space (carrier-grade NAT)
    ([127, 0, 0, 0], 8),     // loopback
    ([169, 254, 0, 0], 16),  // link-local, including cloud metadata at 169.254.169.254
    ([172, 16, 0, 0], 12),   // private
    ([192, 0, 0, 0], 24),    // IETF protocol assignments
    ([192, 0, 2, 0], 24),    // documentation TEST-NET-1
    ([192, 88, 99, 0], 24),  // deprecated 6to4 relay anycast
    ([192, 168, 0, 0], 16),  // private
    ([198, 18, 0, 0], 15),   // benchmarking
    ([198, 51, 100, 0], 24), // documentation TEST-NET-2
    ([203, 0, 113, 0], 24),  // documentation TEST-NET-3
    ([224, 0, 0, 0], 4),     // multicast
    ([240, 0, 0, 0], 4),     // reserved, and the limited broadcast 255.255.255.255
];

fn is_public_v4(ip: Ipv4Addr) -> bool {
    !NON_PUBLIC_V4
        .iter()
        .any(|&(network, prefix)| in_v4(ip, network, prefix))
}

/// Ranges inside global unicast 2000::/3 that are nonetheless not public.
const NON_PUBLIC_V6: &[([u16; 8], u32)] = &[
    // IETF protocol assignments, Teredo (2001::/32) among them: refused whole, since a
    // webhook receiver has no business there.
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
    ([0x2001, 0x0db8, 0, 0, 0, 0, 0, 0], 32), // documentation
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),      // documentation (RFC 9637)
];

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    // Everything outside 2000::/3 is special: unspecified, loopback, discard-only 100::/64,
    // local-use NAT64 64:ff9b:1::/48, SRv6 5f00::/16, unique local fc00::/7, link-local
    // fe80::/10, site-local fec0::/10, multicast ff00::/8, and the unallocated rest.
    in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3)
        && !NON_PUBLIC_V6
            .iter()
            .any(|&(network, prefix)| in_v6(ip, network, prefix))
}

/// The IPv4 address an IPv6 address stands for, where the network would route it to one:
/// IPv4-mapped `::ffff:a.b.c.d`, the deprecated IPv4-compatible `::a.b.c.d` (which also
/// covers `::` and `::1`, whose 0.0.0.0/8 counterparts are refused), NAT64 `64:ff9b::/96`
/// and 6to4 `2002:AABB:CCDD::/48`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    // The low 32 bits, by construction within u32.
    let low = Ipv4Addr::from(u32::try_from(bits & 0xffff_ffff).ok()?);
    if in_v6(ip, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96)
        || in_v6(ip, [0, 0, 0, 0, 0, 0, 0, 0], 96)
        || in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96)
    {
        return Some(low);
    }
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return Some(Ipv4Addr::from(
            u32::try_from((bits >> 80) & 0xffff_ffff).ok()?,
        ));
    }
    None
}

/// Checks a webhook URL before any delivery: http or https, no credentials, a host, and
/// unless `allow_private`, neither a non-public literal address nor `localhost`. Names are
/// checked again when resolved, by [`GuardedResolver`].
pub fn check_url(url: &Url, allow_private: bool) -> Result<(), AddressError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(AddressError::UnsupportedScheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AddressError::Credentials);
    }
    let host = url.host().ok_or(AddressError::MissingHost)?;
    if allow_private {
        return Ok(());
    }
    match host {
        Host::Ipv4(v4) if !is_public_v4(v4) => Err(AddressError::RefusedAddress(IpAddr::V4(v4))),
        Host::Ipv6(v6) if !is_public_v6(v6) => Err(AddressError::RefusedAddress(IpAddr::V6(v6))),
        Host::Domain(name) if is_localhost(name) => Err(AddressError::RefusedHost(name.to_owned())),
        _ => Ok(()),
    }
}

/// RFC 6761: `localhost` and its subdomains always mean the loopback interface.
fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// A reqwest resolver that drops non-public addresses, unless private ones are allowed, and
/// fails with [`AddressError::RefusedHost`] when none is left.
#[derive(Clone, Copy, Debug)]
pub struct GuardedResolver {
    allow_private: bool,
}

impl GuardedResolver {
    pub fn new(allow_private: bool) -> Self {
        Self { allow_private }
    }

    /// Resolves `host` with the system resolver and keeps the addresses deliveries may use.
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, ResolveError> {
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
            .await
            .map_err(|source| ResolveError::Lookup {
                host: host.to_owned(),
                source,
            })?
            .collect();
        if found.is_empty() {
            return Err(ResolveError::NoAddress(host.to_owned()));
        }
        let kept: Vec<SocketAddr> = found
            .into_iter()
            .filter(|address| self.allow_private || is_public(address.ip()))
            .collect();
        if kept.is_empty() {
            return Err(ResolveError::Refused(AddressError::RefusedHost(
                host.to_owned(),
            )));
        }
        Ok(kept)
    }
}

/// Why [`GuardedResolver`] found no address to deliver to.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("could not resolve {host}: {source}")]
    Lookup {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} has no address")]
    NoAddress(String),
    /// [`AddressError::find_in`] finds it through reqwest's error.
    #[error(transparent)]
    Refused(#[from] AddressError),
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = *self;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let kept = resolver.lookup(&host).await?;
            let addresses: Addrs = Box::new(kept.into_iter());
            Ok(addresses)
        })
    }
}

/// A reqwest client builder for deliveries: names resolve through [`GuardedResolver`];
/// redirects are not followed, since a redirect to a literal address would bypass the
/// resolver (and a receiver should answer the URL it registered); and system proxies are
/// ignored, since through a proxy the resolver would see only the proxy's name.
pub fn guarded_client_builder(allow_private: bool) -> reqwest::ClientBuilder {
    tidemark_carriers::tls::install_provider();
    reqwest::Client::builder()
        .dns_resolver(GuardedResolver::new(allow_private))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(text: &str) -> IpAddr {
        IpAddr::V4(text.parse().expect("IPv4 address"))
    }

    fn v6(text: &str) -> IpAddr {
        IpAddr::V6(text.parse().expect("IPv6 address"))
    }

    fn url(text: &str) -> Url {
        Url::parse(text).expect("URL")
    }

    fn assert_refused(addresses: &[&str]) {
        for text in addresses {
            let ip: IpAddr = text.parse().expect("address");
            assert!(!is_public(ip), "{text} should be refused");
        }
    }

    fn assert_public(addresses: &[&str]) {
        for text in addresses {
            let ip: IpAddr = text.parse().expect("address");
            assert!(is_public(ip), "{text} should be public");
        }
    }

    #[test]
    fn ordinary_public_addresses_of_both_families_are_public() {
        assert_public(&[
            "8.8.8.8",
            "1.1.1.1",
            "35.222.62.171",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "2a00:1450:4001:800::200e",
        ]);
    }

    #[test]
    fn loopback_and_unspecified_addresses_are_refused() {
        assert_refused(&[
            "127.0.0.1",
            "127.255.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "::1",
            "::",
        ]);
    }

    #[test]
    fn private_ipv4_ranges_are_refused() {
        assert_refused(&[
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "192.168.255.255",
        ]);
    }

    #[test]
    fn link_local_addresses_of_both_families_are_refused() {
        assert_refused(&["169.254.169.254", "169.254.0.1", "fe80::1", "febf::1"]);
    }

    #[test]
    fn shared_address_space_for_carrier_grade_nat_is_refused() {
        assert_refused(&["100.64.0.1", "100.127.255.255"]);
    }

    #[test]
    fn documentation_benchmarking_and_protocol_ranges_are_refused() {
        assert_refused(&[
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
            "192.88.99.1",
            "2001:db8::1",
            "3fff::1",
        ]);
    }

    #[test]
    fn multicast_broadcast_and_reserved_addresses_are_refused() {
        assert_refused(&[
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "ff02::1",
            "ff0e::1",
        ]);
    }

    #[test]
    fn unique_local_site_local_and_other_non_global_ipv6_is_refused() {
        assert_refused(&[
            "fc00::1",
            "fd12:3456:789a::1",
            "fec0::1",
            "100::1",
            "64:ff9b:1::1",
            "5f00::1",
            "4000::1",
            "1000::1",
        ]);
    }

    #[test]
    fn teredo_and_other_ietf_ipv6_assignments_are_refused() {
        assert_refused(&[
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:1::1",
        ]);
    }

    #[test]
    fn ipv6_addresses_embedding_ipv4_are_judged_by_the_ipv4_address() {
        assert_refused(&[
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::192.168.1.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:c0a8:0101::1",
            "2002:7f00:0001::",
        ]);
        assert_public(&[
            "::ffff:8.8.8.8",
            "::8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:0808:0808::1",
        ]);
    }

    #[test]
    fn a_url_must_be_http_or_https_without_credentials_and_with_a_host() {
        assert_eq!(check_url(&url("https://example.com/hook"), false), Ok(()));
        assert_eq!(check_url(&url("http://example.com:8080/"), false), Ok(()));
        assert_eq!(
            check_url(&url("ftp://example.com/"), true),
            Err(AddressError::UnsupportedScheme("ftp".to_owned()))
        );
        assert_eq!(
            check_url(&url("file:///etc/passwd"), true),
            Err(AddressError::UnsupportedScheme("file".to_owned()))
        );
        assert_eq!(
            check_url(&url("https://user:pass@example.com/"), true),
            Err(AddressError::Credentials)
        );
        assert_eq!(
            check_url(&url("https://user@example.com/"), true),
            Err(AddressError::Credentials)
        );
    }

    #[test]
    fn a_url_with_a_non_public_literal_address_is_refused_unless_private_is_allowed() {
        for text in [
            "http://127.0.0.1:9000/",
            "http://[::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00::1]/",
        ] {
            let refused = check_url(&url(text), false);
            assert!(
                matches!(refused, Err(AddressError::RefusedAddress(_))),
                "{text}: {refused:?}"
            );
            assert_eq!(check_url(&url(text), true), Ok(()), "{text}");
        }
        assert_eq!(check_url(&url("https://[2606:4700::1111]/"), false), Ok(()));
    }

    #[test]
    fn numeric_spellings_of_loopback_are_normalised_and_refused() {
        for text in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
        ] {
            assert_eq!(
                check_url(&url(text), false),
                Err(AddressError::RefusedAddress(v4("127.0.0.1"))),
                "{text}"
            );
        }
    }

    #[test]
    fn localhost_names_are_refused_unless_private_is_allowed() {
        for text in [
            "http://localhost/",
            "http://LOCALHOST.:8080/",
            "http://api.localhost/",
        ] {
            assert!(
                matches!(
                    check_url(&url(text), false),
                    Err(AddressError::RefusedHost(_))
                ),
                "{text}"
            );
            assert_eq!(check_url(&url(text), true), Ok(()), "{text}");
        }
    }

    #[test]
    fn every_refusal_has_the_refused_address_code() {
        assert_eq!(
            AddressError::RefusedAddress(v6("::1")).code(),
            "refused_address"
        );
        assert_eq!(
            AddressError::RefusedHost("localhost".to_owned()).code(),
            "refused_address"
        );
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_only_to_loopback() {
        let refused = GuardedResolver::new(false).lookup("localhost").await;
        assert!(
            matches!(
                refused,
                Err(ResolveError::Refused(AddressError::RefusedHost(ref host))) if host == "localhost"
            ),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn the_resolver_keeps_private_addresses_when_they_are_allowed() {
        let kept = GuardedResolver::new(true)
            .lookup("localhost")
            .await
            .expect("localhost resolves");
        assert!(
            kept.iter().all(|address| address.ip().is_loopback()),
            "{kept:?}"
        );
        assert!(!kept.is_empty());
    }

    #[tokio::test]
    async fn a_delivery_to_a_private_name_fails_with_a_refusal_found_in_the_error_chain() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let client = guarded_client_builder(false).build().expect("client");

        let error = client
            .post(format!("http://localhost:{port}/hook"))
            .send()
            .await
            .expect_err("refused");

        assert_eq!(
            AddressError::find_in(&error),
            Some(&AddressError::RefusedHost("localhost".to_owned()))
        );
    }
}
