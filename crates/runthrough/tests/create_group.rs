// SPDX-License-Identifier: MIT OR Apache-2.0
//! `Comm::create_group` (`MPI_Comm_create_group`): collective over the group's members only,
//! the same outcome at every member (a communicator, or `ProcFailed` naming the same failed
//! member), bad input refused before anything is sent.

mod support;

use runthrough::{Error, Op, Result};
use support::{bounded, outcomes};

/// Two disjoint groups create their communicators at the same time, each without the other's
/// ranks calling anything: ranks follow the group's order, collectives and point-to-point work
/// on them, and a second creation with the same group and tag is a different communicator.
#[test]
fn disjoint_groups_create_their_communicators_without_the_others() {
    bounded(|| {
        let results = runthrough::local(5).run(|world| -> Result<()> {
            let odd_first = world.group().incl(&[4, 1, 3])?;
            let rest = world.group().incl(&[0, 2])?;
            let mine = if [4, 1, 3].contains(&world.rank()) {
                &odd_first
            } else {
                &rest
            };
            let comm = world
                .create_group(mine, 7)?
                .expect("a member gets a communicator");
            let order: &[u32] = if mine.size() == 3 {
                &[4, 1, 3]
            } else {
                &[0, 2]
            };
            let expected_rank = order.iter().position(|&w| w == world.rank()).unwrap() as u32;
            assert_eq!((comm.rank(), comm.size()), (expected_rank, mine.size()));
            let mut sum = [0u32];
            comm.all_reduce(&[world.rank()], &mut sum, Op::Sum)?;
            assert_eq!(sum[0], order.iter().sum::<u32>());
            let again = world.create_group(mine, 7)?.unwrap();
            let next = (comm.rank() + 1) % comm.size();
            let prev = (comm.rank() + comm.size() - 1) % comm.size();
            // The same tag on both communicators: each message stays on its own.
            comm.send(&[1u8], next, 0)?;
            again.send(&[2u8], next, 0)?;
            let (mut a, mut b) = ([0u8], [0u8]);
            again.recv(&mut b, prev, 0)?;
            comm.recv(&mut a, prev, 0)?;
            assert_eq!((a, b), ([1], [2]));
            // A process outside the group that calls gets no communicator.
            let outsider = world.group().incl(&[(world.rank() + 1) % 5])?;
            assert!(world.create_group(&outsider, 9)?.is_none());
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// A member dead before the call: every other member gets `ProcFailed` naming it (the same
/// outcome everywhere), and a group of the survivors is created after.
#[test]
fn a_dead_member_fails_the_creation_at_every_member() {
    bounded(|| {
        let results = runthrough::local(4)
            .kill_at_operation(2, 1)
            .run(|world| -> Result<()> {
                let group = world.group().incl(&[0, 1, 2])?;
                if world.rank() == 2 {
                    world.barrier()?; // killed here
                    return Ok(());
                }
                if world.rank() == 3 {
                    return Ok(());
                }
                assert_eq!(
                    world.create_group(&group, 1).err(),
                    Some(Error::ProcFailed { rank: 2 })
                );
                let survivors = world.group().incl(&[0, 1])?;
                let comm = world.create_group(&survivors, 1)?.unwrap();
                comm.barrier()?;
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// Bad input: a negative tag, a group with a process outside the communicator.
#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| -> Result<()> {
            let everyone = world.group();
            assert!(matches!(
                world.create_group(&everyone, -1),
                Err(Error::Tag { .. })
            ));
            let pair = world.split(Some(u32::from(world.rank() < 2)), 0)?.unwrap();
            if world.rank() < 2 {
                assert!(matches!(
                    pair.create_group(&everyone, 0),
                    Err(Error::Argument { .. })
                ));
            }
            Ok(())
        });
        outcomes(results, &[]);
    });
}
