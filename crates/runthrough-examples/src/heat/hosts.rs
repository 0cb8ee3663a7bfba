// SPDX-License-Identifier: MIT OR Apache-2.0
//! Which host a rank runs on, as the solver learns it: each rank names its own host with a
//! [`host_key`], and the ranks exchange their keys (an all-gather) in the first pass of the
//! main loop, whose `validate_global` says whether every survivor got them all (a pass that
//! meets a failure is redone, the exchange with it, as a step is).
//!
//! A host is what fails as a whole: the machine, or the container or emulated host (a network
//! and UTS namespace) that a launcher treats as a node. So the key is the hostname (per UTS
//! namespace: what `srun` nodes and `mpiexec -hosts` entries are) together with the kernel's
//! boot id (so two machines that share a hostname, such as `localhost`, still differ). Threads
//! of one process, and processes of one `rtrun` job, are on one host.

use crate::checksum::fnv1a;

/// This host's key: FNV-1a over `HOSTNAME/BOOT_ID` (either part empty when unreadable).
pub fn host_key() -> u64 {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|text| text.trim().to_string())
            .unwrap_or_default()
    };
    let name = format!(
        "{}/{}",
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id")
    );
    key_of(&name)
}

/// The key of a host named `name` (for host maps given by hand, in tests).
pub fn key_of(name: &str) -> u64 {
    fnv1a(name.bytes().map(u64::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_host_one_key_and_names_differ() {
        assert_eq!(host_key(), host_key());
        assert_ne!(key_of("h1"), key_of("h2"));
    }
}
