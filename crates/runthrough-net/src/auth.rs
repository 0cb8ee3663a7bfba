// SPDX-License-Identifier: MIT OR Apache-2.0
//! Connection authentication: HMAC-SHA256 challenge-response over the job secret.
//!
//! Each side of a connection sends a fresh random nonce and proves it holds the secret with a
//! MAC over the other side's nonce, a label naming its role, and both ranks. The secret itself is
//! never sent, a MAC seen on one connection is useless on another (the nonces differ), and the
//! two roles' MACs differ (the labels), so neither can be reflected.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Length of a MAC or a nonce in the handshake (HMAC-SHA256): the size of the handshake
/// frames' fields in `runthrough_core::wire`.
pub const TOKEN: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// A job secret.
pub type Secret = [u8; TOKEN];

/// Which side of a handshake a MAC proves.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// The rank that accepted the connection.
    Acceptor,
    /// The rank that connected.
    Connector,
    /// A rank registering with its launcher.
    Registration,
}

impl Role {
    fn label(self) -> &'static [u8] {
        match self {
            Role::Acceptor => b"runthrough/1 accept",
            Role::Connector => b"runthrough/1 connect",
            Role::Registration => b"runthrough/1 register",
        }
    }
}

fn keyed(secret: &Secret, role: Role, nonce: &[u8], context: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(role.label());
    mac.update(&(nonce.len() as u32).to_le_bytes());
    mac.update(nonce);
    mac.update(context);
    mac
}

/// The MAC that proves `role` over the peer's `nonce` and the `context` (ranks, address).
pub fn prove(secret: &Secret, role: Role, nonce: &[u8], context: &[u8]) -> [u8; TOKEN] {
    keyed(secret, role, nonce, context)
        .finalize()
        .into_bytes()
        .into()
}

/// Whether `mac` is the proof of `role` (compared in constant time).
pub fn verify(secret: &Secret, role: Role, nonce: &[u8], context: &[u8], mac: &[u8]) -> bool {
    keyed(secret, role, nonce, context)
        .verify_slice(mac)
        .is_ok()
}

/// A fresh random nonce or secret.
pub fn random_token() -> [u8; TOKEN] {
    let mut token = [0u8; TOKEN];
    getrandom::getrandom(&mut token).expect("the operating system's random source works");
    token
}

/// The context of a rank-to-rank handshake: both ranks, the connecting one first.
pub fn pair(connector: u32, acceptor: u32) -> [u8; 8] {
    let mut c = [0u8; 8];
    c[..4].copy_from_slice(&connector.to_le_bytes());
    c[4..].copy_from_slice(&acceptor.to_le_bytes());
    c
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses hex into bytes, as many as it holds.
pub fn unhex_vec(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// Parses hex into exactly `N` bytes.
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_verify_only_with_the_same_secret_role_nonce_and_ranks() {
        let secret = random_token();
        let nonce = random_token();
        let mac = prove(&secret, Role::Acceptor, &nonce, &pair(1, 2));
        assert!(verify(&secret, Role::Acceptor, &nonce, &pair(1, 2), &mac));
        assert!(!verify(&secret, Role::Connector, &nonce, &pair(1, 2), &mac));
        assert!(!verify(&secret, Role::Acceptor, &nonce, &pair(2, 1), &mac));
        assert!(!verify(
            &random_token(),
            Role::Acceptor,
            &nonce,
            &pair(1, 2),
            &mac
        ));
        assert!(!verify(
            &secret,
            Role::Acceptor,
            &random_token(),
            &pair(1, 2),
            &mac
        ));
    }

    #[test]
    fn hex_roundtrips_and_rejects_bad_input() {
        let t = random_token();
        assert_eq!(unhex::<TOKEN>(&hex(&t)), Some(t));
        assert_eq!(unhex::<2>("zz00"), None);
        assert_eq!(unhex::<2>("000"), None);
        assert_eq!(unhex::<2>("é0"), None);
    }
}
